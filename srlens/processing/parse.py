"""Running stanza: the pipeline, its torch threads, and a Document turned into cache rows.

Long outputs: stanza's memory grows with the square of a sentence's length
(about 0.1 GB for 250 words, 0.35 GB for 500, more than 6 GB for 2,000; a
looping system writes such outputs with no sentence end). An output of more
than `max_words` whitespace-separated tokens ($SRLENS_STANZA_MAX_WORDS,
default 500) is cut into chunks of at most that many tokens, each parsed as its
own document and flattened as above: its words are all scored, and the cut
splits its tree (each chunk has its own roots). cache.parsed_texts.chunks says
how many chunks a text was parsed in (1: whole); sentence_scores shows it as
processing_status 'chunked'. The limit is part of the processor id, so changing
it parses the texts again. docs/definitions.md says why chunks rather than NULL
scores; bench/long_outputs.py measures the memory.

Speed (bench/stanza_speed.py, 2 CPU cores, shared English models): texts are
sorted by length and parsed `batch_size` (32) at a time with
`Pipeline.bulk_process`, on one torch thread by default (see torch_threads):
about 50-60 texts/s, 700-1000 words/s, plus about 2.5 s to import stanza and
2.5 s to load the pipeline. That was the fastest of the ways tried: one call
per text (~19 texts/s), bulk batches in text order (~43), sorted batches of
128 or all at once (about the same as 32), texts joined into one document by
blank lines (~38).
"""

from __future__ import annotations

import os
import re
import tempfile

from srlens.processing.models import PROCESSORS, ModelSpec, ProcessingError, how_to_get_models, stanza_version

THREADS_ENV = "SRLENS_TORCH_THREADS"


def split_words(text, limit):
    """`text` cut into pieces of at most `limit` whitespace-separated tokens (the text itself if shorter)."""
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    if len(spans) <= limit:
        return [text]
    return [text[spans[i][0] : spans[min(i + limit, len(spans)) - 1][1]] for i in range(0, len(spans), limit)]


def torch_threads():
    """Half the cores available (1 on 2 cores), or $SRLENS_TORCH_THREADS.

    Measured on 2 cores (bench/stanza_speed.py --compare): on an idle machine 2
    threads parse at most ~20% faster than 1, but when other processes keep the
    cores busy, 2 threads are 10 to 20 times slower than 1 (torch's OpenMP
    threads wait for each other at every small operation); 1 thread degrades
    gracefully. Leaving a core free is the robust choice.
    """
    if os.environ.get(THREADS_ENV):
        return max(1, int(os.environ[THREADS_ENV]))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, cores // 2)


def load_pipeline(spec: ModelSpec):
    """A CPU stanza pipeline for `spec`; download_method=None, so it never touches the network."""
    import stanza  # noqa: PLC0415 (heavy: torch)

    common = dict(download_method=None, device="cpu", logging_level="ERROR")
    try:
        if spec.layout == "stanza":
            return stanza.Pipeline(spec.stanza_lang, dir=str(spec.root), processors=dict(spec.packages), **common)
        roles = {role: str(path) for role, _, path in spec.files}
        kwargs = {f"{role}_model_path": roles[role] for role in PROCESSORS if role in roles}
        for role in ("pos", "depparse"):
            kwargs[f"{role}_pretrain_path"] = roles.get("pretrain")
        for role in ("pos", "lemma", "depparse"):
            for lm in ("forward_charlm", "backward_charlm"):
                if lm in roles:
                    kwargs[f"{role}_{lm}_path"] = roles[lm]
        processors = ",".join(p for p in PROCESSORS if p in roles)
        # An empty resources file: stanza then takes every model from the paths given.
        fd, resources = tempfile.mkstemp(prefix="srlens-stanza-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write("{}")
            return stanza.Pipeline(
                spec.language,
                processors=processors,
                resources_filepath=resources,
                allow_unknown_language=True,
                **kwargs,
                **common,
            )
        finally:
            os.unlink(resources)
    except Exception as e:
        raise ProcessingError(
            f"Could not load the stanza models for language '{spec.language}' from "
            f"{spec.root}: {type(e).__name__}: {e}. The files may be damaged or made "
            f"for another stanza version (this is stanza {stanza_version()}). "
            f"{how_to_get_models(spec.language)}"
        ) from e


def doc_rows(doc):
    """(words, sentences, word rows) of one stanza Document (or a list of them: the chunks of one
    text, in order), sentences flattened.

    Word rows are tuples (word_idx, token_idx, form, lemma, upos, xpos, feats, head, deprel).
    """
    docs = doc if isinstance(doc, list) else [doc]
    sentences = [sentence for d in docs for sentence in d.sentences]
    rows, word_offset, token_offset = [], 0, 0
    for sentence in sentences:
        for t, token in enumerate(sentence.tokens, start=1):
            for word in token.words:
                head = word.head
                rows.append(
                    (
                        word_offset + word.id,
                        token_offset + t,
                        word.text,
                        word.lemma,
                        word.upos,
                        word.xpos,
                        word.feats,
                        None if head is None else (head and word_offset + head),
                        word.deprel,
                    )
                )
        word_offset += len(sentence.words)
        token_offset += len(sentence.tokens)
    return word_offset, len(sentences), rows


def parse_batch(nlp, texts, language):
    """stanza Documents for `texts`; a failure names the text that caused it."""
    try:
        return nlp.bulk_process(list(texts))
    except Exception as batch_error:
        for text in texts:
            try:
                nlp.bulk_process([text])
            except Exception as e:
                raise ProcessingError(
                    f"stanza failed on the {language} output text {text[:200]!r}: {type(e).__name__}: {e}"
                ) from e
        raise ProcessingError(
            f"stanza failed on a batch of {len(texts)} {language} texts: {type(batch_error).__name__}: {batch_error}"
        ) from batch_error
