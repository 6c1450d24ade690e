"""Stanza processing of system outputs (SPEC section 6), done once per text and model.

`process_pending(con)` parses every distinct non-empty output text of the runs
loaded as text or sr (runs loaded as CoNLL-U are already processed) with
stanza's tokenize, mwt, pos, lemma and depparse, and stores the result in two
cache tables that dbt models read. A text already cached under the current
processor id is never parsed again, and a language whose texts are all cached
never loads stanza (nor torch).

- models.py: where a language's models are, and the processor id they make;
- parse.py: the stanza pipeline, its device and worker processes, long outputs
  cut in chunks, a parse as rows;
- cache.py: the cache tables and the texts still to parse;
- pending.py: process_pending, which ties them together;
- shards.py: `srlens parse --shard K/N` and `srlens load-parses`, parsing elsewhere.
"""

from srlens.build_vars import STANZA_DIR_ENV
from srlens.processing.cache import (
    CACHE_SCHEMA_SQL,
    CORPUS_LANGUAGES_SQL,
    TEXTS_SCHEMA,
    WORDS_SCHEMA,
    ensure_cache_schema,
)
from srlens.processing.models import (
    DEFAULT_MAX_WORDS,
    MAX_WORDS_ENV,
    STANZA_EXTRA,
    ModelSpec,
    ProcessingError,
    max_words,
    require_stanza,
    resolve_models,
    stanza_default_dir,
    stanza_installed,
    stanza_processor_id,
)
from srlens.processing.parse import THREADS_ENV, doc_rows, load_pipeline, split_words
from srlens.processing.pending import process_pending

__all__ = [
    "CACHE_SCHEMA_SQL",
    "CORPUS_LANGUAGES_SQL",
    "DEFAULT_MAX_WORDS",
    "MAX_WORDS_ENV",
    "STANZA_DIR_ENV",
    "STANZA_EXTRA",
    "TEXTS_SCHEMA",
    "THREADS_ENV",
    "WORDS_SCHEMA",
    "ModelSpec",
    "ProcessingError",
    "doc_rows",
    "ensure_cache_schema",
    "load_pipeline",
    "max_words",
    "process_pending",
    "require_stanza",
    "resolve_models",
    "split_words",
    "stanza_default_dir",
    "stanza_installed",
    "stanza_processor_id",
]
