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
scores; docs/performance.md ("Stanza") gives the memory measured.

Speed (bench/stanza.py, docs/performance.md; 2 CPU cores, shared English
models): texts are sorted by length and parsed `batch_size` (32) at a time with
`Pipeline.bulk_process`, each batch whole by one process (Parser), on one torch
thread per process: 125 to 165 texts/s of a core, plus 1-2 s to import stanza
and 1-3 s to load the pipeline, in each process. Two processes on 2 cores
parsed 1,923 to 4,298 texts 1.0 to 1.4 times as fast as one (start-up
included) when the load average was 1 to 3, and 0.6 to 0.8 times as fast when
other sessions kept the cores busy (load 4 and more; Linux then gives one
session about one core, whatever its number of processes). On two free cores
(load 0.4 to 1.4, 4,298 texts): 1.62 and 1.68 times. Every other lever tried was
slower, with the same parses: text order (~0.7x), batches of 256 with stanza's
own batch sizes raised (~0.75x; batches of 1,000: ~0.3x), two torch threads
(0.1-0.15x on a busy machine; 1.3x on a quiet one, once), torch.inference_mode
(CPU within 10% of the default either way across runs: stanza already runs
under no_grad); earlier: one call per text, texts joined by blank lines.
A fifth of the CPU is stanza's pure-Python Chu-Liu-Edmonds decoder.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time

from srlens.build_vars import DEVICES
from srlens.children import cores, die_with_parent
from srlens.processing.models import PROCESSORS, ModelSpec, ProcessingError, how_to_get_models, stanza_version

THREADS_ENV = "SRLENS_TORCH_THREADS"
WORKERS_ENV = "SRLENS_STANZA_WORKERS"
MAX_WORKERS = 4
TEXTS_PER_WORKER = 1000


def split_words(text, limit):
    """`text` cut into pieces of at most `limit` whitespace-separated tokens (the text itself if shorter)."""
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    if len(spans) <= limit:
        return [text]
    return [text[spans[i][0] : spans[min(i + limit, len(spans)) - 1][1]] for i in range(0, len(spans), limit)]


def torch_threads():
    """Half the cores available (1 on 2 cores), or $SRLENS_TORCH_THREADS.

    Measured on 2 cores (docs/performance.md, "Stanza"): on an idle machine 2
    threads parse at most ~20% faster than 1, but when other processes keep the
    cores busy, 2 threads are 10 to 20 times slower than 1 (torch's OpenMP
    threads wait for each other at every small operation); 1 thread degrades
    gracefully. Leaving a core free is the robust choice.
    """
    if os.environ.get(THREADS_ENV):
        return max(1, int(os.environ[THREADS_ENV]))
    return max(1, cores() // 2)


def load_pipeline(spec: ModelSpec, device="cpu"):
    """A stanza pipeline for `spec` on `device` (cpu or cuda); download_method=None, so it never
    touches the network."""
    import stanza  # noqa: PLC0415 (heavy: torch)

    common = dict(download_method=None, device=device, logging_level="ERROR")
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
    return join_pieces([piece_rows(d) for d in (doc if isinstance(doc, list) else [doc])])


def piece_rows(doc):
    """(words, tokens, sentences, word rows) of one Document, its sentences flattened: plain data,
    small to send from a worker process."""
    rows, word_offset, token_offset = [], 0, 0
    for sentence in doc.sentences:
        for t, token in enumerate(sentence.tokens, start=1):
            for word in token.words:
                head = word.head
                rows.append(
                    (
                        word_offset + word.id,
                        token_offset + t,
                        _surface(doc, token, word),
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
    return word_offset, token_offset, len(doc.sentences), rows


def _surface(doc, token, word):
    """The word's form; stanza shows a very long token (a URL) as '<UNK>': it keeps its text here, so
    that a parsed reference spells its own text (the identity, SPEC 13)."""
    if word.text == "<UNK>" and len(token.words) == 1 and token.start_char is not None and doc.text:
        return doc.text[token.start_char : token.end_char]
    return word.text


def join_pieces(pieces):
    """(words, sentences, word rows) of a text parsed in pieces (piece_rows of each, in order): words
    and tokens numbered on across the pieces, heads renumbered with them (a root keeps head 0)."""
    if len(pieces) == 1:
        words, _, sentences, rows = pieces[0]
        return words, sentences, rows
    joined, words, tokens, sentences = [], 0, 0, 0
    for n_words, n_tokens, n_sentences, rows in pieces:
        joined += [
            (w + words, t + tokens, form, lemma, upos, xpos, feats, None if h is None else (h and h + words), rel)
            for w, t, form, lemma, upos, xpos, feats, h, rel in rows
        ]
        words, tokens, sentences = words + n_words, tokens + n_tokens, sentences + n_sentences
    return words, sentences, joined


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


def resolve_device(device="auto"):
    """'cpu' or 'cuda' for --device auto|cpu|cuda: auto is cuda where torch sees a CUDA GPU. Asked
    only when there is something to parse; on Linux without NVIDIA's driver (/dev/nvidiactl), auto
    is cpu without importing torch (1-2 s; the worker processes import it anyway)."""
    if device not in (*DEVICES, None):
        raise ProcessingError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if device in (None, "auto") and sys.platform == "linux" and not os.path.exists("/dev/nvidiactl"):
        return "cpu"
    import torch  # noqa: PLC0415

    has_gpu = torch.cuda.is_available()
    if device in (None, "auto"):
        return "cuda" if has_gpu else "cpu"
    if device == "cuda" and not has_gpu:
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        raise ProcessingError(
            f"--device cuda: torch {torch.__version__} ({build}) sees no CUDA GPU on this machine; "
            "use --device cpu, or auto (cuda where there is one)"
        )
    return device


def default_workers(device, texts=None):
    """Processes that parse at once: one on a GPU; on CPU $SRLENS_STANZA_WORKERS, else one per core
    available, at most MAX_WORKERS (each holds its own torch and models: 0.58 GB at most on en_ewt
    test with the shared English models); and at most one per TEXTS_PER_WORKER of the `texts` to
    parse (a worker's start-up, importing stanza and loading the models, took 2 to 5 s of CPU in
    the stanza benchmark of docs/performance.md, what 300 to 700 texts take to parse).

    Processes rather than torch threads: a single-threaded process per core uses the cores without
    the waits that make two torch threads 5 to 20 times slower than one when other programs keep
    the cores busy (see torch_threads and docs/performance.md, "Stanza parsing").
    """
    if device == "cuda":
        return 1
    value = os.environ.get(WORKERS_ENV)
    if value and (not value.isdigit() or int(value) < 1):
        raise ProcessingError(f"${WORKERS_ENV} must be a whole number of processes of at least 1, got {value!r}")
    workers = int(value) if value else min(MAX_WORKERS, cores())
    return max(1, min(workers, texts // TEXTS_PER_WORKER if texts is not None else workers))


class Parser:
    """Parses batches of texts in this process and `workers - 1` others, and yields them in order.

    `parse(batches)` yields, for each batch (a list of texts), the piece_rows of each text. Batch
    b goes to this process if b % workers == 0, else to the other processes: each batch is parsed
    whole by one process, on one torch thread, so a text meets the same batch mates however many
    processes there are. Use as a context manager: leaving it stops the other processes.
    """

    def __init__(self, spec, device, workers):
        self.spec, self.device, self.workers = spec, device, workers
        self.load_seconds, self._nlp, self._pool = 0.0, None, None

    def __enter__(self):
        import torch  # noqa: PLC0415

        if self.workers > 1:
            import multiprocessing  # noqa: PLC0415
            from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

            # spawn, not fork: this process holds DuckDB's threads (and maybe torch's OpenMP pool).
            self._pool = ProcessPoolExecutor(
                self.workers - 1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(self.spec, self.device, os.getpid()),
            )
        self._threads = torch.get_num_threads()
        torch.set_num_threads(1 if self.workers > 1 else torch_threads())
        return self

    def __exit__(self, *exc):
        import torch  # noqa: PLC0415

        torch.set_num_threads(self._threads)
        if self._pool is not None:
            self._pool.shutdown(wait=exc[0] is None, cancel_futures=True)

    def parse(self, batches):
        # Submitted first: the other processes start, and load their models while this one does.
        others = {
            b: self._pool.submit(_parse_in_worker, texts)
            for b, texts in enumerate(batches)
            if b % self.workers  # never when workers == 1
        }
        started = time.perf_counter()
        self._nlp = load_pipeline(self.spec, self.device)
        self.load_seconds = time.perf_counter() - started
        for b, texts in enumerate(batches):
            if b in others:
                load_seconds, parsed = others.pop(b).result()
                self.load_seconds = max(self.load_seconds, load_seconds)
                yield parsed
            else:
                yield [piece_rows(doc) for doc in parse_batch(self._nlp, texts, self.spec.language)]


_worker: dict = {}  # a worker process's pipeline (or the error that prevented it), and its load time


def _start_worker(spec, device, parent_pid):
    import signal  # noqa: PLC0415

    import torch  # noqa: PLC0415

    die_with_parent(parent_pid)()  # a parent killed outright (SIGKILL) leaves no worker behind
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the pool
    torch.set_num_threads(1)  # the processes are the parallelism
    started = time.perf_counter()
    try:
        _worker["nlp"] = load_pipeline(spec, device)
    except ProcessingError as e:  # raised with the first batch, so that the parent sees this message
        _worker["error"] = e
    _worker["language"], _worker["load_seconds"] = spec.language, time.perf_counter() - started


def _parse_in_worker(texts):
    """(this worker's pipeline load time the first time, else 0; piece_rows of each text)."""
    if "error" in _worker:
        raise _worker["error"]
    load_seconds, _worker["load_seconds"] = _worker["load_seconds"], 0.0
    return load_seconds, [piece_rows(doc) for doc in parse_batch(_worker["nlp"], texts, _worker["language"])]
