"""`process_pending`: parse the output texts that are not in the parse cache yet, and store them."""

from __future__ import annotations

import sys
import time

from srlens.loaders.store import utc_now
from srlens.processing.cache import (
    CORPUS_LANGUAGES_SQL,
    FLUSH_TEXTS,
    REFERENCE_TEXTS_SQL,
    Rows,
    ensure_cache_schema,
    pending_texts,
    texts_sql,
)
from srlens.processing.models import MAX_WORDS_ENV, ProcessingError, max_words, resolve_models, spec_id
from srlens.processing.parse import Parser, default_workers, resolve_device, split_words


def _log(progress, message):
    if progress:
        print(f"srlens: {message}", file=sys.stderr, flush=True)


def process_pending(
    con, model_dir=None, batch_size=32, progress=True, limit=None, device="auto", workers=None, references_only=False
) -> dict:
    """Parse every output text and text reference (srlens load-references) not yet in the cache for its
    language's current processor; only the text references if `references_only` (an aligned build).

    `con` is a read-write DuckDB connection to a warehouse with the raw schema,
    not inside a transaction (each bulk write is its own transaction, so an
    interrupted run keeps what it finished). The models of every language
    needed are found before anything is parsed. `limit`: the longest text parsed
    whole (default max_words()). `device`: auto, cpu or cuda (resolve_device),
    looked at only when there is something to parse. `workers`: processes that
    parse at once (default: default_workers). Returns
    {"texts_parsed", "texts_cached", "words_parsed": totals, "device": cpu, cuda or None (nothing parsed),
     "languages": {lang: {"processor", "texts_parsed", "texts_cached", "words_parsed",
                          "texts_chunked", "pipeline_loaded", "load_seconds", "parse_seconds", "workers",
                          "references": whether the language has text references}}}.
    """
    limit = limit or max_words()
    ensure_cache_schema(con)
    specs, needed = language_models(con, model_dir, references_only)
    with_references = {
        lang for (lang,) in con.execute(f"select distinct language from ({REFERENCE_TEXTS_SQL})").fetchall()
    }
    result = {"texts_parsed": 0, "texts_cached": 0, "words_parsed": 0, "device": None, "languages": {}}
    for language, total in needed:
        spec = specs[language]
        processor = spec_id(spec, limit)
        pending = pending_texts(con, language, processor, references_only)
        stats = {
            "processor": processor,
            "references": language in with_references,
            "texts_parsed": 0,
            "texts_cached": total - len(pending),
            "words_parsed": 0,
            "texts_chunked": 0,
            "pipeline_loaded": False,
            "load_seconds": 0.0,
            "parse_seconds": 0.0,
            "workers": 0,
        }
        result["languages"][language] = stats
        result["texts_cached"] += stats["texts_cached"]
        if not pending:
            continue
        result["device"] = used = result["device"] or resolve_device(device)
        _log(
            progress,
            f"{language}: {len(pending)} texts to parse with {processor} on {used} "
            f"({stats['texts_cached']} already cached); loading models from {spec.root}",
        )
        flush = lambda rows: rows.flush(con)  # each flush one transaction
        stats.update(parse_into(flush, spec, processor, pending, batch_size, progress, limit, used, workers))
        if stats["texts_chunked"]:
            _log(
                progress,
                f"{language}: {stats['texts_chunked']} texts longer than {limit} words were parsed "
                f"in chunks of at most {limit} words (${MAX_WORDS_ENV})",
            )
        result["texts_parsed"] += stats["texts_parsed"]
        result["words_parsed"] += stats["words_parsed"]
    return result


def language_models(con, model_dir, references_only=False):
    """({language: ModelSpec}, [(language, distinct texts to parse)]) for every language with output
    text or text references; a language without models is a ProcessingError naming its corpora, before
    any parsing."""
    needed = con.execute(f"""
        select language, count(*) from ({texts_sql(references_only)}) group by language order by language
    """).fetchall()
    specs, problems = {}, []
    for language, _ in needed:
        try:
            specs[language] = resolve_models(language, model_dir)
        except ProcessingError:
            problems.append(language)
    if problems:  # again, now naming the corpora that need the models
        corpora = dict(
            con.execute(f"""
            select t.language, string_agg(distinct s.corpus, ', ' order by s.corpus)
            from (select corpus from raw.submissions where format <> 'conllu'
                  union select corpus from raw.treebank_files where reference = 'text') s
            join ({CORPUS_LANGUAGES_SQL}) t on t.corpus = s.corpus group by t.language""").fetchall()
        )
        others = "".join(f" Language '{lang}' (corpora {corpora.get(lang)}) lacks models too." for lang in problems[1:])
        try:
            needed_by = f" (needed by the text runs or text references of corpora {corpora.get(problems[0])})"
            resolve_models(problems[0], model_dir, needed_by)
        except ProcessingError as e:
            raise ProcessingError(f"{e}{others}") from None
    return specs, needed


def parse_into(flush, spec, processor, pending, batch_size, progress, limit, device, workers=None):
    """Parse `pending` [(text, text_hash)] (sorted by length) and hand the cache rows to `flush(rows)`
    every FLUSH_TEXTS texts and at the end; flush must empty the Rows it is given."""
    from tqdm import tqdm  # noqa: PLC0415

    started = time.perf_counter()
    # Documents to parse: each text whole, or its chunks in order (bounded memory, parse.py).
    pieces = [(k, piece) for k, (text, _) in enumerate(pending) for piece in split_words(text, limit)]
    step = max(1, batch_size)
    batches = [pieces[i : i + step] for i in range(0, len(pieces), step)]
    workers = min(workers or default_workers(device, len(pending)), len(batches))
    rows, parts_of, done, words, chunked = Rows(), {}, 0, 0, 0
    with (
        Parser(spec, device, workers) as parser,
        tqdm(
            total=len(pending),
            desc=f"stanza {spec.language}",
            unit="text",
            file=sys.stderr,
            disable=not progress,
            dynamic_ncols=True,
        ) as bar,
    ):
        parsed_batches = parser.parse([[piece for _, piece in batch] for batch in batches])
        for b, (batch, parsed) in enumerate(zip(batches, parsed_batches)):
            for (k, _), part in zip(batch, parsed):
                parts_of.setdefault(k, []).append(part)
            # The texts whose last piece is parsed now.
            complete = batches[b + 1][0][0] if b + 1 < len(batches) else len(pending)
            parsed_at = utc_now()
            for k in range(done, complete):
                text, text_hash = pending[k]
                parts = parts_of.pop(k)
                chunked += len(parts) > 1
                words += rows.add(text_hash, processor, spec.language, text, parts, parsed_at)
            bar.update(complete - done)
            done = complete
            if len(rows) >= FLUSH_TEXTS:
                flush(rows)
        flush(rows)
    return {
        "texts_parsed": done,
        "words_parsed": words,
        "texts_chunked": chunked,
        "pipeline_loaded": True,
        "load_seconds": parser.load_seconds,
        "parse_seconds": time.perf_counter() - started,
        "workers": workers,
    }
