"""The parse cache: two tables in the warehouse's schema `cache` that dbt models read.

- cache.parsed_texts: one row per (text_hash, processor): the text, its word
  and sentence counts.
- cache.parsed_words: one row per syntactic word. A text that stanza splits
  into several sentences is flattened: word_idx numbers the words 1..n across
  the whole text, heads are renumbered accordingly (each sentence's root keeps
  head 0), token_idx is the 1-based surface token a word belongs to (the words
  of a multiword token such as "don't" -> do + n't share it). Absent lemma and
  feats are NULL.

text_hash is sha256 over the text's UTF-8 bytes in hex, i.e. DuckDB's
`sha256(text)`, so models join `raw.outputs` on `sha256(o.text) = text_hash`.
An output whose text is NULL (missing), '' or only spaces has no parse.
"""

from __future__ import annotations

import pyarrow as pa

from srlens.loaders.store import insert_columns, transaction
from srlens.processing.parse import join_pieces

# Rows are written to the cache every this many texts (each write one transaction).
FLUSH_TEXTS = 2048

CACHE_SCHEMA_SQL = """
create schema if not exists cache;

-- One row per distinct output text and processor (the processor id includes the language).
create table if not exists cache.parsed_texts (
    text_hash  varchar not null,   -- sha256(text), hex, as DuckDB's sha256()
    processor  varchar not null,   -- e.g. stanza-1.15.0/en/3f2a9c1b
    language   varchar not null,
    text       varchar not null,
    words      integer not null,   -- syntactic words
    sentences  integer not null,   -- sentences stanza found in the text
    parsed_at  timestamp not null,
    chunks     integer not null default 1,  -- > 1: longer than the processor's max_words, parsed in chunks
    primary key (text_hash, processor)
);
-- A cache written before texts were chunked: every text was parsed whole.
alter table cache.parsed_texts add column if not exists chunks integer default 1;

-- One row per syntactic word of a parsed text, sentences flattened.
create table if not exists cache.parsed_words (
    text_hash  varchar not null,
    processor  varchar not null,
    word_idx   integer not null,   -- 1..n across the whole text
    token_idx  integer not null,   -- 1-based surface token (shared by a multiword token's words)
    form       varchar not null,
    lemma      varchar,
    upos       varchar,
    xpos       varchar,
    feats      varchar,
    head       integer,            -- word_idx of the head, 0 for each sentence's root
    deprel     varchar
);
"""

TEXTS_SCHEMA = pa.schema(
    [
        ("text_hash", pa.string()),
        ("processor", pa.string()),
        ("language", pa.string()),
        ("text", pa.string()),
        ("words", pa.int32()),
        ("sentences", pa.int32()),
        ("parsed_at", pa.timestamp("us")),
        ("chunks", pa.int32()),
    ]
)
WORDS_SCHEMA = pa.schema(
    [
        ("text_hash", pa.string()),
        ("processor", pa.string()),
        ("word_idx", pa.int32()),
        ("token_idx", pa.int32()),
        ("form", pa.string()),
        ("lemma", pa.string()),
        ("upos", pa.string()),
        ("xpos", pa.string()),
        ("feats", pa.string()),
        ("head", pa.int32()),
        ("deprel", pa.string()),
    ]
)

# The language of every corpus: treebanks and reference-free corpora (load-outputs --no-reference).
CORPUS_LANGUAGES_SQL = (
    "select corpus, language from raw.treebank_files union all select corpus, language from raw.reference_free_corpora"
)

# The texts to parse: outputs of text and sr runs, with their corpus's language.
OUTPUT_TEXTS_SQL = f"""
    select distinct t.language, o.text
    from raw.outputs o
    join raw.submissions s on s.submission_id = o.submission_id
    join ({CORPUS_LANGUAGES_SQL}) t on t.corpus = s.corpus
    where s.format <> 'conllu' and not o.is_missing and o.text is not null and trim(o.text) <> ''
"""

# The reference texts of text-reference corpora (srlens load-references): their trees are their parse,
# whatever processor the build uses for outputs.
REFERENCE_TEXTS_SQL = """
    select distinct t.language, s.text
    from raw.sentences s
    join raw.treebank_files t on t.corpus = s.corpus
    where t.reference = 'text' and s.text is not null and trim(s.text) <> ''
"""

# Every text a stanza build parses: outputs and references (one cache: a run that copies its reference
# is parsed once).
PARSED_TEXTS_SQL = f"select * from ({OUTPUT_TEXTS_SQL}) union select * from ({REFERENCE_TEXTS_SQL})"


def texts_sql(references_only=False):
    """The texts to parse: every text of a stanza build, or the reference texts only (an aligned build)."""
    return REFERENCE_TEXTS_SQL if references_only else PARSED_TEXTS_SQL


def ensure_cache_schema(con) -> None:
    """Create schema `cache` with parsed_texts and parsed_words if they are missing."""
    con.execute(CACHE_SCHEMA_SQL)


def pending_texts(con, language, processor, references_only=False):
    """[(text, text_hash)] of `language` not cached under `processor`, shortest first (stanza is
    fastest on batches of texts of about one length). The cache may be missing (a read-only
    connection to a warehouse never built): then every text is pending."""
    cached = con.execute("""select count(*) from duckdb_tables() where database_name = current_database()
                            and schema_name = 'cache' and table_name = 'parsed_texts'""").fetchone()[0]
    not_cached = "not exists (select 1 from cache.parsed_texts p where p.processor = ? and p.text_hash = d.text_hash)"
    return con.execute(
        f"""
        select text, text_hash from (select *, sha256(text) as text_hash from ({texts_sql(references_only)})) d
        where d.language = ? and {not_cached if cached else "?::varchar is not null"}
        order by length(text), text
    """,
        [language, processor],
    ).fetchall()


class Rows:
    """Cache rows gathered in columns, written in bulk (store.insert_columns)."""

    def __init__(self):
        self.texts = {name: [] for name in TEXTS_SCHEMA.names}
        self.words = {name: [] for name in WORDS_SCHEMA.names}

    def __len__(self):
        return len(self.texts["text_hash"])

    def add(self, text_hash, processor, language, text, parts, parsed_at):
        """One text's rows; `parts`: the piece_rows of each chunk it was parsed in."""
        n_words, n_sentences, rows = join_pieces(parts)
        for name, value in zip(
            TEXTS_SCHEMA.names, (text_hash, processor, language, text, n_words, n_sentences, parsed_at, len(parts))
        ):
            self.texts[name].append(value)
        w = self.words
        for row in rows:
            w["text_hash"].append(text_hash)
            w["processor"].append(processor)
            for name, value in zip(WORDS_SCHEMA.names[2:], row):
                w[name].append(value)
        return n_words

    def flush(self, con):
        if not len(self):
            return
        with transaction(con):
            insert_columns(con, "cache.parsed_words", self.words)
            insert_columns(con, "cache.parsed_texts", self.texts)
        self.__init__()
