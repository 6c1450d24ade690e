"""The stanza models of the shared folder and small runs of en_ewt test, for the tests that parse."""

import os
from pathlib import Path

import duckdb
import pytest

from srlens.processing import STANZA_DIR_ENV
from tests.conftest import EN_EWT_TEST, SHARED

MODELS = Path(os.environ.get(STANZA_DIR_ENV) or SHARED / "stanza")


DOGS = "The dogs barked ."


CONTRACTION = "I don't know what I'm doing."


TWO_SENTENCES = "He left. She stayed home."


def require_models():
    """The folder holding en/ (or being en/); skip on a clone without it, but never in CI."""
    if (
        not ((MODELS / "en" / "tokenize.pt").is_file() or (MODELS / "tokenize.pt").is_file())
        or not EN_EWT_TEST.is_file()
    ):
        message = f"stanza models ({MODELS}, set {STANZA_DIR_ENV}) or en_ewt test ({EN_EWT_TEST}) not found"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return MODELS


def write_treebank(path, n=20):
    """The first n sentences of en_ewt test; returns their texts."""
    blocks = EN_EWT_TEST.read_text(encoding="utf-8").split("\n\n")[:n]
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return [line[len("# text = ") :] for block in blocks for line in block.split("\n") if line.startswith("# text = ")]


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def cache_rows(warehouse):
    """Every column of both cache tables but parsed_at, in a fixed order."""
    con = duckdb.connect(str(warehouse))
    try:
        return (
            con.execute("select * from cache.parsed_words order by text_hash, word_idx").fetchall(),
            con.execute("select * exclude (parsed_at) from cache.parsed_texts order by text_hash").fetchall(),
        )
    finally:
        con.close()
