"""Realize a corpus with the baseline and load the result as a run.

Output: an sr-format file (`# sent_id = ...` / `# text = ...`) of syntactic
words (a multiword token such as "don't" comes out as its words "do n't", as
the reference's words are what the scores compare), written to
`<warehouse dir>/baselines/<campaign>+<corpus>+<team>+<run>.<hash>.sr` (the names
percent-encoded, plus a short hash of them: `loaders.names.file_in`) and loaded
with `loaders.load.load_outputs(..., fmt='sr')`. Names are checked first
(`loaders.names.check_name`), like those of load-outputs.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from srlens.baseline.model import RANDOM_MODEL, BaselineError, ensure_schema, find_model, probabilities, read_only
from srlens.baseline.search import linearize_sentence
from srlens.loaders.load import load_outputs
from srlens.loaders.names import check_name, file_in, submission_id
from srlens.loaders.store import open_for_write, transaction, utc_now

INPUTS = ("lemma", "form")


def run_path(warehouse, corpus, run, team="baseline", campaign="default"):
    """Where generate() writes a run: a file named after its identity in <warehouse folder>/baselines."""
    return file_in(Path(warehouse).resolve().parent / "baselines", (campaign, corpus, team, run), ".sr")


def linearize(warehouse, corpus, model_name, seed=0):
    """{sent_idx: (sent_id, [word ids in output order], {word_id: (form, lemma)})} for a corpus."""
    return _linearize(warehouse, corpus, model_name, seed, {"exact": 0, "fallback": 0})[1]


def _linearize(warehouse, corpus, model_name, seed, stats):
    """(resolved model name, realized sentences as in linearize)."""
    con = read_only(warehouse)
    try:
        rows = con.execute(
            "select t.sent_idx, s.sent_id, t.id::integer, coalesce(try_cast(t.head as integer), 0), "
            "t.form, t.lemma from raw.tokens t join raw.sentences s using (corpus, sent_idx) "
            "where t.corpus = ? and regexp_full_match(t.id, '[0-9]+') order by t.sent_idx",
            [corpus],
        ).fetchall()
        if not rows:
            raise BaselineError(f"no treebank is loaded for corpus {corpus!r} (load-treebank first)")
        if model_name == RANDOM_MODEL:
            pairs = sides = None
        else:
            model = find_model(con, model_name)
            model_name = model["model"]
            pairs, sides = probabilities(con, corpus, model["variables"], model_name)
    finally:
        con.close()
    sentences = {}
    for sent_idx, sent_id, word_id, head, form, lemma in rows:
        entry = sentences.setdefault(sent_idx, (sent_id, {}, {}))
        entry[1][word_id] = head
        entry[2][word_id] = (form, lemma)
    result = {}
    for sent_idx, (sent_id, heads, words) in sentences.items():
        if pairs is None:
            order = linearize_sentence(sent_id, heads, seed)
        else:

            def pair_prob(a, b, s=sent_idx):
                return pairs[(s, a, b)][0] if a < b else pairs[(s, b, a)][1]

            order = linearize_sentence(sent_id, heads, seed, pair_prob, lambda c, s=sent_idx: sides[(s, c)], stats)
        result[sent_idx] = (sent_id, order, words)
    return model_name, result


def _token(form, lemma, input):
    if input == "lemma" and lemma not in ("", "_"):  # '_' = no lemma annotated: the form stands in
        return lemma
    return form


def generate(warehouse, corpus, run, model_name=None, input="lemma", team="baseline", campaign="default", seed=0):
    """Realize every tree of `corpus`, write the run as an sr file and load it; returns the file's path.

    model_name: a trained model, or 'random' for the seeded random-order baseline; None takes
    the only trained model. input: 'lemma' (the words' lemmas; the form where there is none)
    or 'form' (gold forms: a pure word-order baseline).
    """
    if input not in INPUTS:
        raise BaselineError(f"input must be one of {', '.join(INPUTS)} (got {input!r})")
    campaign, corpus, team, run = (
        check_name(name, argument)
        for name, argument in ((campaign, "--campaign"), (corpus, "--corpus"), (team, "--team"), (run, "--run"))
    )
    path = run_path(warehouse, corpus, run, team, campaign)  # refused names never reach the disk
    started = time.perf_counter()
    stats = {"exact": 0, "fallback": 0}
    model_name, realized = _linearize(warehouse, corpus, model_name, seed, stats)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for sent_idx in sorted(realized):
        sent_id, order, words = realized[sent_idx]
        text = " ".join(_token(*words[w], input) for w in order)
        lines.append(f"# sent_id = {sent_id}\n# text = {text}\n\n")
    # A new temporary file (O_EXCL: never one planted there), renamed over the run's file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".generating-", suffix=".sr")
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # as an ordinary new file, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(lines))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    load_outputs(warehouse, path, corpus, team, run, campaign=campaign, fmt="sr")
    words = sum(len(order) for _, order, _ in realized.values())
    with open_for_write(warehouse) as con:
        ensure_schema(con)
        sub_id = submission_id(campaign, corpus, team, run)
        with transaction(con):
            con.execute("delete from baseline.runs where submission_id = ?", [sub_id])
            con.execute(
                "insert into baseline.runs values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    sub_id,
                    model_name,
                    input,
                    seed,
                    str(path),
                    len(realized),
                    words,
                    stats["exact"],
                    stats["fallback"],
                    time.perf_counter() - started,
                    utc_now(),
                ],
            )
    return path
