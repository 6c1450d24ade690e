"""`process_pending`: parse the output texts that are not in the parse cache yet, and store them."""

from __future__ import annotations

import sys
import time

from srlens.loaders.store import utc_now
from srlens.processing.cache import CORPUS_LANGUAGES_SQL, FLUSH_TEXTS, OUTPUT_TEXTS_SQL, Rows, ensure_cache_schema
from srlens.processing.models import MAX_WORDS_ENV, ProcessingError, max_words, resolve_models, spec_id
from srlens.processing.parse import load_pipeline, parse_batch, split_words, torch_threads


def _log(progress, message):
    if progress:
        print(f"srlens: {message}", file=sys.stderr, flush=True)


def process_pending(con, model_dir=None, batch_size=32, progress=True, limit=None) -> dict:
    """Parse every output text not yet in the cache for its language's current processor.

    `con` is a read-write DuckDB connection to a warehouse with the raw schema,
    not inside a transaction (each bulk write is its own transaction, so an
    interrupted run keeps what it finished). The models of every language
    needed are found before anything is parsed. `limit`: the longest text parsed
    whole (default max_words()). Returns
    {"texts_parsed", "texts_cached", "words_parsed": totals,
     "languages": {lang: {"processor", "texts_parsed", "texts_cached", "words_parsed",
                          "texts_chunked", "pipeline_loaded", "load_seconds", "parse_seconds"}}}.
    """
    limit = limit or max_words()
    ensure_cache_schema(con)
    needed = con.execute(f"""
        select language, count(*) from ({OUTPUT_TEXTS_SQL}) group by language order by language
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
            from raw.submissions s join ({CORPUS_LANGUAGES_SQL}) t on t.corpus = s.corpus
            where s.format <> 'conllu' group by t.language""").fetchall()
        )
        others = "".join(f" Language '{lang}' (corpora {corpora.get(lang)}) lacks models too." for lang in problems[1:])
        try:
            needed_by = f" (needed by the text runs of corpora {corpora.get(problems[0])})"
            resolve_models(problems[0], model_dir, needed_by)
        except ProcessingError as e:
            raise ProcessingError(f"{e}{others}") from None

    result = {"texts_parsed": 0, "texts_cached": 0, "words_parsed": 0, "languages": {}}
    for language, total in needed:
        spec = specs[language]
        processor = spec_id(spec, limit)
        pending = con.execute(
            f"""
            select text, sha256(text) as text_hash from ({OUTPUT_TEXTS_SQL}) d
            where d.language = ? and not exists (
                select 1 from cache.parsed_texts p where p.processor = ? and p.text_hash = sha256(d.text))
            order by length(text), text
        """,
            [language, processor],
        ).fetchall()
        stats = {
            "processor": processor,
            "texts_parsed": 0,
            "texts_cached": total - len(pending),
            "words_parsed": 0,
            "texts_chunked": 0,
            "pipeline_loaded": False,
            "load_seconds": 0.0,
            "parse_seconds": 0.0,
        }
        result["languages"][language] = stats
        result["texts_cached"] += stats["texts_cached"]
        if not pending:
            continue
        _log(
            progress,
            f"{language}: {len(pending)} texts to parse with {processor} "
            f"({stats['texts_cached']} already cached); loading models from {spec.root}",
        )
        stats.update(_run(con, spec, processor, pending, batch_size, progress, limit))
        if stats["texts_chunked"]:
            _log(
                progress,
                f"{language}: {stats['texts_chunked']} texts longer than {limit} words were parsed "
                f"in chunks of at most {limit} words (${MAX_WORDS_ENV})",
            )
        result["texts_parsed"] += stats["texts_parsed"]
        result["words_parsed"] += stats["words_parsed"]
    return result


def _run(con, spec, processor, pending, batch_size, progress, limit):
    import torch  # noqa: PLC0415
    from tqdm import tqdm  # noqa: PLC0415

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(torch_threads())
    try:
        started = time.perf_counter()
        nlp = load_pipeline(spec)
        load_seconds = time.perf_counter() - started
        started = time.perf_counter()
        # Documents to parse: each text whole, or its chunks in order (bounded memory, see the docstring).
        pieces = [(k, piece) for k, (text, _) in enumerate(pending) for piece in split_words(text, limit)]
        rows, docs_of, done, words, chunked = Rows(), {}, 0, 0, 0
        step = max(1, batch_size)
        with tqdm(
            total=len(pending),
            desc=f"stanza {spec.language}",
            unit="text",
            file=sys.stderr,
            disable=not progress,
            dynamic_ncols=True,
        ) as bar:
            for i in range(0, len(pieces), step):
                batch = pieces[i : i + step]
                for (k, _), doc in zip(batch, parse_batch(nlp, [piece for _, piece in batch], spec.language)):
                    docs_of.setdefault(k, []).append(doc)
                # The texts whose last piece is parsed now.
                complete = pieces[i + step][0] if i + step < len(pieces) else len(pending)
                parsed_at = utc_now()
                for k in range(done, complete):
                    text, text_hash = pending[k]
                    docs = docs_of.pop(k)
                    chunked += len(docs) > 1
                    words += rows.add(text_hash, processor, spec.language, text, docs, parsed_at)
                bar.update(complete - done)
                done = complete
                if len(rows) >= FLUSH_TEXTS:
                    rows.flush(con)
            rows.flush(con)
        return {
            "texts_parsed": done,
            "words_parsed": words,
            "texts_chunked": chunked,
            "pipeline_loaded": True,
            "load_seconds": load_seconds,
            "parse_seconds": time.perf_counter() - started,
        }
    finally:
        torch.set_num_threads(previous_threads)
