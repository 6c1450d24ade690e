"""Human judgments follow the text they judged.

A judgment describes one output text. Reloading the run without that sentence, or with
another text for it, deletes the judgment in the load's transaction and says how many went;
judgments of unchanged sentences stay. After a real build (processor aligned), fluency_z and
adequacy_z of sentence_scores equal an independent Python computation over the judgments
that should remain, row by row.
"""

import hashlib
import statistics

import duckdb
import pytest

from srlens.build import build
from srlens.cli import main
from srlens.loaders.human import load_human
from srlens.loaders.load import load_outputs, load_treebank
from srlens.loaders.store import open_for_write
from srlens.paths import DEMO_DATA_DIR

SENTENCES = 30
JUDGED = 20  # the first 20 sentences of each run are judged
RUNS = ("gone", "changed", "same")
ANNOTATORS = ("a1", "a2")
CRITERIA = ("fluency", "adequacy")


def blocks(path, n):
    """The first n blank-line separated blocks of a CoNLL-U or sr file."""
    return path.read_text(encoding="utf-8").strip("\n").split("\n\n")[:n]


def sr_file(path, texts):
    """An sr run from {sent_id: text}."""
    path.write_text("".join(f"# sent_id = {i}\n# text = {t}\n\n" for i, t in texts.items()), encoding="utf-8")
    return path


def score(run, k, annotator, criterion):
    """A deterministic score on a 1-5 scale that differs by run, sentence, annotator and criterion."""
    return (7 * k + 3 * RUNS.index(run) + 2 * ANNOTATORS.index(annotator) + CRITERIA.index(criterion)) % 5 + 1


def judgment_csv(path, sent_ids):
    rows = ["campaign,corpus,team,run,annotator,sent_id,criterion,score"]
    for run in RUNS:
        for k, sent_id in enumerate(sent_ids[:JUDGED]):
            for annotator in ANNOTATORS:
                for criterion in CRITERIA:
                    rows.append(
                        f"c,small,t,{run},{annotator},{sent_id},{criterion},{score(run, k, annotator, criterion)}"
                    )
    path.write_text("\n".join(rows) + "\n")
    return path


def expected_z(judgments):
    """(run, sent_id) -> {criterion: mean z}: SPEC 10 by hand (z per annotator over all their scores)."""
    by_annotator = {}
    for _run, _sent_id, annotator, _criterion, value in judgments:
        by_annotator.setdefault(annotator, []).append(value)
    stats = {a: (statistics.mean(v), statistics.stdev(v)) for a, v in by_annotator.items()}
    zs = {}
    for run, sent_id, annotator, criterion, value in judgments:
        mean, sd = stats[annotator]
        zs.setdefault((run, sent_id), {}).setdefault(criterion, []).append((value - mean) / sd)
    return {key: {c: statistics.mean(v) for c, v in crit.items()} for key, crit in zs.items()}


@pytest.fixture(scope="module")
def reloaded(tmp_path_factory):
    """Three runs judged on 20 sentences, then reloaded: without them, with 5 changed, identical."""
    root = tmp_path_factory.mktemp("human")
    wh = root / "srlens.duckdb"
    treebank = root / "small.conllu"
    treebank.write_text(
        "\n\n".join(blocks(DEMO_DATA_DIR / "treebanks" / "en_ewt_demo.conllu", SENTENCES)) + "\n\n", encoding="utf-8"
    )
    load_treebank(wh, treebank, "small")
    gold = {}
    for block in blocks(DEMO_DATA_DIR / "outputs" / "en_ewt_demo" / "gold.sr.txt", SENTENCES):
        sent_id, text = (line.split(" = ", 1)[1] for line in block.splitlines())
        gold[sent_id] = text
    sent_ids = list(gold)
    original = sr_file(root / "original.sr", gold)
    for run in RUNS:
        load_outputs(wh, original, "small", "t", run, campaign="c")
    assert load_human(wh, judgment_csv(root / "human.csv", sent_ids)) == len(RUNS) * JUDGED * 4

    changed_ids = sent_ids[3:8]  # 5 judged sentences get another text
    changed = {i: (" ".join(reversed(t.split())) if i in changed_ids else t) for i, t in gold.items()}
    without = {i: t for i, t in gold.items() if i not in sent_ids[:JUDGED]}
    results = {
        "gone": load_outputs(
            wh, sr_file(root / "without.sr", without), "small", "t", "gone", campaign="c", allow_partial=True
        ),
        "same": load_outputs(wh, sr_file(root / "same.sr", gold), "small", "t", "same", campaign="c"),
    }
    # The changed run through the command line, for its message.
    argv = [
        "--warehouse",
        str(wh),
        "load-outputs",
        str(sr_file(root / "changed.sr", changed)),
        "--corpus",
        "small",
        "--team",
        "t",
        "--run",
        "changed",
        "--campaign",
        "c",
    ]
    return {"wh": wh, "root": root, "sent_ids": sent_ids, "changed_ids": changed_ids, "results": results, "argv": argv}


def test_a_reload_drops_exactly_the_judgments_of_changed_or_missing_texts(reloaded, capsys):
    assert reloaded["results"]["gone"] == (SENTENCES - JUDGED, JUDGED, JUDGED * 4)
    assert reloaded["results"]["same"] == (SENTENCES, 0, 0)
    assert main(reloaded["argv"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "loaded 30 sentences of t/changed for corpus small",
        "20 human judgments dropped: their text changed or is gone",
    ]
    con = duckdb.connect(str(reloaded["wh"]), read_only=True)
    left = con.execute("select run, sent_id, count(*) from raw.human_judgments group by all").fetchall()
    con.close()
    judged = reloaded["sent_ids"][:JUDGED]
    assert sorted(left) == sorted(
        [("same", i, 4) for i in judged] + [("changed", i, 4) for i in judged if i not in reloaded["changed_ids"]]
    )


@pytest.mark.slow
def test_sentence_scores_carry_only_judgments_of_the_current_text(reloaded):
    wh, sent_ids = reloaded["wh"], reloaded["sent_ids"]
    if main(reloaded["argv"]) != 0:  # the previous test may not have run (-k)
        pytest.fail("reloading the changed run failed")
    # A path that bypasses the loaders changes one judged text: the build must not attach its judgments.
    bypassed = sent_ids[10]
    con = duckdb.connect(str(wh))
    con.execute(
        "update raw.outputs set text = text || ' !' where submission_id = 'c/small/t/same' and sent_id = ?", [bypassed]
    )
    con.close()
    build(wh, echo=False, processor="aligned")

    remaining = [
        (run, i, a, c, score(run, k, a, c))
        for run in ("changed", "same")
        for k, i in enumerate(sent_ids[:JUDGED])
        if not (run == "changed" and i in reloaded["changed_ids"]) and not (run == "same" and i == bypassed)
        for a in ANNOTATORS
        for c in CRITERIA
    ]
    expected = expected_z(remaining)
    con = duckdb.connect(str(wh), read_only=True)
    rows = con.execute(
        "select run, sent_id, is_missing, fluency_z, adequacy_z from sentence_scores "
        "where team = 't' order by run, sent_idx"
    ).fetchall()
    con.close()
    assert len(rows) == len(RUNS) * SENTENCES
    attached = 0
    for run, sent_id, is_missing, fluency, adequacy in rows:
        want = expected.get((run, sent_id), {})
        assert (fluency is None) == ("fluency" not in want), (run, sent_id, fluency)
        assert (adequacy is None) == ("adequacy" not in want), (run, sent_id, adequacy)
        if want:
            assert not is_missing
            assert fluency == pytest.approx(want["fluency"], abs=1e-12)
            assert adequacy == pytest.approx(want["adequacy"], abs=1e-12)
            attached += 1
    assert attached == JUDGED - 5 + JUDGED - 1  # nothing of 'gone', 15 of 'changed', 19 of 'same'


def test_an_older_warehouse_gets_the_hashes_of_its_current_texts(tmp_path):
    """Judgments written before text_sha256 existed describe the text loaded now; one of a missing
    sentence (an older reload left it) gets none and is dropped by the next reload of its run."""
    wh = tmp_path / "old.duckdb"
    treebank = tmp_path / "small.conllu"
    treebank.write_text("\n\n".join(blocks(DEMO_DATA_DIR / "treebanks" / "en_ewt_demo.conllu", 3)) + "\n\n")
    load_treebank(wh, treebank, "small")
    texts = {f"s{k}": f"text {k}" for k in range(3)}
    con = duckdb.connect(str(wh))
    sent_ids = [r[0] for r in con.execute("select sent_id from raw.sentences order by sent_idx").fetchall()]
    con.close()
    run = sr_file(tmp_path / "run.sr", dict(zip(sent_ids, texts.values())))
    load_outputs(wh, run, "small", "t", "r")
    csv = tmp_path / "h.csv"
    csv.write_text(
        "corpus,team,run,annotator,sent_id,criterion,score\n"
        + "".join(f"small,t,r,a1,{i},fluency,{k}\n" for k, i in enumerate(sent_ids))
    )
    load_human(wh, csv)
    # The older layout, and an older reload that lost the last sentence but kept its judgment.
    con = duckdb.connect(str(wh))
    con.execute("alter table raw.human_judgments drop column text_sha256")
    con.execute("update raw.outputs set text = null, is_missing = true where sent_id = ?", [sent_ids[2]])
    con.close()
    with open_for_write(wh):
        pass
    con = duckdb.connect(str(wh), read_only=True)
    hashes = dict(con.execute("select sent_id, text_sha256 from raw.human_judgments").fetchall())
    con.close()
    assert hashes == {
        sent_ids[0]: hashlib.sha256(b"text 0").hexdigest(),
        sent_ids[1]: hashlib.sha256(b"text 1").hexdigest(),
        sent_ids[2]: None,
    }
    partial = sr_file(tmp_path / "partial.sr", dict(zip(sent_ids[:2], ["text 0", "text 1"])))
    assert load_outputs(wh, partial, "small", "t", "r", allow_partial=True) == (2, 1, 1)
