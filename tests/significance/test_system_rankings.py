"""SPEC 12, "System rankings, as WMT publishes them": the system_rankings mart against a plain
Python reading of the rule (below), on a small warehouse whose runs come in tied pairs, on the
demo, and on hand-made p-values where the expected clusters are worked out by hand."""

import json
import re
import shutil

import duckdb
import pytest

from srlens.build import build, run_dbt
from srlens.demo import DEMO_MANIFEST
from srlens.docs import last_build_vars
from srlens.loaders.load import load_outputs, load_treebank
from srlens.report import write_report
from srlens.report.runs import run_file
from tests.conftest import require_shared

DEMO = DEMO_MANIFEST.parent
CORPUS = "en_ewt_demo"
COLUMNS = ("rank", "cluster", "rank_best", "rank_worst")


def reference_rankings(scores, tests, alpha, lower_is_better=False):
    """SPEC 12 word by word. scores: {run: corpus score}; tests: {(a, b): (p_value, d_obs)}, each
    unordered pair of runs once (a pair without a test counts as p = 1). Returns {run: (rank,
    cluster, rank_best, rank_worst)}."""
    sign = -1 if lower_is_better else 1
    runs = sorted(scores, key=lambda s: (-sign * scores[s], s))
    n = len(runs)
    m = n * (n - 1) // 2
    # Holm's step-down: p_(j) ascending, adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j))
    adjusted, running = {}, 0.0
    for j, (pair, (p, _)) in enumerate(sorted(tests.items(), key=lambda t: (t[1][0], t[0])), start=1):
        running = max(running, min(1.0, (m - j + 1) * p))
        adjusted[pair] = running
    better = set()
    for (a, b), (_, delta) in tests.items():
        if adjusted[a, b] < alpha and sign * delta != 0:
            better.add((a, b) if sign * delta > 0 else (b, a))
    out, cluster = {}, 1
    for i, run in enumerate(runs, start=1):
        if i > 1 and all((x, y) in better for x in runs[: i - 1] for y in runs[i - 1 :]):
            cluster += 1
        rank_best = 1 + sum((x, run) in better for x in runs)
        rank_worst = n - sum((run, y) in better for y in runs)
        out[run] = (i, cluster, rank_best, rank_worst)
    return out


def mart_rankings(con, corpus, metric):
    rows = con.execute(
        f"select submission_id, {', '.join(COLUMNS)} from system_rankings where corpus = ? and metric = ?",
        [corpus, metric],
    ).fetchall()
    return {sid: tuple(rest) for sid, *rest in rows}


def expected_rankings(con, corpus, metric, alpha=0.05):
    """The reference on the warehouse's own scores and paired tests."""
    scores = dict(
        con.execute(
            f"select submission_id, {metric} from submission_scores where corpus = ? and {metric} is not null",
            [corpus],
        ).fetchall()
    )
    tests = {
        (a, b): (p, delta)
        for a, b, p, delta in con.execute(
            "select submission_a, submission_b, p_value, delta from pairwise_significance "
            "where corpus = ? and metric = ? and submission_a < submission_b",
            [corpus, metric],
        ).fetchall()
        if a in scores and b in scores
    }
    return reference_rankings(scores, tests, alpha)


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """en_ewt_demo with gold, swaps and random, and gold and swaps loaded once more by another team:
    two pairs of identical runs (equal scores, p = 1)."""
    require_shared()
    warehouse = tmp_path_factory.mktemp("rankings") / "srlens.duckdb"
    load_treebank(warehouse, DEMO / "treebanks" / f"{CORPUS}.conllu", CORPUS)
    for team, run in (("sys", "gold"), ("sys", "swaps"), ("sys", "random"), ("copy", "gold"), ("copy", "swaps")):
        path = DEMO / "outputs" / CORPUS / f"{run}.sr.txt"
        load_outputs(warehouse, path, CORPUS, team, run, campaign="rank")
    # the mart and what it is made of; the tests read nothing else
    build(warehouse, echo=False, processor="aligned", select="+system_rankings")
    return warehouse


@pytest.fixture(scope="module")
def tied_con(tied):
    con = duckdb.connect(str(tied), read_only=True)
    yield con
    con.close()


def run_id(team, run):
    return f"rank/{CORPUS}/{team}/{run}"


@pytest.mark.slow  # a warehouse of its own
def test_tied_runs_share_their_cluster_worked_out_by_hand(tied_con):
    """Each copy equals its original (tie: the smaller submission_id first), and gold > swaps > random
    with p = 1/1001 for every such pair: Holm's largest factor is 10 of 10 pairs, 0.01 < 0.05."""
    gold, gold_copy = run_id("sys", "gold"), run_id("copy", "gold")
    swaps, swaps_copy, random = run_id("sys", "swaps"), run_id("copy", "swaps"), run_id("sys", "random")
    want = {
        gold_copy: (1, 1, 1, 2),
        gold: (2, 1, 1, 2),
        swaps_copy: (3, 2, 3, 4),
        swaps: (4, 2, 3, 4),
        random: (5, 3, 5, 5),
    }
    for metric in ("corpus_bleu", "dea"):
        assert mart_rankings(tied_con, CORPUS, metric) == want, metric
    p_values = dict(
        tied_con.execute(
            "select submission_a || ' ' || submission_b, p_value from pairwise_significance "
            "where metric = 'corpus_bleu' and submission_a < submission_b"
        ).fetchall()
    )
    assert p_values[f"{gold_copy} {gold}"] == 1.0 and p_values[f"{swaps_copy} {swaps}"] == 1.0
    assert max(p for pair, p in p_values.items() if pair not in (f"{gold_copy} {gold}", f"{swaps_copy} {swaps}")) == (
        pytest.approx(1 / 1001)
    )
    row = tied_con.execute(
        "select campaign, score, submissions from system_rankings where submission_id = ? and metric = 'dea'", [gold]
    ).fetchone()
    assert row == ("rank", 1.0, 5)


@pytest.mark.slow  # a warehouse of its own
def test_every_metric_equals_the_reference(tied_con):
    metrics = [m for (m,) in tied_con.execute("select distinct metric from pairwise_significance").fetchall()]
    assert len(metrics) >= 10
    for metric in metrics:
        assert mart_rankings(tied_con, CORPUS, metric) == expected_rankings(tied_con, CORPUS, metric), metric


def test_the_demo_equals_the_reference(warehouse_con):
    """Every corpus and metric of the demo (eight runs per corpus, among them the baselines)."""
    keys = warehouse_con.execute("select distinct corpus, metric from pairwise_significance order by all").fetchall()
    assert len(keys) >= 20
    joined = 0
    for corpus, metric in keys:
        got = mart_rankings(warehouse_con, corpus, metric)
        assert got == expected_rankings(warehouse_con, corpus, metric), (corpus, metric)
        clusters = [c for _, c, _, _ in got.values()]
        joined += len(clusters) - len(set(clusters))
    assert joined > 0  # some runs share a cluster: the case the rule is about


# Hand-made tests of five runs (scores and p-values written into a copy of `tied`, then dbt runs the
# mart alone): the expected figures are worked out from SPEC 12 by hand.
#   score: A 0.9, B 0.8, C 0.8, D 0.6, E 0.5 (B and C tie: B first, its submission_id is smaller).
#   p = 0.001 for A-C and for every pair of {A, B, C} x {D, E}: 7 pairs, all Holm-adjusted to
#   10 * 0.001 = 0.01 (the running maximum from the first); D-E has p = 0.02, 8th: adjusted
#   max(0.01, 3 * 0.02) = 0.06, not < 0.05 (it would be without the correction); A-B and B-C have
#   p = 0.5 (adjusted 1).
#   So A beats C (not B), and A, B, C beat D and E. No boundary after A (A ~ B) or B (B ~ C): A, B, C
#   are cluster 1, as C, below B, is indistinguishable from B; D and E cluster 2.
HAND_SCORES = {"A": 0.9, "B": 0.8, "C": 0.8, "D": 0.6, "E": 0.5}
HAND_P = {("A", "B"): 0.5, ("B", "C"): 0.5, ("D", "E"): 0.02}
HAND_WANT = {
    0.05: {"A": (1, 1, 1, 2), "B": (2, 1, 1, 3), "C": (3, 1, 2, 3), "D": (4, 2, 4, 5), "E": (5, 2, 4, 5)},
    # at 0.1, D beats E (0.06 < 0.1): E is alone in cluster 3
    0.1: {"A": (1, 1, 1, 2), "B": (2, 1, 1, 3), "C": (3, 1, 2, 3), "D": (4, 2, 4, 4), "E": (5, 3, 5, 5)},
}


def hand_made_warehouse(tied, path):
    shutil.copy(tied, path)
    con = duckdb.connect(str(path))
    try:
        runs = [sid for (sid,) in con.execute("select submission_id from submission_scores order by 1").fetchall()]
        named = dict(zip(HAND_SCORES, runs))
        for name, sid in named.items():
            con.execute(
                "update submission_scores set corpus_bleu = ? where submission_id = ?", [HAND_SCORES[name], sid]
            )
        for a in HAND_SCORES:
            for b in HAND_SCORES:
                if a != b:  # both orders: the same p, opposite deltas
                    p = HAND_P.get((a, b), HAND_P.get((b, a), 0.001))
                    con.execute(
                        "update pairwise_significance set p_value = ?, delta = ? "
                        "where metric = 'corpus_bleu' and submission_a = ? and submission_b = ?",
                        [p, HAND_SCORES[a] - HAND_SCORES[b], named[a], named[b]],
                    )
    finally:
        con.close()
    return named


@pytest.mark.slow  # a warehouse of its own
@pytest.mark.parametrize("alpha", sorted(HAND_WANT))
def test_hand_made_p_values_give_the_clusters_worked_out_by_hand(tied, tmp_path, alpha):
    warehouse = tmp_path / "hand.duckdb"
    named = hand_made_warehouse(tied, warehouse)
    dbt_vars = {**last_build_vars(tied), "ranking_alpha": alpha}
    ok, output = run_dbt(
        ["run", "--select", "system_rankings", "--vars", json.dumps(dbt_vars)], warehouse, tmp_path / "dbt", echo=False
    )
    assert ok, output[-3000:]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        got = mart_rankings(con, CORPUS, "corpus_bleu")
        assert got == {named[k]: v for k, v in HAND_WANT[alpha].items()}
        assert got == expected_rankings(con, CORPUS, "corpus_bleu", alpha)
    finally:
        con.close()


def test_the_reference_itself_on_the_hand_made_case():
    """The reference's reading, on the same hand-made tests (d_obs = score difference)."""
    tests = {}
    for a in HAND_SCORES:
        for b in HAND_SCORES:
            if a < b:
                tests[a, b] = (HAND_P.get((a, b), 0.001), HAND_SCORES[a] - HAND_SCORES[b])
    for alpha, want in HAND_WANT.items():
        assert reference_rankings(HAND_SCORES, tests, alpha) == want
    # lower is better: the order turns round, and so do the clusters
    flipped = reference_rankings(
        {k: -v for k, v in HAND_SCORES.items()}, {k: (p, -d) for k, (p, d) in tests.items()}, 0.05, True
    )
    assert flipped == HAND_WANT[0.05]


def test_the_report_shows_the_clusters_and_each_run_its_rank_range(built_warehouse, warehouse_con, tmp_path):
    index = write_report(built_warehouse, tmp_path / "report")
    text = index.read_text(encoding="utf-8")
    rows = warehouse_con.execute("""
        select r.submission_id, s.team || '/' || s.run, r.cluster, r.rank_best, r.rank_worst, r.submissions
        from system_rankings r join submission_scores s using (submission_id)
        where r.corpus = 'en_ewt_demo' and r.metric = 'dea' and s.campaign = 'demo' order by r.rank""").fetchall()
    # the overview: the English corpus's section (the first), its DEA clusters in rank order
    english = text[text.index('id="c0-k0"') : text.index('id="c0-k1"')]
    (listed,) = re.findall(r'<ol class="clusters" aria-label="DEA \(micro\) clusters">(.*?)</ol>', english)
    shown = [
        (int(c), run) for c, runs in re.findall(r'<li value="(\d+)">(.*?)</li>', listed) for run in runs.split(", ")
    ]
    ranges = [f"{b}" if b == w else f"{b}–{w}" for *_, b, w, _ in rows]
    assert shown == [(c, f"{name} ({r})") for (_, name, c, *_), r in zip(rows, ranges)]
    assert any(b != w for *_, b, w, _ in rows)  # a range, not only single ranks
    # a run page: its rank range and cluster on DEA
    for sid, _, cluster, best, worst, n in rows:
        page = (index.parent / run_file(sid)).read_text(encoding="utf-8")
        ranks = f"rank {best}" if best == worst else f"ranks {best}–{worst}"
        assert f"DEA (micro) {ranks} of {n}, cluster {cluster}." in page, sid
