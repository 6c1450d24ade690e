"""`srlens suggest-training` on the shared build (the demo and en_ewt test): the file is valid
CoNLL-U made of the treebank's own blocks, and holds the sentences a plain Python reading of
docs/definitions.md picks (reference trees and subtrees from tests/support/reference_*.py)."""

import os

import conllu
import pytest

from srlens.cli import main
from tests.conftest import EN_EWT_TEST, REPO
from tests.support.commands import cli
from tests.support.reference_metrics import base_relation, read_analysis_trees
from tests.support.reference_mining import sentence_subtrees

RUN = "demo/en_ewt_demo/perturb/advmod_moved"
N = 25


def plain_targets(con, submission_id, relations=5, subtrees=5, view="dep", min_edges=5):
    run_dea = con.execute("select dea from submission_scores where submission_id = ?", [submission_id]).fetchone()[0]
    rows = con.execute(
        "select relation, dea, edges from dea_by_relation where submission_id = ?", [submission_id]
    ).fetchall()
    weak = sorted((r for r in rows if r[2] >= min_edges and r[1] < run_dea), key=lambda r: (r[1], -r[2], r[0]))
    rows = con.execute(
        "select subtree, suspicion, c_f from suspicious_subtrees "
        "where submission_id = ? and view = ? and is_suspicious",
        [submission_id, view],
    ).fetchall()
    suspicious = sorted(rows, key=lambda r: (-r[1], -r[2], r[0]))
    return [r[0] for r in weak[:relations]], [r[0] for r in suspicious[:subtrees]]


def plain_pick(trees, relations, subtrees, n, view="dep"):
    """[(sent_id, richness)] richest first, and {target: instances in the whole treebank}."""
    ranked, totals = [], {}
    for tree in trees:
        hits = {}
        for deprel, head in zip(tree.deprels, tree.heads):
            if head and base_relation(deprel) in relations:
                hits[base_relation(deprel)] = hits.get(base_relation(deprel), 0) + 1
        found = sentence_subtrees(tree)
        for subtree in subtrees:
            if found.get((view, subtree)):
                hits[subtree] = len(found[(view, subtree)])
        for key, count in hits.items():
            totals[key] = totals.get(key, 0) + count
        if hits:
            ranked.append((-sum(hits.values()), tree.n, tree.sentence_index, tree.sent_id, hits))
    ranked.sort(key=lambda r: r[:3])
    return ranked[:n], totals


def blocks_of(path):
    """sent_id -> the sentence's block in the file, as written there (without the blank line)."""
    blocks = {}
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        if block.strip():
            sent_id = next(line.split("=", 1)[1].strip() for line in block.splitlines() if line.startswith("# sent_id"))
            blocks[sent_id] = block.strip("\n")
    return blocks


def test_writes_the_richest_sentences_as_a_plain_reading_picks(warehouse_con, built_warehouse, tmp_path, capsys):
    out = tmp_path / "more.conllu"
    assert (
        main(
            [
                "--warehouse",
                str(built_warehouse),
                "suggest-training",
                "--submission",
                RUN,
                "--treebank",
                "en_ewt_test",
                "--sentences",
                str(N),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out

    relations, subtrees = plain_targets(warehouse_con, RUN)
    assert relations[0] == "advmod"  # advmod_moved keeps no advmod edge
    picked, totals = plain_pick(read_analysis_trees(EN_EWT_TEST), relations, subtrees, N)

    sentences = conllu.parse(out.read_text(encoding="utf-8"))
    assert len(sentences) == N
    assert [s.metadata["sent_id"] for s in sentences] == [p[3] for p in picked]
    original = blocks_of(EN_EWT_TEST)
    written = blocks_of(out)
    assert all(written[sent_id] == original[sent_id] for sent_id in written)  # comments and lines kept

    for key in relations + subtrees:
        chosen = sum(p[4].get(key, 0) for p in picked)
        assert f" {key} " in printed and f"instances chosen {chosen} of {totals.get(key, 0)} in en_ewt_test" in next(
            line for line in printed.splitlines() if f" {key} " in line
        )
    assert f"wrote {N} sentences of en_ewt_test" in printed
    assert f"{-sum(p[0] for p in picked)} target instances" in printed


def test_fewer_sentences_hold_a_target_than_asked(built_warehouse, tmp_path, capsys):
    """Only the sentences with a target are written, and the command says so."""
    out = tmp_path / "few.conllu"
    assert (
        main(
            [
                "--warehouse",
                str(built_warehouse),
                "suggest-training",
                "--submission",
                RUN,
                "--treebank",
                "en_ewt_test",
                "--sentences",
                "5000",
                "--out",
                str(out),
                "--relations",
                "1",
                "--subtrees",
                "0",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    trees = read_analysis_trees(EN_EWT_TEST)
    with_advmod = [
        t.sent_id for t in trees if any(h and base_relation(d) == "advmod" for d, h in zip(t.deprels, t.heads))
    ]
    assert sorted(s.metadata["sent_id"] for s in conllu.parse(out.read_text(encoding="utf-8"))) == sorted(with_advmod)
    assert f"(only {len(with_advmod)} sentences hold a target)" in printed


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            ["--submission", "demo/en_ewt_demo/perturb/advmod_move"],
            "did you mean demo/en_ewt_demo/perturb/advmod_moved",
        ),
        (["--treebank", "en_ewt_tset"], "--treebank en_ewt_tset: no such corpus is loaded"),
        (["--sentences", "0"], "--sentences takes a whole number, 1 or more, got 0"),
        (["--relations", "0", "--subtrees", "0"], "nothing to target"),
        (["--out", "nosuchdir/x.conllu"], "no folder"),
    ],
)
def test_refuses_bad_arguments_in_one_line_and_writes_nothing(
    built_warehouse, tmp_path, capsys, monkeypatch, arguments, message
):
    monkeypatch.chdir(tmp_path)
    given = {"--submission": RUN, "--treebank": "en_ewt_test", "--sentences": "3", "--out": "x.conllu"}
    for flag, value in zip(arguments[::2], arguments[1::2]):
        given[flag] = value
    argv = [a for flag, value in given.items() for a in (flag, value)]
    assert main(["--warehouse", str(built_warehouse), "suggest-training", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("srlens: error: ") and message in err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_out_file_is_replaced_only_with_force(built_warehouse, tmp_path, capsys):
    out = tmp_path / "train.conllu"  # e.g. the user's training treebank, named by mistake
    out.write_text("# sent_id = mine\n1\tmine\tmine\tNOUN\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    argv = ["--warehouse", str(built_warehouse), "suggest-training", "--submission", RUN]
    argv += ["--treebank", "en_ewt_test", "--sentences", "3", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {out}: exists; name a new file, or give --force" in err
    assert [s.metadata["sent_id"] for s in conllu.parse(out.read_text(encoding="utf-8"))] == ["mine"]

    assert main([*argv, "--force"]) == 0
    written = [s.metadata["sent_id"] for s in conllu.parse(out.read_text(encoding="utf-8"))]
    assert len(written) == 3 and "mine" not in written


def test_the_readme_transcript_is_what_the_command_prints(built_warehouse, tmp_path, monkeypatch, capsys):
    """docs/analysis.md's "What to do about it" shows this command and its output: they must not drift apart."""
    readme = (REPO / "docs" / "analysis.md").read_text(encoding="utf-8")
    block = readme[readme.index("srlens suggest-training --submission") :]
    block = block[: block.index("```")]
    command = " ".join(line.rstrip("\\").strip() for line in block.splitlines() if not line.startswith("#"))
    shown = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    monkeypatch.chdir(tmp_path)
    assert main(["--warehouse", str(built_warehouse), *command.split()[1:]]) == 0
    assert capsys.readouterr().out.splitlines() == shown


# D5: suggest-training --out the warehouse --force wrote CoNLL-U over the warehouse it read, and its
# temporary file had a fixed name, written through whatever link was planted there.


@pytest.mark.parametrize("name", ["same", "symlink", "hard link", "wal"])
def test_suggest_training_never_writes_over_the_warehouse(demo_wh, tmp_path, capsys, name):
    out = {
        "same": lambda: demo_wh,
        "symlink": lambda: (tmp_path / "link.conllu").symlink_to(demo_wh) or tmp_path / "link.conllu",
        "hard link": lambda: os.link(demo_wh, tmp_path / "hard.conllu") or tmp_path / "hard.conllu",
        "wal": lambda: tmp_path / "w.duckdb.wal",
    }[name]()
    before = demo_wh.read_bytes()
    code, out_text, err = cli(
        capsys, "--warehouse", demo_wh, "suggest-training", "--submission", "demo/en_ewt_demo/perturb/swaps",
        "--treebank", "en_ewt_demo", "--sentences", "5", "--out", out, "--force",
    )  # fmt: skip
    assert code == 2 and out_text == "" and err.count("\n") == 1
    assert f"--out {out}: is the warehouse {demo_wh} (or another name of it); name another file" in err
    assert demo_wh.read_bytes() == before


def test_suggest_training_writes_no_planted_temporary_file(tmp_path):
    from srlens.suggest import write_blocks

    victim = tmp_path / "victim.duckdb"
    victim.write_bytes(b"the warehouse")
    (tmp_path / ".z.conllu.partial").symlink_to(victim)
    write_blocks(tmp_path / "z.conllu", [(["# sent_id = 1"], ["1\ta\ta\tX\t_\t_\t0\troot\t_\t_"])])
    assert victim.read_bytes() == b"the warehouse"
    assert (tmp_path / "z.conllu").read_text() == "# sent_id = 1\n1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".z.conllu.partial", "victim.duckdb", "z.conllu"]


# D9: messages about reference-free corpora said what was not true ("no such corpus").


def test_suggest_training_says_a_reference_free_corpus_has_no_treebank(reference_free_wh, tmp_path, capsys):
    code, _, err = cli(
        capsys, "--warehouse", reference_free_wh, "suggest-training", "--submission", "default/mt/t/r",
        "--treebank", "mt", "--sentences", "5", "--out", tmp_path / "x.conllu",
    )  # fmt: skip
    assert code == 2 and err == (
        "srlens: error: --treebank mt: a corpus without a treebank (its runs were loaded with --no-reference): "
        "no treebank sentence to pick; name a loaded treebank\n"
    )
    assert not (tmp_path / "x.conllu").exists()


# D12: suggest-training wrote sentences of another language than the run's (an English run, the French
# demo treebank) without a word.


def test_sentences_of_another_language_come_with_a_note(built_warehouse, tmp_path, capsys):
    argv = ["--warehouse", built_warehouse, "suggest-training", "--submission", "demo/en_ewt_demo/perturb/advmod_moved"]
    code, out, _ = cli(capsys, *argv, "--treebank", "fr_gsd_demo", "--sentences", 3, "--out", tmp_path / "fr.conllu")
    assert code == 0 and out.splitlines()[-1] == (
        "note: fr_gsd_demo is in language fr, the run's corpus in en: these sentences are of another language "
        "than the run's"
    )
    code, out, _ = cli(capsys, *argv, "--treebank", "en_ewt_test", "--sentences", 3, "--out", tmp_path / "en.conllu")
    assert code == 0 and "another language" not in out
