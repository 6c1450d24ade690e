"""Loading text references (`srlens load-references`, SPEC 13): a corpus whose reference trees are the
stanza parse of its reference texts.

The corpus is stored as a treebank's is, minus its token lines: one raw.treebank_files row with
reference = 'text' and one raw.sentences row per sentence. The trees are made at build time: the
texts join the ones processing/ parses (cache.py, REFERENCE_TEXTS_SQL), cached by text hash, so a
reload that changes some sentences has only those parsed again. The row's sha256 and loaded_at
change with any reload, which makes the next build a full one (build.py, REFERENCE_STATE_SQL): no
score keeps a stale tree.
"""

from typing import NamedTuple

from srlens.loaders.conllu_reader import read_text
from srlens.loaders.errors import LoadError
from srlens.loaders.load import _check_runs_still_match, _refuse_reference_free
from srlens.loaders.names import check_name
from srlens.loaders.outputs_reader import detect_format, read_run
from srlens.loaders.store import insert_columns, open_for_write, transaction, utc_now

REFERENCE_FORMATS = ("text", "sr")


class LoadedReferences(NamedTuple):
    """What load_references did: sentences loaded, and what the reload replaced (None: a new corpus)."""

    sentences: int
    changed: int | None  # sentences whose text is new or changed (all of them for a new corpus)
    replaced: str | None  # 'treebank' | 'text' | None: what the corpus had before
    runs: int  # loaded runs of the corpus, whose scores the next build recomputes


def read_references(path, fmt="text"):
    """(sent_ids, texts, line numbers, sha256) of a reference file; a LoadError for anything refused."""
    if fmt not in REFERENCE_FORMATS:
        raise LoadError(path, f"unknown reference format {fmt!r} (one of {', '.join(REFERENCE_FORMATS)})")
    text, digest = read_text(path)
    if not text.strip():
        raise LoadError(path, "the file is empty")
    kind, why = detect_format(text)
    if kind == "conllu":
        line = int(why.split()[1])
        raise LoadError(path, "this is a CoNLL-U treebank: load it with `srlens load-treebank`", line)
    run = read_run(path, fmt, source=(text, digest))
    ids = [str(k) for k in range(1, len(run.texts) + 1)] if fmt == "text" else run.sent_ids
    first = {}
    for sent_id, text, line in zip(ids, run.texts, run.line_nos):
        if not text:
            raise LoadError(path, "empty reference sentence (every sentence needs a text)", line, sent_id)
        if first.setdefault(sent_id, line) != line:
            raise LoadError(path, f"sent_id repeated (first at line {first[sent_id]})", line, sent_id)
    return ids, run.texts, run.line_nos, run.sha256


def load_references(warehouse, path, corpus, language, fmt="text", replace=False, check_language=None):
    """Load (or replace) the text references of `corpus`, all or nothing; returns LoadedReferences.

    check_language(language): raises when no stanza model can parse the language (the CLI passes one
    that finds or downloads the models); called before the warehouse is opened."""
    corpus = check_name(corpus, "--corpus")
    language = check_name(language, "--language")
    sent_ids, texts, lines, digest = read_references(path, fmt)
    if check_language is not None:
        check_language(language)
    with open_for_write(warehouse, create=True) as con, transaction(con):
        _refuse_reference_free(con, path, corpus)
        old = con.execute("select reference from raw.treebank_files where corpus = ?", [corpus]).fetchone()
        if old and old[0] != "text" and not replace:
            raise LoadError(
                path,
                f"corpus {corpus!r} has a reference treebank: --replace replaces it with these texts "
                "(or load them under another corpus name)",
            )
        _check_runs_still_match(con, path, corpus, sent_ids)
        before = dict(
            con.execute("select sent_id, text from raw.sentences where corpus = ?", [corpus]).fetchall() if old else []
        )
        changed = sum(before.get(sent_id) != text for sent_id, text in zip(sent_ids, texts))
        for table in ("raw.treebank_files", "raw.sentences", "raw.tokens"):
            con.execute(f"delete from {table} where corpus = ?", [corpus])
        n = len(texts)
        insert_columns(
            con,
            "raw.sentences",
            {
                "corpus": [corpus] * n,
                "sent_idx": list(range(1, n + 1)),
                "sent_id": sent_ids,
                "text": texts,
                "comments": [[f"# sent_id = {s}", f"# text = {t}"] for s, t in zip(sent_ids, texts)],
                "first_line": lines,
            },
        )
        # words: the whitespace-separated chunks; the syntactic words are known once parsed (corpus_stats)
        con.execute(
            """insert into raw.treebank_files (corpus, language, source_file, sha256, sentences, words, loaded_at,
                                                reference) values (?, ?, ?, ?, ?, ?, ?, 'text')""",
            [corpus, language, str(path), digest, n, sum(len(t.split()) for t in texts), utc_now()],
        )
        runs = con.execute("select count(*) from raw.submissions where corpus = ?", [corpus]).fetchone()[0]
    return LoadedReferences(n, changed if old else None, old[0] if old else None, runs)
