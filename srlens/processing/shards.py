"""Parsing on other machines: `srlens parse --shard K/N` and `srlens load-parses`.

`parse_shard` opens the warehouse read-only, takes the output texts still pending
(as `srlens build` would parse them: every language, its current processor id),
keeps those of shard K of N, parses them and writes their cache rows to one
Parquet file. A text belongs to shard K when the first 16 hex digits of its
text_hash, as a number, are K-1 modulo N: a text's shard depends on nothing
else, so shards computed against different states of the warehouse never
overlap, and N shards cover every pending text. Any scheduler can run the N
commands anywhere the warehouse file and the models can be read (a SLURM array:
docs/building.md); each writes its file atomically (a temporary file, renamed).

The file holds one row per text: the columns of cache.parsed_texts, and
`parsed_words`, the text's rows of cache.parsed_words (without text_hash and
processor) as a list of structs. Its key-value metadata `srlens` names the
format, so that another Parquet file is refused rather than guessed at.

`load_parses` merges such files into the cache in one transaction: every file is
read whole with pyarrow (exactly the file named) and checked first (format,
processor ids, texts, each text's word rows set-based in SQL, one parse per
text across the files), any problem loads nothing, and a text already cached is
skipped, so loading a file twice leaves one copy. `parse_shard` writes only a
new file or a parse file, never the warehouse or one of its files.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from srlens.children import terminate_as_interrupt
from srlens.loaders.errors import printable
from srlens.loaders.store import is_warehouse_file, open_for_write, require_warehouse, stop_point, transaction
from srlens.processing.cache import PARSED_TEXTS_SQL, TEXTS_SCHEMA, WORDS_SCHEMA, ensure_cache_schema, pending_texts
from srlens.processing.models import MAX_WORDS_ENV, ProcessingError, max_words, require_stanza, spec_id
from srlens.processing.parse import resolve_device
from srlens.processing.pending import language_models, parse_into

FORMAT = "srlens-parse-cache-1"
WORD_FIELDS = WORDS_SCHEMA.names[2:]  # a word row without its text's key
PARSE_FILE_SCHEMA = TEXTS_SCHEMA.append(
    pa.field("parsed_words", pa.list_(pa.struct([WORDS_SCHEMA.field(name) for name in WORD_FIELDS])))
)


def in_shard(text_hash, shard, shards):
    return int(text_hash[:16], 16) % shards == shard - 1


def parse_shard(warehouse, shard, shards, out, model_dir=None, device="auto", batch_size=32, progress=True):
    """Parse shard `shard` of `shards` (1-based) of the pending texts into the Parquet file `out`;
    returns {"texts": parsed, "words": ..., "pending": texts pending in all shards, "device": ...}."""
    import duckdb  # noqa: PLC0415

    require_stanza("srlens parse")
    out = Path(out)
    check_out(out, warehouse)
    limit = max_words()
    con = duckdb.connect(str(require_warehouse(warehouse)), read_only=True)
    try:  # what to parse, then the file is closed: a long parse does not keep loads out
        specs, needed = language_models(con, model_dir)
        work = []
        for language, _ in needed:
            processor = spec_id(specs[language], limit)
            pending = pending_texts(con, language, processor)
            work.append((specs[language], processor, pending, [p for p in pending if in_shard(p[1], shard, shards)]))
    finally:
        con.close()
    result = {"texts": 0, "words": 0, "pending": sum(len(w[2]) for w in work), "device": None}
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    metadata = {"srlens": json.dumps({"format": FORMAT, "shard": f"{shard}/{shards}"})}
    try:
        with terminate_as_interrupt(), pq.ParquetWriter(temporary, PARSE_FILE_SCHEMA.with_metadata(metadata)) as writer:

            def flush(rows):
                if len(rows):
                    writer.write_table(_table(rows))
                    stop_point("shard")
                rows.__init__()

            for spec, processor, _, mine in work:
                if mine:
                    result["device"] = result["device"] or resolve_device(device)
                    stats = parse_into(flush, spec, processor, mine, batch_size, progress, limit, result["device"])
                    result["texts"] += stats["texts_parsed"]
                    result["words"] += stats["words_parsed"]
        os.replace(temporary, out)
    finally:
        temporary.unlink(missing_ok=True)
    return result


def _table(rows):
    """cache.Rows as a table of PARSE_FILE_SCHEMA: each text's word rows (in order) become its list."""
    texts = pa.Table.from_pydict(rows.texts, schema=TEXTS_SCHEMA)
    words = pa.StructArray.from_arrays(
        [pa.array(rows.words[name], WORDS_SCHEMA.field(name).type) for name in WORD_FIELDS],
        fields=list(PARSE_FILE_SCHEMA.field("parsed_words").type.value_type),
    )
    offsets = pa.array([0, *itertools.accumulate(rows.texts["words"])], pa.int32())
    return texts.append_column(PARSE_FILE_SCHEMA.field("parsed_words"), pa.ListArray.from_arrays(offsets, words))


def check_file(path):
    """The problem with `path` as a parse file, one line naming it, or None."""
    name = printable(str(path))
    try:
        schema = pq.read_schema(path)
    except FileNotFoundError:
        return f"{name}: no such file"
    except (OSError, pa.ArrowException) as e:
        return f"{name}: not a Parquet file ({printable(str(e).splitlines()[0])})"
    try:
        made = json.loads((schema.metadata or {}).get(b"srlens", b"{}")).get("format")
    except (ValueError, AttributeError):
        made = None
    if made != FORMAT or not schema.remove_metadata().equals(PARSE_FILE_SCHEMA):
        return f"{name}: not a parse file written by `srlens parse` (format {FORMAT}); nothing loaded"
    return None


def check_out(out, warehouse):
    """`srlens parse` writes `out` only if it is a new file or a parse file: never a folder, the warehouse
    or one of its files (by any name), nor another file of the user's."""
    name = printable(str(out))
    if out.name in ("", ".", "..") or out.is_dir():
        raise ProcessingError(f"{name}: is a folder; name the .parquet file to write")
    if not out.parent.is_dir():
        raise ProcessingError(f"{name}: the folder {printable(str(out.parent))} does not exist")
    if is_warehouse_file(out, warehouse):
        raise ProcessingError(f"{name}: is the warehouse {printable(str(warehouse))} or one of its files; name another")
    if out.exists() and check_file(out) is not None:
        raise ProcessingError(f"{name}: exists and is no parse file of `srlens parse`; name a new file or delete it")


def read_file(path):
    """The parse file `path` as an arrow table, with its 1-based row numbers (`row_no`).

    pyarrow, not DuckDB's read_parquet: that expands * ? [ ] in a name, and would load another file
    than the one checked."""
    problem = check_file(path)
    if problem:
        raise ProcessingError(problem)
    try:
        table = pq.ParquetFile(path).read()
    except (OSError, ValueError, pa.ArrowException) as e:
        raise ProcessingError(
            f"{printable(path)}: a damaged Parquet file ({printable(str(e).splitlines()[0])}); nothing loaded"
        ) from None
    return table.append_column("row_no", pa.array(range(1, table.num_rows + 1), pa.int64()))


def load_parses(warehouse, paths, model_dir=None):
    """Merge parse files into the cache, all or nothing; returns (texts added, texts already cached)."""
    import duckdb  # noqa: PLC0415

    require_stanza("srlens load-parses (it checks the files' processor ids)")
    tables = {str(Path(p)): None for p in paths}  # a file named twice is read once
    for path in tables:
        tables[path] = read_file(path)
    with open_for_write(warehouse) as con:
        specs, _ = language_models(con, model_dir)
        limit = max_words()
        expected = {language: spec_id(spec, limit) for language, spec in specs.items()}
        for path, table in tables.items():
            con.register("parse_file", table)
            try:
                _check_rows(con, path, expected)
            except duckdb.Error as e:  # what the checks did not foresee still names the file
                raise ProcessingError(
                    f"{printable(path)}: {printable(str(e).splitlines()[0])}; nothing loaded"
                ) from None
            con.unregister("parse_file")
        files = list(tables)
        con.register(
            "parse_files",
            pa.concat_tables(
                t.append_column("file_no", pa.array([i] * t.num_rows, pa.int32()))
                for i, t in enumerate(tables.values())
            ),
        )
        _check_agreement(con, files)
        with transaction(con):
            ensure_cache_schema(con)
            con.execute(
                """create temporary table new_parses as
                select * exclude (row_no, file_no) from parse_files p
                where not exists (select 1 from cache.parsed_texts c
                                  where c.text_hash = p.text_hash and c.processor = p.processor)
                qualify row_number() over (partition by text_hash, processor order by parsed_at) = 1"""
            )
            con.execute("""insert into cache.parsed_texts by name
                select * exclude (parsed_words) from new_parses""")
            words = ", ".join(f"w.{name}" for name in WORD_FIELDS)
            con.execute(f"""insert into cache.parsed_words by name
                select text_hash, processor, {words}
                from (select text_hash, processor, unnest(parsed_words) as w from new_parses)""")
            added = con.execute("select count(*) from new_parses").fetchall()[0][0]
            con.execute("drop table new_parses")
        distinct = "select count(*) from (select distinct text_hash, processor from parse_files)"
        total = con.execute(distinct).fetchall()[0][0]
        con.unregister("parse_files")
    return added, total - added


def _check_agreement(con, files):
    """The same text twice (in one file or two) must be the same parse; only parsed_at may differ."""
    clash = con.execute(
        """select count(*), any_value((a.file_no, a.row_no, b.file_no, b.row_no))
        from parse_files a join parse_files b
          on a.text_hash = b.text_hash and a.processor = b.processor
         and (a.file_no, a.row_no) < (b.file_no, b.row_no)
        where (a.language, a.text, a.words, a.sentences, a.chunks, a.parsed_words)
              is distinct from (b.language, b.text, b.words, b.sentences, b.chunks, b.parsed_words)"""
    ).fetchall()[0]
    if clash[0]:
        a_file, a_row, b_file, b_row = clash[1]
        raise ProcessingError(
            f"{printable(files[a_file])} row {a_row} and {printable(files[b_file])} row {b_row}: the same text "
            f"parsed differently ({clash[0]} such pairs); load the parses of one run of `srlens parse` only; "
            "nothing loaded"
        )


# Each text's word rows must form a parse: what a build would have written to the cache.
_MALFORMED_SQL = """
with w as (
    select row_no, words, generate_subscripts(parsed_words, 1) as i, unnest(parsed_words) as w from parse_file
), ordered as (
    select *, lag(w.token_idx) over (partition by row_no order by i) as previous_token from w
), per_text as (
    select row_no,
        bool_or(w.word_idx is distinct from i) as bad_word_idx,
        bool_or(w.head is null or w.head < 0 or w.head > words) as bad_head,
        bool_or(w.token_idx is null or w.token_idx < 1 or w.token_idx < previous_token) as bad_token_idx,
        bool_or(w.form is null) as no_form,
        count(*) filter (where w.head = 0) as roots
    from ordered group by row_no
), problems as (
    select p.row_no, p.text_hash, concat_ws('; ',
        case when p.text_hash is null or p.processor is null or p.language is null or p.text is null
                  or p.parsed_at is null then 'a required field is NULL' end,
        case when p.text_hash is distinct from sha256(p.text) then 'text_hash is not sha256(text)' end,
        case when p.words is null or p.words < 1 then 'words is not at least 1' end,
        case when p.words is distinct from len(p.parsed_words) then 'words is not the number of word rows' end,
        case when p.sentences is null or p.sentences < 1 then 'sentences is not at least 1' end,
        case when p.chunks is null or p.chunks < 1 then 'chunks is not at least 1' end,
        case when t.bad_word_idx then 'word_idx is not 1..words in order' end,
        case when t.bad_head then 'a head is not in 0..words' end,
        case when t.bad_token_idx then 'token_idx is not >= 1 and non-decreasing' end,
        case when t.no_form then 'a form is NULL' end,
        case when p.sentences is distinct from coalesce(t.roots, 0) then 'roots (head 0) are not one a sentence' end
    ) as problem
    from parse_file p left join per_text t using (row_no)
)
select count(*), arg_min((row_no, text_hash, problem), row_no) from problems where problem <> ''
"""


def _check_rows(con, path, expected):
    """One line naming `path` if its rows are not what this warehouse would parse."""
    name = printable(path)
    for language, processor, texts in con.execute(
        "select language, processor, count(*) from parse_file group by all order by all"
    ).fetchall():
        if language not in expected:
            raise ProcessingError(
                f"{name}: {texts} texts of language {printable(str(language))!r}, of which this warehouse has "
                "no output text to parse; nothing loaded"
            )
        if processor != expected[language]:
            raise ProcessingError(
                f"{name}: parsed by {printable(str(processor))}, but this warehouse parses {language} with "
                f"{expected[language]} (other models, stanza version or ${MAX_WORDS_ENV}); nothing loaded"
            )
    bad, first = con.execute(_MALFORMED_SQL).fetchall()[0]
    if bad:
        row, text_hash, problem = first
        raise ProcessingError(
            f"{name}: {bad} malformed texts, e.g. row {row} (text_hash {printable(str(text_hash))[:12]}): "
            f"{problem}; nothing loaded"
        )
    foreign, example = con.execute(
        f"""select count(*), any_value(text) from parse_file p
        where not exists (select 1 from ({PARSED_TEXTS_SQL}) o where o.language = p.language and o.text = p.text)""",
    ).fetchall()[0]
    if foreign:
        raise ProcessingError(
            f"{name}: {foreign} texts that are no output text of this warehouse's text or sr runs nor a text "
            "reference "
            f"(e.g. {printable(str(example))[:80]!r}); nothing loaded"
        )
