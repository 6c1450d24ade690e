"""Stanza processing of system outputs (SPEC section 6), done once per text and model.

`process_pending(con)` parses every distinct non-empty output text of the runs
loaded as text or sr (runs loaded as CoNLL-U are already processed) with
stanza's tokenize, mwt, pos, lemma and depparse, and stores the result in two
cache tables that dbt models read:

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

The processor id, e.g. "stanza-1.15.0/en/3f2a9c1b", is the stanza version, the
language and the first 8 hex digits of a sha256 over the bytes of the model
files the pipeline loads (content, not path: moving the models keeps the cache,
retraining a model in place invalidates it). Hashing the 26 MB of the shared
English models takes about 0.06 s, so the bytes are hashed rather than file
sizes and times; digests are memoized per process by (path, size, mtime).
A text already cached under the current processor id is never parsed again,
and a language whose texts are all cached never loads stanza (nor torch).

Where the models are: the `model_dir` argument, else the environment variable
SRLENS_STANZA_DIR, else stanza's own folder (STANZA_RESOURCES_DIR, else
stanza.resources.common.DEFAULT_MODEL_DIR). For language L, a folder D serves
L by the first rule that applies:

1. `D/L/tokenize.pt` exists: the folder `D/L` (one folder per language).
2. `D/tokenize.pt` exists and D's own name is L: D itself (so
   SRLENS_STANZA_DIR may point straight at a folder called `en/`).
3. `D/resources.json` and the folder `D/L/` exist: D is a folder made by
   `stanza.download(L)`; the default package of resources.json is used.

A single-language folder (rules 1 and 2) holds tokenize.pt, mwt.pt (optional:
without it, no multiword-token expansion), pos.pt, lemma.pt and depparse.pt,
and optionally pretrain.pt (word vectors for pos and depparse) and
forward_charlm.pt / backward_charlm.pt (character language models for pos,
lemma and depparse). Nothing is ever downloaded: the files are checked before
a pipeline is built, for every language needed before any parsing starts, and
a missing model raises ProcessingError at once.

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
`Pipeline.bulk_process`, on one torch thread by default (see _torch_threads):
about 50-60 texts/s, 700-1000 words/s, plus about 2.5 s to import stanza and
2.5 s to load the pipeline. That was the fastest of the ways tried: one call
per text (~19 texts/s), bulk batches in text order (~43), sorted batches of
128 or all at once (about the same as 32), texts joined into one document by
blank lines (~38).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pyarrow as pa

from srlens.build_vars import STANZA_DIR_ENV  # declared there for the command line
from srlens.loaders.store import insert_columns, transaction, utc_now

THREADS_ENV = "SRLENS_TORCH_THREADS"
MAX_WORDS_ENV = "SRLENS_STANZA_MAX_WORDS"
DEFAULT_MAX_WORDS = 500  # longer than any UD sentence; stanza then needs ~0.35 GB above its models

# Bump when the way stanza's output is turned into cache rows changes: it is
# part of the hashed processor id, so old cache rows are then ignored.
EXTRACTION_VERSION = "srlens-stanza-rows-1"

PROCESSORS = ("tokenize", "mwt", "pos", "lemma", "depparse")
REQUIRED_FILES = ("tokenize.pt", "pos.pt", "lemma.pt", "depparse.pt")
OPTIONAL_FILES = ("mwt.pt", "pretrain.pt", "forward_charlm.pt", "backward_charlm.pt")

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
_OUTPUT_TEXTS_SQL = f"""
    select distinct t.language, o.text
    from raw.outputs o
    join raw.submissions s on s.submission_id = o.submission_id
    join ({CORPUS_LANGUAGES_SQL}) t on t.corpus = s.corpus
    where s.format <> 'conllu' and not o.is_missing and o.text is not null and trim(o.text) <> ''
"""


class ProcessingError(Exception):
    """A problem the user must fix (typically: no stanza models for a language)."""


def ensure_cache_schema(con) -> None:
    """Create schema `cache` with parsed_texts and parsed_words if they are missing."""
    con.execute(CACHE_SCHEMA_SQL)


# ---------------------------------------------------------------------------
# Finding the models


@dataclass(frozen=True)
class ModelSpec:
    """The model files that serve one language, and how to hand them to stanza."""

    language: str
    layout: str  # "folder" (one language's .pt files) or "stanza" (stanza.download's folder)
    root: Path  # the language folder, or stanza's resources folder
    files: tuple  # ((role, package, path), ...) every file the pipeline loads
    stanza_lang: str = ""  # stanza layout: the language after resources.json aliases
    packages: dict = field(default_factory=dict)  # stanza layout: processor -> package


def _model_base(model_dir):
    """(folder, where it came from); stanza's default folder only when nothing else is set."""
    if model_dir is not None:
        return Path(model_dir).expanduser(), "the model_dir argument"
    if os.environ.get(STANZA_DIR_ENV):
        return Path(os.environ[STANZA_DIR_ENV]).expanduser(), f"${STANZA_DIR_ENV}"
    if os.environ.get("STANZA_RESOURCES_DIR"):
        return Path(os.environ["STANZA_RESOURCES_DIR"]).expanduser(), "$STANZA_RESOURCES_DIR"
    return stanza_default_dir(), "stanza's default model folder"


def stanza_default_dir() -> Path:
    """stanza.resources.common.DEFAULT_MODEL_DIR without STANZA_RESOURCES_DIR, computed as stanza does
    but without importing stanza (that imports torch: seconds, even to report a missing model)."""
    try:
        import importlib.util  # noqa: PLC0415

        from platformdirs import user_cache_dir  # noqa: PLC0415

        package = importlib.util.find_spec("stanza")
        spec = importlib.util.spec_from_file_location(
            "_srlens_stanza_version", Path(package.submodule_search_locations[0]) / "_version.py"
        )
        version = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(version)
        return Path(user_cache_dir("stanza", "StanfordNLP", version.__resources_version__)) / "resources"
    except Exception:  # an unexpected stanza layout: ask stanza itself
        from stanza.resources.common import USER_CACHE_DIR  # noqa: PLC0415

        return Path(USER_CACHE_DIR) / "resources"


def _how_to_get_models(language):
    if language == "und":
        return (
            "The corpus language is unknown ('und'): load its treebank again with "
            "`srlens load-treebank --language <code>` (e.g. en), then provide models for that language. "
            "For word-order studies, the model-free processor needs no models: "
            "SRLENS_PROCESSOR=aligned or `srlens build --processor aligned`."
        )
    return (
        f"To get models, run `python -c \"import stanza; stanza.download('{language}')\"` on a machine "
        f"with internet access and copy the folder it fills (set STANZA_RESOURCES_DIR or "
        f"{STANZA_DIR_ENV} to it), or set {STANZA_DIR_ENV} to a folder with a subfolder "
        f"'{language}/' holding tokenize.pt, mwt.pt (optional), pos.pt, lemma.pt and depparse.pt. "
        f"For word-order studies, the model-free processor needs no models: "
        f"SRLENS_PROCESSOR=aligned or `srlens build --processor aligned`."
    )


def resolve_models(language, model_dir=None, needed_by="") -> ModelSpec:
    """The model files for `language` by the folder rule of the module docstring; never downloads."""
    base, origin = _model_base(model_dir)
    problem = _find_models(language, base)
    if isinstance(problem, ModelSpec):
        return problem
    raise ProcessingError(
        f"No usable stanza models for language '{language}'{needed_by} in {base} "
        f"(from {origin}): {problem} {_how_to_get_models(language)}"
    )


def _find_models(language, base):
    """A ModelSpec, or a sentence saying why `base` does not serve `language`."""
    if not base.is_dir():
        return "that folder does not exist."
    if (base / language / "tokenize.pt").is_file():
        return _folder_spec(language, base / language)
    if (base / "tokenize.pt").is_file():
        if base.name == language:
            return _folder_spec(language, base)
        return (
            f"it holds the models of a single language, and such a folder serves the language it is "
            f"named after ('{base.name}' is not '{language}'); name the folder '{language}' or put "
            f"the models in a subfolder '{language}/'."
        )
    if (base / "resources.json").is_file() and (base / language).is_dir():
        return _stanza_spec(language, base)
    return (
        f"found neither {base / language / 'tokenize.pt'}, nor a stanza download "
        f"({base / 'resources.json'} with a folder {base / language}/)."
    )


def _folder_spec(language, folder):
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        return f"{folder} lacks {', '.join(missing)}."
    files = [(name[:-3], "", folder / name) for name in REQUIRED_FILES + OPTIONAL_FILES if (folder / name).is_file()]
    return ModelSpec(language, "folder", folder, tuple(files))


def _stanza_spec(language, base):
    """The default package of a stanza.download folder, resolved as stanza.Pipeline does."""
    try:
        resources = json.loads((base / "resources.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return f"{base / 'resources.json'} is unreadable ({e})."
    lang = language
    for _ in range(10):  # follow aliases (e.g. a language name for its code)
        entry = resources.get(lang)
        if not isinstance(entry, dict) or "alias" not in entry:
            break
        lang = entry["alias"]
    entry = resources.get(lang)
    if not isinstance(entry, dict):
        return f"{base / 'resources.json'} does not list '{language}'."
    defaults = dict(entry.get("default_processors", {}))
    defaults.update(entry.get("packages", {}).get("default", {}))
    packages, files, missing = {}, [], []
    for processor in PROCESSORS:
        package = defaults.get(processor)
        if package is None:
            if processor == "mwt":
                continue
            return f"its resources.json names no default {processor} model for '{language}'."
        packages[processor] = package
        if processor == "lemma" and package == "identity":
            continue
        needed = [(processor, package)]
        deps = entry.get(processor, {}).get(package, {}).get("dependencies", []) or []
        needed += [(d["model"], d["package"]) for d in deps]
        for role, pkg in needed:
            path = base / lang / role / f"{pkg}.pt"
            if (role, pkg, path) not in files:
                files.append((role, pkg, path))
            if not path.is_file() and path not in missing:
                missing.append(path)
    if missing:
        return f"the downloaded models are incomplete (missing {', '.join(map(str, missing))})."
    return ModelSpec(language, "stanza", base, tuple(files), stanza_lang=lang, packages=packages)


_digests: dict = {}


def _file_digest(path):
    path = Path(path).resolve()
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _digests:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        _digests[key] = h.hexdigest()
    return _digests[key]


def _stanza_version():
    return metadata.version("stanza")  # without importing stanza (and torch)


def max_words():
    """The longest output parsed whole, in whitespace-separated tokens: $SRLENS_STANZA_MAX_WORDS or 500."""
    value = os.environ.get(MAX_WORDS_ENV) or str(DEFAULT_MAX_WORDS)
    if not value.isdigit() or int(value) < 1:
        raise ProcessingError(
            f"${MAX_WORDS_ENV} must be a whole number of words of at least 1, "
            f"got {value!r} (default {DEFAULT_MAX_WORDS})"
        )
    return int(value)


def split_words(text, limit):
    """`text` cut into pieces of at most `limit` whitespace-separated tokens (the text itself if shorter)."""
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    if len(spans) <= limit:
        return [text]
    return [text[spans[i][0] : spans[min(i + limit, len(spans)) - 1][1]] for i in range(0, len(spans), limit)]


def _spec_id(spec, limit=None):
    h = hashlib.sha256()
    h.update(f"{EXTRACTION_VERSION}\n{spec.layout}\nmax_words {limit or max_words()}\n".encode())
    for role, package, path in spec.files:
        h.update(f"{role}\t{package}\t{_file_digest(path)}\n".encode())
    return f"stanza-{_stanza_version()}/{spec.language}/{h.hexdigest()[:8]}"


def stanza_processor_id(language, model_dir=None, limit=None) -> str:
    """e.g. 'stanza-1.15.0/en/3f2a9c1b': stanza version, language, sha256 of the model files' bytes
    and of the chunk limit (max_words)."""
    return _spec_id(resolve_models(language, model_dir), limit)


# ---------------------------------------------------------------------------
# Running stanza


def _torch_threads():
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
            f"for another stanza version (this is stanza {_stanza_version()}). "
            f"{_how_to_get_models(spec.language)}"
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


def _parse(nlp, texts, language):
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


class _Rows:
    """Cache rows gathered in columns, written in bulk (store.insert_columns)."""

    def __init__(self):
        self.texts = {name: [] for name in TEXTS_SCHEMA.names}
        self.words = {name: [] for name in WORDS_SCHEMA.names}

    def __len__(self):
        return len(self.texts["text_hash"])

    def add(self, text_hash, processor, language, text, docs, parsed_at):
        n_words, n_sentences, rows = doc_rows(docs)
        for name, value in zip(
            TEXTS_SCHEMA.names, (text_hash, processor, language, text, n_words, n_sentences, parsed_at, len(docs))
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
        select language, count(*) from ({_OUTPUT_TEXTS_SQL}) group by language order by language
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
        processor = _spec_id(spec, limit)
        pending = con.execute(
            f"""
            select text, sha256(text) as text_hash from ({_OUTPUT_TEXTS_SQL}) d
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
    torch.set_num_threads(_torch_threads())
    try:
        started = time.perf_counter()
        nlp = load_pipeline(spec)
        load_seconds = time.perf_counter() - started
        started = time.perf_counter()
        # Documents to parse: each text whole, or its chunks in order (bounded memory, see the docstring).
        pieces = [(k, piece) for k, (text, _) in enumerate(pending) for piece in split_words(text, limit)]
        rows, docs_of, done, words, chunked = _Rows(), {}, 0, 0, 0
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
                for (k, _), doc in zip(batch, _parse(nlp, [piece for _, piece in batch], spec.language)):
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
