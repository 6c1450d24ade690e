"""Parsing on other machines: `srlens parse --shard K/N` and `srlens load-parses`.

`parse_shard` opens the warehouse read-only, takes the output texts still pending
(as `srlens build` would parse them: every language, its current processor id),
keeps those of shard K of N, parses them and writes their cache rows to one
Parquet file. A text belongs to shard K when the first 16 hex digits of its
text_hash, as a number, are K-1 modulo N: a text's shard depends on nothing
else, so shards computed against different states of the warehouse never
overlap, and N shards cover every pending text. Any scheduler can run the N
commands anywhere the warehouse file and the models can be read (a SLURM array:
README); each writes its file atomically (a temporary file, renamed).

The file holds one row per text: the columns of cache.parsed_texts, and
`parsed_words`, the text's rows of cache.parsed_words (without text_hash and
processor) as a list of structs. Its key-value metadata `srlens` names the
format, so that another Parquet file is refused rather than guessed at.

`load_parses` merges such files into the cache in one transaction: every file is
checked first (format, processor ids, texts), any problem loads nothing, and a
text already cached is skipped, so loading a file twice leaves one copy.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from srlens.loaders.errors import printable
from srlens.loaders.store import open_for_write, require_warehouse, transaction
from srlens.processing.cache import OUTPUT_TEXTS_SQL, TEXTS_SCHEMA, WORDS_SCHEMA, ensure_cache_schema, pending_texts
from srlens.processing.models import MAX_WORDS_ENV, ProcessingError, max_words, spec_id
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

    out = Path(out)
    if not out.parent.is_dir():
        raise ProcessingError(f"{out}: the folder {out.parent} does not exist")
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
        with pq.ParquetWriter(temporary, PARSE_FILE_SCHEMA.with_metadata(metadata)) as writer:

            def flush(rows):
                if len(rows):
                    writer.write_table(_table(rows))
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


def load_parses(warehouse, paths, model_dir=None):
    """Merge parse files into the cache, all or nothing; returns (texts added, texts already cached)."""
    paths = [str(Path(p)) for p in paths]
    for path in paths:
        problem = check_file(path)
        if problem:
            raise ProcessingError(problem)
    with open_for_write(warehouse) as con:
        specs, _ = language_models(con, model_dir)
        limit = max_words()
        expected = {language: spec_id(spec, limit) for language, spec in specs.items()}
        for path in paths:
            _check_rows(con, path, expected)
        with transaction(con):
            ensure_cache_schema(con)
            con.execute(
                """create temporary table new_parses as
                select * from read_parquet(?) p
                where not exists (select 1 from cache.parsed_texts c
                                  where c.text_hash = p.text_hash and c.processor = p.processor)
                qualify row_number() over (partition by text_hash, processor order by parsed_at) = 1""",
                [paths],
            )
            con.execute("""insert into cache.parsed_texts by name
                select * exclude (parsed_words) from new_parses""")
            words = ", ".join(f"w.{name}" for name in WORD_FIELDS)
            con.execute(f"""insert into cache.parsed_words by name
                select text_hash, processor, {words}
                from (select text_hash, processor, unnest(parsed_words) as w from new_parses)""")
            added = con.execute("select count(*) from new_parses").fetchone()[0]
            con.execute("drop table new_parses")
        total = con.execute(
            "select count(*) from (select distinct text_hash, processor from read_parquet(?))", [paths]
        ).fetchone()[0]
    return added, total - added


def _check_rows(con, path, expected):
    """One line naming `path` if its rows are not what this warehouse would parse."""
    name = printable(path)
    for language, processor, texts in con.execute(
        "select language, processor, count(*) from read_parquet(?) group by all order by all", [path]
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
    bad, example = con.execute(
        """select count(*), any_value(text) from read_parquet(?) p
        where text_hash is distinct from sha256(text) or words is distinct from len(parsed_words)
           or processor is null or language is null or sentences is null or chunks is null""",
        [path],
    ).fetchone()
    if bad:
        example = printable(str(example))[:80]
        raise ProcessingError(f"{name}: {bad} malformed rows (e.g. text {example!r}); nothing loaded")
    foreign, example = con.execute(
        f"""select count(*), any_value(text) from read_parquet(?) p
        where not exists (select 1 from ({OUTPUT_TEXTS_SQL}) o where o.language = p.language and o.text = p.text)""",
        [path],
    ).fetchone()
    if foreign:
        raise ProcessingError(
            f"{name}: {foreign} texts that are no output text of this warehouse's text or sr runs "
            f"(e.g. {printable(str(example))[:80]!r}); nothing loaded"
        )
