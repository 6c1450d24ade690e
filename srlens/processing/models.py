"""Where the stanza models of a language are, and the processor id they make.

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

The processor id, e.g. "stanza-1.15.0/en/3f2a9c1b", is the stanza version, the
language and the first 8 hex digits of a sha256 over the bytes of the model
files the pipeline loads (content, not path: moving the models keeps the cache,
retraining a model in place invalidates it) and of the chunk limit (max_words).
Hashing the 26 MB of the shared English models takes about 0.06 s, so the bytes
are hashed rather than file sizes and times; digests are memoized per process
by (path, size, mtime).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from srlens.build_vars import STANZA_DIR_ENV  # declared there for the command line

MAX_WORDS_ENV = "SRLENS_STANZA_MAX_WORDS"
DEFAULT_MAX_WORDS = 500  # longer than any UD sentence; stanza then needs ~0.35 GB above its models

# Bump when the way stanza's output is turned into cache rows changes: it is
# part of the hashed processor id, so old cache rows are then ignored.
EXTRACTION_VERSION = "srlens-stanza-rows-2"  # 2: a token stanza shows as <UNK> keeps its text

PROCESSORS = ("tokenize", "mwt", "pos", "lemma", "depparse")
REQUIRED_FILES = ("tokenize.pt", "pos.pt", "lemma.pt", "depparse.pt")
OPTIONAL_FILES = ("mwt.pt", "pretrain.pt", "forward_charlm.pt", "backward_charlm.pt")


class ProcessingError(Exception):
    """A problem the user must fix (typically: no stanza models for a language)."""


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


def how_to_get_models(language):
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
    require_stanza()  # models are of no use without it (and stanza's own folder needs its version)
    base, origin = _model_base(model_dir)
    problem = _find_models(language, base)
    if isinstance(problem, ModelSpec):
        return problem
    raise ProcessingError(
        f"No usable stanza models for language '{language}'{needed_by} in {base} "
        f"(from {origin}): {problem} {how_to_get_models(language)}"
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


# stanza and torch are the extra `srlens[stanza]`: the rest of srlens runs without them.
STANZA_EXTRA = "pip install 'srlens[stanza]'"


def stanza_installed():
    """Whether stanza can be imported, found without importing it (that imports torch: seconds)."""
    return importlib.util.find_spec("stanza") is not None


def require_stanza(what="parsing output texts", other="or build with --processor aligned, which needs no model"):
    """Refuse, in one line naming the extra, what needs stanza when it is not installed."""
    if not stanza_installed():
        raise ProcessingError(f"{what} needs stanza, which is not installed: {STANZA_EXTRA} ({other})")


def stanza_version():
    require_stanza()
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


def spec_id(spec, limit=None):
    h = hashlib.sha256()
    h.update(f"{EXTRACTION_VERSION}\n{spec.layout}\nmax_words {limit or max_words()}\n".encode())
    for role, package, path in spec.files:
        h.update(f"{role}\t{package}\t{_file_digest(path)}\n".encode())
    return f"stanza-{stanza_version()}/{spec.language}/{h.hexdigest()[:8]}"


def stanza_processor_id(language, model_dir=None, limit=None) -> str:
    """e.g. 'stanza-1.15.0/en/3f2a9c1b': stanza version, language, sha256 of the model files' bytes
    and of the chunk limit (max_words)."""
    return spec_id(resolve_models(language, model_dir), limit)


def models_or_download(language, model_dir=None, needed_by="", say=print):
    """The ModelSpec of `language` (resolve_models); where srlens looks in stanza's default folder (no
    model_dir, $SRLENS_STANZA_DIR nor $STANZA_RESOURCES_DIR) and the language is missing, download it
    there as stanza documents (stanza.download(lang, model_dir=its default), with stanza's progress
    bar), saying so in a line. Offline, or when the download fails, resolve_models's error stands."""
    try:
        return resolve_models(language, model_dir, needed_by)
    except ProcessingError:
        base, origin = _model_base(model_dir)
        if origin != "stanza's default model folder" or language == "und":
            raise
        say(f"srlens: downloading the stanza models for '{language}' into {base} (stanza.download)")
        try:
            import stanza  # noqa: PLC0415 (imports torch: only here)

            stanza.download(language, model_dir=str(base))
        except Exception as e:  # no network, an unknown language: the offline error stands
            say(f"srlens: the download failed: {type(e).__name__}: {e}")
        return resolve_models(language, model_dir, needed_by)
