"""`srlens report`: the HTML report's numbers against the marts, its behaviour on empty marts and
unbuilt warehouses, the run and sentence pages of the explorer, and the pages as headless Chromium
renders them (DOM, screenshots, and a click-through driven over WebDriver)."""

import html
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pytest
from matplotlib.image import imread

from srlens.cli import main
from srlens.report import queries as rpt
from srlens.report import write_report
from tests.support.chart_reading import (
    SVG,
    cells_of,
    chart_trees,
    close_colour,
    linear,
    matplotlib_rgb,
    nearest,
    svg_texts,
    x_scale,
    y_scale,
)
from tests.support.commands import cli
from tests.support.html_page import Page, as_dicts
from tests.support.webdriver import ELEMENT, ENTER, SHIFT, Browser

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]  # containers often have a tiny /dev/shm


@pytest.fixture(scope="module")
def page_path(built_warehouse, tmp_path_factory):
    return write_report(built_warehouse, tmp_path_factory.mktemp("report") / "out")


@pytest.fixture(scope="module")
def page_text(page_path):
    return page_path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(page_text):
    return Page(page_text)


@pytest.fixture(scope="module")
def con(built_warehouse):
    c = duckdb.connect(str(built_warehouse), read_only=True)
    yield c
    c.close()


# --------------------------------------------------------------------------- values


def test_ranking_lists_submissions_in_the_order_of_the_marts_scores(page, con):
    rows = as_dicts(page.table_after("en_ewt_demo (demo)", "Submissions ranked by each score"))
    expected = con.execute("""
        select team || '/' || run, corpus_bleu, dea from submission_scores
        where campaign = 'demo' and corpus = 'en_ewt_demo' order by corpus_bleu desc""").fetchall()
    assert [r["submission"] for r in rows] == [s for s, _, _ in expected]
    assert [r["BLEU (corpus)"] for r in rows] == [f"{b:.3f} (#{i})" for i, (_, b, _) in enumerate(expected, 1)]
    # the DEA column carries each run's own rank on DEA
    by_dea = sorted(expected, key=lambda e: -e[2])
    dea_cells = {r["submission"]: r["DEA (micro)"] for r in rows}
    assert [dea_cells[s] for s, _, _ in by_dea] == [f"{d:.3f} (#{i})" for i, (_, _, d) in enumerate(by_dea, 1)]
    # no rule score column: the aligned processor leaves rule_score NULL
    assert "rule score" not in rows[0] and "SSA" in rows[0]


def test_corpus_statistics_show_the_corpus_stats_numbers(page, con):
    def expect(corpus):
        s = con.execute("select * from corpus_stats where corpus = ?", [corpus]).df().iloc[0]
        return {
            "sentences": f"{s.sentences:,}",
            "MDD": f"{s.mdd_mean:.2f} ({s.mdd_sd:.2f})",
            "depth": f"{s.tree_depth_mean:.2f} ({s.tree_depth_sd:.2f})",
            "arity": f"{s.mean_arity_mean:.2f} ({s.mean_arity_sd:.2f})",
            "NP %": f"{s.nonprojective_pct:.2f}",
        }

    demo = {r["corpus"]: r for r in as_dicts(page.table_after("Campaign demo", "Corpus statistics"))}
    assert sorted(demo) == ["en_ewt_demo", "fr_gsd_demo"]
    for corpus, row in demo.items():
        assert row["S"] == "8"  # six demo runs and two baselines each
        assert {k: row[k] for k in expect(corpus)} == expect(corpus)
    assert demo["en_ewt_demo"]["NP %"] == "2.00"  # as docs/querying.md says
    unused = {r["corpus"]: r for r in as_dicts(page.table_after("Treebanks without submissions"))}
    assert sorted(unused) == ["en_ewt_test", "entropy_example", "figure1"]
    assert unused["en_ewt_test"]["sentences"] == "2,077"
    assert {k: unused["en_ewt_test"][k] for k in expect("en_ewt_test")} == expect("en_ewt_test")


def test_heatmap_shows_the_median_rho_of_the_campaign(page, con):
    frame = con.execute("select metric_a, metric_b, rho from metric_correlations where campaign = 'demo'").df()
    medians = frame.dropna().groupby(["metric_a", "metric_b"]).rho.median()
    cells = [f"{v:.2f}".replace("0.", ".", 1) for v in medians]
    # the campaign heatmap is the page's first chart; its cells are the only 2-decimal numbers
    assert "demo: median over submissions" in page.svgs[0]
    texts = page.svgs[0].split()
    assert sorted(t for t in texts if re.fullmatch(r"-?1\.00|-?\.\d\d", t)) == sorted(cells)
    assert ".89" in texts and round(medians["bleu", "dea"], 2) == 0.89  # docs/analysis.md's finding


def test_dea_per_relation_is_sorted_worst_first_with_the_marts_means(page, con):
    rows = as_dicts(page.table_after("en_ewt_demo (demo)", "DEA per relation across submissions, worst first"))
    frame = con.execute("""
        select relation, max(edges) as edges, avg(dea) as mean
        from dea_by_relation where corpus = 'en_ewt_demo' group by relation""").df()
    frame = frame[frame.edges >= rpt.MIN_EDGES].sort_values(["mean", "relation"])
    assert [r["relation"] for r in rows] == frame.relation.tolist()
    assert [r["DEA (mean)"] for r in rows] == [f"{v:.3f}" for v in frame["mean"]]
    assert [r["edges"] for r in rows] == [f"{v:,}" for v in frame.edges]
    assert (
        len(rows)
        < con.execute("select count(distinct relation) from dea_by_relation where corpus = 'en_ewt_demo'").fetchone()[0]
    )


def test_subtrees_per_corpus_match_the_summary_mart(page, con):
    section = page.section_text("en_ewt_demo (demo)", "Top suspicious subtrees")
    tables = [as_dicts(item[1]) for item in section if item[0] == "table"]
    views = [item[2] for item in section if item[0] == "h"]
    assert views == ["view dep", "view pos", "view pos_dep", "view lemma"]
    for view, rows in zip(["dep", "pos", "pos_dep", "lemma"], tables):
        expected = con.execute(
            """
            select subtree, coverage_pct, suspicious_in, mean_suspicion
            from suspicious_subtrees_summary
            where scope = 'corpus' and scope_value = 'en_ewt_demo' and view = ? and suspicious_in > 0
            order by coverage_pct desc, mean_suspicion desc, subtree limit ?""",
            [view, rpt.TOP_SUBTREES],
        ).fetchall()
        shown = [(r["subtree"], r["coverage %"], r["suspicious in"], r["MSS"]) for r in rows]
        want = [(s, f"{c:.1f}", str(n), f"{m:.2f}") for s, c, n, m in expected]
        assert len(shown) == rpt.TOP_SUBTREES
        # the same rows; in order up to MSS equal to the last bit, which the two sums may round apart
        key = lambda row: (-float(row[1]), -float(row[3]), row[0])  # noqa: E731
        assert sorted(shown, key=key) == sorted(want, key=key)
        assert [float(row[1]) for row in shown] == sorted((float(row[1]) for row in shown), reverse=True)


def test_projectivity_table_keeps_untested_medians(page, page_text):
    section = page.section_text("en_ewt_demo (demo)", "Projective vs non-projective sentences")
    rows = as_dicts(section[0][1])
    assert len(rows) == 8 and {r["score"] for r in rows} == {"bleu"}  # no human judgments in the demo
    assert {r["tested"] for r in rows} == {"no"}  # 2% non-projective, under the 5% threshold
    gold = next(r for r in rows if r["submission"] == "baseline/gold")
    assert (gold["n proj."], gold["n non-proj."], gold["median proj."]) == ("196", "4", "1.000")
    assert "Not tested: non-projective sentences are 4 of 200 (2.0%)" in page_text


def test_every_query_is_shown_verbatim_with_its_parameters(page_text, page):
    for name in [
        "SQL_CAMPAIGNS",
        "SQL_CORPUS_STATS",
        "SQL_RANKING",
        "SQL_CORPUS_DEA",
        "SQL_PROJECTIVITY",
        "SQL_SIGNIFICANCE",
        "SQL_BUCKETS",
        "SQL_CORPUS_SUBTREES",
        "SQL_RULES",
        "SQL_CAMPAIGN_CORRELATIONS",
        "SQL_CORPUS_CORRELATIONS",
        "SQL_CAMPAIGN_DEA",
        "SQL_CAMPAIGN_SUBTREES",
        "SQL_UNUSED_CORPORA",
    ]:
        assert f"<pre>{html.escape(getattr(rpt, name))}</pre>" in page_text, name
    assert "-- $campaign = &#x27;demo&#x27;\n-- $corpus = &#x27;fr_gsd_demo&#x27;" in page_text
    # one SQL block per analysis heading, plus the campaign list and the unused treebanks
    analyses = sum(1 for item in page.items if item[0] == "h" and item[1] == 4)
    assert page_text.count('<details class="sql">') == analyses + 2
    assert "No rule scores" in page_text  # aligned: no parse, so no rule fired


def test_page_is_self_contained(page_text, page_path):
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page_text, re.I)
    assert not re.search(r"<(iframe|img)\b|@import|url\(\s*['\"]?https?", page_text, re.I)
    # the only script and style sheet are the shipped ones, next to the page
    assert re.findall(r"<script\b[^>]*>", page_text) == ['<script src="report.js" defer>']
    assert re.findall(r"<link\b[^>]*>", page_text) == ['<link rel="stylesheet" href="report.css">']
    # every link of the page goes to a file the report wrote (run pages) or to an anchor of the page
    targets = set(re.findall(r'(?:href|src)="([^"#]+)', page_text))
    assert {"report.js", "report.css"} < targets and any(t.startswith("runs/") for t in targets)
    assert all((page_path.parent / t).is_file() for t in targets)
    # campaign heatmap; ranking, buckets, heatmap, DEA, projectivity x 2 corpora
    assert page_text.count("<svg") == 11
    # the charts share one document: ids are unique and every reference finds its target
    ids = re.findall(r'\bid="([^"]*)"', page_text)
    assert len(ids) == len(set(ids))
    refs = re.findall(r'(?:url\(#|href="#)([^")]*)', page_text)
    assert refs and set(refs) <= set(ids)


# --------------------------------------------------------------------------- other warehouses


def small_warehouse(built_warehouse, path, edit):
    """A warehouse holding only the report's marts, copied from the built one, then edited."""
    c = duckdb.connect(str(path))
    c.execute(f"attach '{built_warehouse}' as src (read_only)")
    for mart in rpt.REQUIRED_MARTS:
        c.execute(f"create table main.{mart} as select * from src.main.{mart}")
    c.execute("create schema intermediate")  # the sentence view's trees and output words
    for table in ("int_analysis_words", "int_output_words_aligned", "int_output_words_parsed", "int_reference_words"):
        c.execute(f"create table intermediate.{table} as select * from src.intermediate.{table}")
    c.execute("detach src")
    for sql in edit:
        c.execute(sql)
    c.close()
    return path


def test_rules_and_tested_projectivity_render(built_warehouse, tmp_path):
    wh = small_warehouse(
        built_warehouse,
        tmp_path / "w.duckdb",
        [
            # two rules fired in two en_ewt_demo runs (as a stanza build would give)
            """insert into lambre_rule_scores (submission_id, rule_id, corpus, team, run, campaign, kind,
                                          matches, failures, score)
           values ('demo/en_ewt_demo/baseline/gold', 'en|agreement|det|DET>NOUN|Number', 'en_ewt_demo',
                   'baseline', 'gold', 'demo', 'agreement', 18, 2, 0.9),
                  ('demo/en_ewt_demo/perturb/swaps', 'en|agreement|det|DET>NOUN|Number', 'en_ewt_demo',
                   'perturb', 'swaps', 'demo', 'agreement', 2, 8, 0.2),
                  ('demo/en_ewt_demo/baseline/gold', 'en|argstruct|obj|PRON>VERB|Case|dep', 'en_ewt_demo',
                   'baseline', 'gold', 'demo', 'argstruct', 4, 0, 1.0)""",
            "update submission_scores set rule_score = 0.95 where submission_id = 'demo/en_ewt_demo/baseline/gold'",
            """update projectivity_tests set tested = true, u = 100, p_value = 0.001, skipped_reason = null
           where submission_id = 'demo/en_ewt_demo/perturb/swaps'""",
        ],
    )
    page = Page(write_report(wh, tmp_path / "out").read_text())
    rules = as_dicts(page.table_after("en_ewt_demo (demo)", "Rule scores per rule"))
    assert [
        (r["rule"], r["submissions"], r["matches"], r["failures"], r["pooled"], r["mean"], r["min"]) for r in rules
    ] == [
        ("en|agreement|det|DET>NOUN|Number", "2", "20", "10", "0.667", "0.550", "0.200"),  # pooled 20/30
        ("en|argstruct|obj|PRON>VERB|Case|dep", "1", "4", "0", "1.000", "1.000", "1.000"),
    ]
    ranking = as_dicts(page.table_after("en_ewt_demo (demo)", "Submissions ranked by each score"))
    assert {r["submission"]: r["rule score"] for r in ranking}["baseline/gold"] == "0.950 (#1)"
    # the tested, significant run is starred in the projectivity chart; the rules chart names both rules
    charts = "\n".join(page.svgs)
    assert "perturb/swaps *" in charts and "baseline/gold *" not in charts
    assert "en|argstruct|obj|PRON>VERB|Case|dep" in charts
    # the rules chart: a bar to each rule's mean, its whisker from the worst to the best run
    text = (tmp_path / "out" / "index.html").read_text()
    svg = next(s for s in chart_trees(text) if "rule score: mean" in "".join(s.itertext()))
    value, names = x_scale(svg), [t for t in svg_texts(svg) if t[3] == "end"]
    bars = {}
    for bar in svg.iter(SVG + "rect"):
        x, y, w, h = (float(bar.get(k)) for k in ("x", "y", "width", "height"))
        bars[nearest(names, y + h / 2, 1)] = (value(x), value(x + w))
    whiskers = {}
    for line in svg.iter(SVG + "line"):
        if line.get("y1") == line.get("y2") and line.get("stroke-width") == "0.9":
            whiskers[nearest(names, float(line.get("y1")), 1)] = (
                value(float(line.get("x1"))),
                value(float(line.get("x2"))),
            )  # noqa: E501
    rules = ["en|agreement|det|DET>NOUN|Number", "en|argstruct|obj|PRON>VERB|Case|dep"]
    assert sorted(bars) == sorted(whiskers) == rules
    assert [bars[r] for r in rules] == [pytest.approx((0, 0.55), abs=0.003), pytest.approx((0, 1.0), abs=0.003)]
    assert [whiskers[r] for r in rules] == [pytest.approx((0.2, 0.9), abs=0.003), pytest.approx((1.0, 1.0), abs=0.003)]
    # the copy has no meta.builds
    assert "build time unknown" in text


def test_empty_marts_give_notes_not_errors(built_warehouse, tmp_path):
    wh = small_warehouse(built_warehouse, tmp_path / "w.duckdb", [f"delete from {mart}" for mart in rpt.REQUIRED_MARTS])
    text = write_report(wh, tmp_path / "none").read_text()
    assert "No submissions loaded." in text and "<svg" not in text

    # submissions with scores, but nothing else computed for them
    wh = small_warehouse(
        built_warehouse,
        tmp_path / "w2.duckdb",
        [f"delete from {mart}" for mart in rpt.REQUIRED_MARTS if mart not in ("corpus_stats", "submission_scores")],
    )
    page = Page(write_report(wh, tmp_path / "scores").read_text())
    section = page.section_text("en_ewt_demo (demo)")
    text = (tmp_path / "scores" / "index.html").read_text()
    for expected in [
        "No correlation could be computed",
        "No relation has 20 reference edges",
        "No projectivity comparison",
        "No suspicious subtree in this corpus",
        "No rule scores",
        "No suspicious subtree in this campaign",
    ]:
        assert expected in text
    assert len(page.svgs) == 2  # the two rankings
    assert sum(1 for item in section if item[0] == "table") == 1


def test_single_submission_corpus(built_warehouse, tmp_path):
    keep = "demo/fr_gsd_demo/baseline/hall_nemec"
    wh = small_warehouse(
        built_warehouse,
        tmp_path / "w.duckdb",
        [
            *(
                f"delete from {mart} where submission_id like 'demo/fr_gsd_demo/%' and submission_id <> '{keep}'"
                for mart in rpt.REQUIRED_MARTS
                if mart
                not in ("corpus_stats", "suspicious_subtrees_summary", "correlation_summary", "pairwise_significance")
            ),
            "delete from pairwise_significance where corpus = 'fr_gsd_demo'",
        ],
    )  # one run: no pair
    text = write_report(wh, tmp_path / "out").read_text()
    page = Page(text)
    assert "No pair of runs to compare (one run on this corpus)." in text
    rows = as_dicts(page.table_after("fr_gsd_demo (demo)", "Submissions ranked by each score"))
    assert [r["submission"] for r in rows] == ["baseline/hall_nemec"]
    assert rows[0]["BLEU (corpus)"].endswith("(#1)")
    dea = as_dicts(page.table_after("fr_gsd_demo (demo)", "DEA per relation across submissions, worst first"))
    assert {r["submissions"] for r in dea} == {"1"} and all(r["min"] == r["max"] for r in dea)
    assert len(page.svgs) == 11  # one run still gets every chart


def test_unbuilt_or_missing_warehouse_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"no warehouse at .*srlens build"):
        write_report(tmp_path / "missing.duckdb", tmp_path / "out")
    raw = tmp_path / "loaded.duckdb"  # loaded, never built
    duckdb.connect(str(raw)).execute("create schema raw; create table raw.sentences (corpus varchar)").close()
    with pytest.raises(ValueError, match=r"is not built \(missing marts: corpus_stats, .*run `srlens build`"):
        write_report(raw, tmp_path / "out")
    assert main(["--warehouse", str(raw), "report", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "srlens build" in err
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- the output folder


KEPT_RUN = "demo/en_ewt_demo/perturb/swaps"


def one_run_warehouse(built_warehouse, path, edit=()):
    """The report's marts of one run: a report of a few pages, quick to write twice."""
    c = duckdb.connect(str(built_warehouse), read_only=True)
    with_runs = {
        t
        for (t,) in c.execute(
            "select table_name from information_schema.columns "
            "where table_schema = 'main' and column_name = 'submission_id'"
        ).fetchall()
    }
    c.close()
    keep = f"delete from {{}} where submission_id <> '{KEPT_RUN}'"
    return small_warehouse(
        built_warehouse, path, [*(keep.format(m) for m in rpt.REQUIRED_MARTS if m in with_runs), *edit]
    )


def files_of(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_refuses_a_folder_srlens_did_not_write_and_deletes_nothing(built_warehouse, tmp_path, capsys):
    project = tmp_path / "project"
    (project / "runs").mkdir(parents=True)
    (project / "runs" / "mine.txt").write_text("the user's own")
    assert main(["--warehouse", str(built_warehouse), "report", str(project)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"report folder {project}: holds files srlens did not write" in err
    assert files_of(project) == {"runs/mine.txt": b"the user's own"}


def test_a_second_report_replaces_the_pages_of_the_first(built_warehouse, tmp_path):
    from srlens.report.runs import run_file

    wh = one_run_warehouse(built_warehouse, tmp_path / "w.duckdb")
    out = tmp_path / "out"
    out.mkdir()  # an empty folder is taken
    write_report(wh, out)
    first = files_of(out)
    assert {".srlens-report", run_file(KEPT_RUN), "index.html"} <= first.keys()
    assert any(k.startswith("sentences/") for k in first)
    (out / "runs" / "stale.html").write_text("a run of an earlier build")
    (out / "sentences" / "stale").mkdir()
    (out / "sentences" / "stale" / "1.html").write_text("a sentence of an earlier build")
    (out / "notes.txt").write_text("the user's notes beside the report")
    write_report(wh, out)
    assert files_of(out) == {**first, "notes.txt": b"the user's notes beside the report"}


def test_a_second_report_links_the_pages_of_unchanged_runs_and_draws_the_others(built_warehouse, tmp_path):
    """srlens/report/pages.py: a run whose inputs (rows, anchor, code) did not change keeps its earlier
    pages (the same files, hard-linked); a run whose fingerprint differs is drawn again."""
    from srlens.report.runs import run_file, sentence_dir

    wh = one_run_warehouse(built_warehouse, tmp_path / "w.duckdb")
    out = tmp_path / "out"
    write_report(wh, out)
    first = files_of(out)
    pages = [out / run_file(KEPT_RUN), *sorted((out / sentence_dir(KEPT_RUN)).iterdir())]
    assert len(pages) > 1
    inodes = [p.stat().st_ino for p in pages]
    write_report(wh, out)
    assert files_of(out) == first and [p.stat().st_ino for p in pages] == inodes
    page = out / run_file(KEPT_RUN)
    page.write_bytes(page.read_bytes().replace(b"srlens report inputs ", b"srlens report inputs 0", 1))
    write_report(wh, out)
    assert files_of(out) == first  # drawn again, the same bytes
    assert all(p.stat().st_ino != inode for p, inode in zip(pages, inodes))


def test_a_report_that_fails_halfway_leaves_the_earlier_one_whole(built_warehouse, tmp_path):
    out = tmp_path / "out"
    write_report(one_run_warehouse(built_warehouse, tmp_path / "w.duckdb"), out)
    before = files_of(out)
    # the overview and run page render, the sentence pages need the analysis trees
    broken = one_run_warehouse(built_warehouse, tmp_path / "b.duckdb", ["drop table intermediate.int_analysis_words"])
    with pytest.raises(duckdb.CatalogException, match="int_analysis_words"):
        write_report(broken, out)
    assert files_of(out) == before and sorted(p.name for p in out.iterdir()) == sorted(
        [".srlens-report", "index.html", "report.css", "report.js", "runs", "sentences"]
    )


def test_the_overview_worker_writes_the_index_the_report_process_writes(built_warehouse, capsys):
    from srlens.report import open_warehouse, overview

    if overview.cores() < 2:
        pytest.skip("one core: the report writes index.html itself")
    c = open_warehouse(built_warehouse)
    here = overview.index_html(c, built_warehouse)
    assert here.count('<div class="chart"><svg') >= 11
    worker = overview.Worker(built_warehouse)
    assert worker.process is not None
    assert worker.html(c) == here
    c.close()
    assert "overview worker" not in capsys.readouterr().err  # written by the worker, no fallback


@pytest.mark.parametrize("python", ["missing", "false"])
def test_an_overview_worker_that_cannot_start_or_fails_leaves_the_index_to_the_report(
    built_warehouse, tmp_path, monkeypatch, capsys, python
):
    from srlens.report import open_warehouse, overview

    c = open_warehouse(built_warehouse)
    here = overview.index_html(c, built_warehouse)
    # no such interpreter (Popen fails), or one that exits at once without an answer
    monkeypatch.setattr("sys.executable", str(tmp_path / "no-python") if python == "missing" else shutil.which("false"))
    monkeypatch.setattr("srlens.report.overview.cores", lambda: 2)
    assert overview.Worker(built_warehouse).html(c) == here
    c.close()
    err = capsys.readouterr().err
    assert ("no overview worker" if python == "missing" else "the overview worker failed") in err


def test_a_users_unguarded_script_runs_once(built_warehouse, tmp_path):
    """The overview's worker is a fresh interpreter on srlens.report.overview: it does not import the
    caller's main script again (multiprocessing's spawn would, running a script without a __main__
    guard twice)."""
    wh = one_run_warehouse(built_warehouse, tmp_path / "w.duckdb")
    script = tmp_path / "mine.py"
    script.write_text(
        "from srlens.report import write_report\n"
        f"with open({str(tmp_path / 'ran.txt')!r}, 'a') as f:\n"
        "    f.write('ran\\n')\n"
        f"write_report({str(wh)!r}, {str(tmp_path / 'out')!r})\n"
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran.txt").read_text() == "ran\n"
    assert "overview worker" not in done.stderr and (tmp_path / "out" / "index.html").is_file()


def claims_after_the_workers(monkeypatch):
    """The report's process, after its first run, waits for the worker to claim the last runs (on a
    small warehouse it would otherwise write them all before the overview is drawn): returns the
    runs it claimed itself."""
    from srlens.report import pages

    mine, claim = [], pages.claim

    def claim_second(staging, submission_id):
        deadline = time.monotonic() + 120
        while mine and len(os.listdir(staging / pages.CLAIMS)) == len(mine) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not claim(staging, submission_id):
            return False
        mine.append(submission_id)
        return True

    monkeypatch.setattr(pages, "claim", claim_second)
    monkeypatch.setattr("srlens.report.overview.cores", lambda: 2)
    monkeypatch.delenv("SRLENS_REPORT_WORKER", raising=False)
    return mine


def serial_report(warehouse, out, monkeypatch):
    with monkeypatch.context() as m:
        m.setenv("SRLENS_REPORT_WORKER", "0")
        write_report(warehouse, out)
    return files_of(out)


def runs_written(err):
    return re.findall(r"^report: run \d+/\d+ (.+)$", err, re.M)


def test_the_worker_writes_the_last_runs_and_each_page_once(built_warehouse, tmp_path, monkeypatch, capfd):
    alone = serial_report(built_warehouse, tmp_path / "alone", monkeypatch)
    all_runs = runs_written(capfd.readouterr().err)
    assert len(all_runs) >= 3 and len(set(all_runs)) == len(all_runs)
    mine = claims_after_the_workers(monkeypatch)
    out = tmp_path / "both"
    write_report(built_warehouse, out)
    err = capfd.readouterr().err
    assert "overview worker" not in err
    # each run written once, by one of the two processes: the report's the first runs, the worker the last
    assert sorted(runs_written(err)) == sorted(all_runs)
    assert 0 < len(mine) < len(all_runs) and mine == all_runs[: len(mine)]
    assert files_of(out) == alone  # the same bytes as one process wrote
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".srlens-report"]  # no .claims


def test_a_worker_that_dies_holding_claims_leaves_its_runs_to_the_report(built_warehouse, tmp_path, monkeypatch, capfd):
    from srlens.report import overview

    alone = serial_report(built_warehouse, tmp_path / "alone", monkeypatch)
    all_runs = runs_written(capfd.readouterr().err)
    mine = claims_after_the_workers(monkeypatch)
    # the worker draws index.html, claims the last runs, and exits before writing any of them
    monkeypatch.setattr(
        overview,
        "WORKER",
        overview.WORKER.replace(
            "from srlens.report.overview import serve",
            "import os\nfrom srlens.report import pages\nfrom srlens.report.overview import serve\n"
            "pages.write_runs = lambda *args, **kwargs: os._exit(3)",
        ),
    )
    out = tmp_path / "out"
    write_report(built_warehouse, out)
    err = capfd.readouterr().err
    assert "the overview worker failed" in err
    assert 0 < len(mine) < len(all_runs)  # the worker had claimed the rest
    assert sorted(runs_written(err)) == sorted(all_runs)  # all by the report's process, once each
    assert files_of(out) == alone
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".srlens-report"]


def test_a_report_killed_outright_takes_its_worker_with_it(built_warehouse, tmp_path):
    """SIGKILL runs no cleanup in the report's process: the kernel's parent-death signal must stop the
    worker, or it would go on writing into a staging folder that the next report starts afresh."""
    from srlens.build import process_start_time

    wh = one_run_warehouse(built_warehouse, tmp_path / "w.duckdb")
    pid_file = tmp_path / "worker.pid"
    script = tmp_path / "report.py"
    # a worker that says who it is, then would wait ten minutes before drawing anything
    serve = "from srlens.report.overview import serve"
    waits = f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n{serve}"
    script.write_text(
        "from srlens.report import overview, write_report\n"
        "overview.cores = lambda: 2\n"
        f"overview.WORKER = overview.WORKER.replace({serve!r}, {waits!r})\n"
        f"write_report({str(wh)!r}, {str(tmp_path / 'out')!r})\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SRLENS_REPORT_WORKER"}
    with open(tmp_path / "report.err", "w") as err:
        report = subprocess.Popen([sys.executable, str(script)], env=env, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            assert report.poll() is None, (tmp_path / "report.err").read_text()[-2000:]
            time.sleep(0.05)
        worker = int(pid_file.read_text())
        assert process_start_time(worker) is not None
    finally:
        report.kill()
        report.wait()
    deadline = time.monotonic() + 10
    while process_start_time(worker) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    outlived = process_start_time(worker) is not None
    if outlived:
        os.kill(worker, signal.SIGKILL)  # not left sleeping after the suite
    assert not outlived, "the worker outlived the report's process"


# --------------------------------------------------------------------------- in a real browser


def chromium():
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs Chromium for the report test (apt-get install chromium chromium-driver)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return path


def run_chromium(args, tmp_path, name):
    profile = tmp_path / f"profile-{name}"  # a fresh profile each time: no state between runs
    done = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_chromium_renders_the_headings_charts_and_sql(page_path, tmp_path):
    url = page_path.resolve().as_uri()
    dom = run_chromium(["--dump-dom", url], tmp_path, "dom")
    rendered = Page(dom)
    headings = [(item[1], item[2]) for item in rendered.items if item[0] == "h"]
    for heading in [
        (1, "srlens report"),
        (2, "Campaign demo"),
        (3, "en_ewt_demo (demo)"),
        (3, "fr_gsd_demo (demo)"),
        (4, "Submissions ranked by each score"),
        (4, "Median Spearman ρ between metrics"),
        (4, "DEA per relation across submissions, worst first"),
        (4, "Projective vs non-projective sentences"),
        (4, "Top suspicious subtrees"),
        (4, "Rule scores per rule"),
        (4, "Who beats whom: paired significance"),
        (4, "Scores by kind of sentence (buckets)"),
        (2, "Treebanks without submissions"),
    ]:
        assert heading in headings
    assert len(rendered.svgs) == 11
    assert "median Spearman rho" in rendered.svgs[0] and "baseline/hall_nemec" in rendered.svgs[1]
    # campaign list, 4 campaign analyses, 8 per corpus, unused treebanks
    assert dom.count("<details") == dom.count("<summary>SQL</summary>") == 1 + 4 + 2 * 8 + 1

    shot = tmp_path / "page.png"
    run_chromium([f"--screenshot={shot}", "--window-size=1280,3000", url], tmp_path, "shot")
    assert shot.stat().st_size > 50_000
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (3000, 1280)
    assert pixels.std() > 0.1  # not a blank page
    # the charts are the only saturated colours on the page (text and tables are grey): 0 without
    # them, about 1.1% of this first screen with the campaign's heatmap
    saturated = (pixels.max(axis=2) - pixels.min(axis=2)) > 0.3
    assert saturated.mean() > 0.003


# --------------------------------------------------------------------------- the explorer's pages


def corpus_part(page_text, anchor, next_anchor):
    """The HTML of one corpus section of the overview."""
    return page_text[page_text.index(f'id="{anchor}"') : page_text.index(f'id="{next_anchor}"')]


SIGNIFICANCE_CELL = re.compile(
    r'<td class="(win|lose|tie)" title="([^":]+): ([^"]+?) - ([^"]+?): [^"]*">([+-]\d\.\d{3})<br>'
    r'<span class="ci">\[([^,]+), ([^\]]+)\]</span><br><span class="p">p ([^<]+)</span></td>'
)


@pytest.mark.parametrize(
    "corpus, anchor, next_anchor", [("en_ewt_demo", "c0-k0", "c0-k1"), ("fr_gsd_demo", "c0-k1", "unused")]
)
def test_significance_matrices_show_every_pair_of_the_mart(page_text, con, corpus, anchor, next_anchor):
    cells = SIGNIFICANCE_CELL.findall(corpus_part(page_text, anchor, next_anchor))
    got = {(html.unescape(m), a, b): (cls, delta, low, high, p) for cls, m, a, b, delta, low, high, p in cells}
    assert len(got) == len(cells) == 2 * 8 * 7  # BLEU and DEA, every ordered pair of 8 runs
    expected = {}
    for metric, a, b, winner, delta, low, high, p in con.execute(
        """
            select p.metric, sa.team || '/' || sa.run, sb.team || '/' || sb.run, p.winner, p.delta,
                   p.ci_low, p.ci_high, p.p_value
            from pairwise_significance p
            join submission_scores sa on sa.submission_id = p.submission_a
            join submission_scores sb on sb.submission_id = p.submission_b
            where p.corpus = ? and p.metric in ('corpus_bleu', 'dea')""",
        [corpus],
    ).fetchall():
        label = {"corpus_bleu": "BLEU (corpus)", "dea": "DEA (micro)"}[metric]
        expected[label, a, b] = (
            {"a": "win", "b": "lose"}.get(winner, "tie"),
            f"{delta:+.3f}",
            f"{low:.3f}",
            f"{high:.3f}",
            f"{p:.2e}" if p < 0.001 else f"{p:.3f}",
        )
    assert got == expected
    # the demo's finding: a run beats its degraded copies, and some pairs are not told apart
    assert got["DEA (micro)", "baseline/gold", "perturb/drops"][0] == "win"
    assert got["DEA (micro)", "perturb/drops", "baseline/gold"][0] == "lose"
    assert {v[0] for v in got.values()} == {"win", "lose", "tie"}


def test_bucket_charts_plot_every_dimension_and_run(page, con):
    charts = [svg for svg in page.svgs if "sentence length" in svg]
    assert len(charts) == 2  # one per demo corpus
    runs = [
        r
        for (r,) in con.execute(
            "select team || '/' || run from submission_scores where corpus = 'en_ewt_demo'"
        ).fetchall()
    ]
    dimensions = [d for (d,) in con.execute("select distinct dimension from bucket_scores").fetchall()]
    assert len(dimensions) == 7
    for dimension in dimensions:
        assert dimension.replace("_", " ") in charts[0]
    assert all(run in charts[0] for run in runs)


SWAPS = "demo/en_ewt_demo/perturb/swaps"


def test_run_page_lists_weakest_relations_and_subtrees_with_their_examples(page_path, con):
    from srlens.report.markup import short
    from srlens.report.runs import examples_anchor, run_file

    text = (page_path.parent / run_file(SWAPS)).read_text(encoding="utf-8")
    run_page = Page(text)
    relations = as_dicts(run_page.table_after("Weakest relations"))
    expected = con.execute(
        """
        select d.relation, d.edges, d.dea, count(x.rank)
        from dea_by_relation d
        left join error_examples x on x.submission_id = d.submission_id and x.kind = 'relation' and x.key = d.relation
        where d.submission_id = ?
        group by all order by d.dea, d.edges desc, d.relation""",
        [SWAPS],
    ).fetchall()
    assert [(r["relation"], r["edges"], r["DEA"], r["examples"]) for r in relations] == [
        (rel, f"{edges:,}", f"{dea:.3f}", "–" if n == 0 else f"{n} example{'s' if n != 1 else ''}")
        for rel, edges, dea, n in expected
    ]
    assert relations[0]["DEA"] < relations[-1]["DEA"]
    # each relation with examples links to its section, which lists the mart's examples in rank order
    for relation, _, _, n in expected:
        if n:
            anchor = examples_anchor("relation", relation)
            assert f'href="#{anchor}"' in text and f'id="{anchor}"' in text
    worst = expected[0][0]
    shown = as_dicts(run_page.table_after(f"relation {worst}"))
    ranked = con.execute(
        """select sent_id, missed, key_missed, key_edges from error_examples
                            where submission_id = ? and kind = 'relation' and key = ? order by rank""",
        [SWAPS, worst],
    ).fetchall()
    assert [(r["sentence"], r["missed edges"], r[f"missed {worst}"]) for r in shown] == [
        (short(s), str(m), f"{km} of {ke}") for s, m, km, ke in ranked
    ]
    assert all(f'title="{s}">{short(s)}</a>' in text for s, _, _, _ in ranked)

    subtrees = as_dicts(run_page.table_after("Most suspicious subtrees"))
    expected = con.execute(
        """
        select view, subtree, suspicion from suspicious_subtrees where submission_id = ? and is_suspicious
        qualify row_number() over (partition by view order by suspicion desc, subtree) <= ?
        order by view, suspicion desc, subtree""",
        [SWAPS, rpt.TOP_SUBTREES],
    ).fetchall()
    assert [(r["view"], r["subtree"], r["S(f)"]) for r in subtrees] == [(v, s, f"{x:.3f}") for v, s, x in expected]
    linked = [r for r in subtrees if r["examples"] != "–"]
    assert linked and all(f'id="{examples_anchor("subtree", r["subtree"], r["view"])}"' in text for r in linked)

    buckets = as_dicts(run_page.table_after("Buckets"))
    expected = con.execute(
        "select dimension, bucket, dea from bucket_scores where submission_id = ? order by dimension, bucket_no",
        [SWAPS],
    ).fetchall()
    assert [(r["dimension"], r["bucket"], r["DEA"]) for r in buckets] == [
        (d, b, "–" if v is None else f"{v:.3f}") for d, b, v in expected
    ]


def class_tokens(text):
    return [token for attr in re.findall(r'class="([^"]*)"', text) for token in attr.split()]


def test_sentence_pages_are_the_examples_and_draw_every_missed_edge(page_path, con):
    from srlens.report.runs import sentence_file

    expected = con.execute("select distinct submission_id, sent_idx, missed, edges from error_examples").fetchall()
    written = {p.relative_to(page_path.parent).as_posix() for p in (page_path.parent / "sentences").rglob("*.html")}
    assert written == {sentence_file(s, i) for s, i, _, _ in expected}  # only example sentences get a page
    assert len(written) > 500
    for submission_id, sent_idx, missed, edges in expected:
        text = (page_path.parent / sentence_file(submission_id, sent_idx)).read_text(encoding="utf-8")
        tree = text[text.index("<svg") : text.index("</svg>")]
        tokens = class_tokens(tree)
        assert tokens.count("missed") == missed, (submission_id, sent_idx)
        assert len(re.findall(r'<path class="arc(?: missed)?"', tree)) == edges  # one arc per reference edge
        assert tokens.count("root") >= 1


def test_example_output_words_are_the_views_words(built_warehouse, tmp_path):
    """The report reads its example sentences' words from int_output_words' two tables, not through
    the view (which would join every word of the runs with its reference word): they must be the
    view's words, a parsed run's too. One run's words are moved from the aligned table to the parsed
    one as the view shows them, so the view's rows stay the same."""
    through_view = """
        select o.submission_id, o.sent_idx,
               row_number() over (partition by o.submission_id, o.sent_idx order by o.word_idx) as pos,
               o.form, o.lemma_lower,
               row_number() over (partition by o.submission_id, o.sent_idx, o.lemma_lower order by o.word_idx)
        from intermediate.int_output_words o
        semi join error_examples using (submission_id, sent_idx)
        where not o.is_punct
        order by o.submission_id, o.sent_idx, 3"""
    wh = tmp_path / "w.duckdb"
    shutil.copy(built_warehouse, wh)
    c = duckdb.connect(str(wh))
    expected = c.execute(through_view).fetchall()
    words = "from intermediate.int_output_words where submission_id = $run"
    moved = c.execute(f"select count(*) {words} and not is_punct", {"run": SWAPS}).fetchall()[0][0]
    c.execute(f"insert into intermediate.int_output_words_parsed select * {words}", {"run": SWAPS})
    c.execute("delete from intermediate.int_output_words_aligned where submission_id = $run", {"run": SWAPS})
    assert c.execute(through_view).fetchall() == expected
    first, last = c.execute("select min(submission_id), max(submission_id) from error_examples").fetchall()[0]
    got = c.execute(rpt.SQL_EXAMPLE_OUTPUT_WORDS, {"first": first, "last": last}).fetchall()
    c.close()
    assert got == expected
    assert len(expected) > 5000 and moved > 0 and any(r[0] == SWAPS for r in got)
    assert {r[5] for r in got} > {1}  # a lemma repeated in a sentence counts its occurrences


def test_tree_draws_a_hand_made_sentence():
    from srlens.report.sentences import aligned_words
    from srlens.report.tree import tree_svg

    # "the cat saw the dog" realized as "the dog saw the cat": the k-th 'the' of one aligns with
    # the k-th of the other; the reference's det of dog (head 5, dependent 4) and obj are missed.
    ref = [
        {"pos": i, "form": f, "lemma_lower": f, "head_pos": h, "deprel": d, "occurrence": o}
        for i, f, h, d, o in [
            (1, "the", 2, "det", 1),
            (2, "cat", 3, "nsubj", 1),
            (3, "saw", 0, "root", 1),
            (4, "the", 5, "det", 2),
            (5, "dog", 3, "obj", 1),
        ]
    ]
    out = [
        {"pos": i, "form": f, "lemma_lower": f, "occurrence": o}
        for i, f, o in [(1, "the", 1), (2, "dog", 1), (3, "saw", 1), (4, "the", 2), (5, "cat", 1)]
    ]
    words, output = aligned_words(ref, out)
    assert [w["aligned"] for w in words] == [1, 5, 3, 4, 2]
    assert [w["aligned"] for w in output] == [1, 5, 3, 4, 2]
    svg = tree_svg(words, output, {(5, 4), (3, 5)})
    tokens = class_tokens(svg)
    assert tokens.count("missed") == 2 and tokens.count("arc") == 5 and tokens.count("root") == 1
    missed = re.findall(r'<path class="arc missed"[^>]*data-head="(\d+)" data-dep="(\d+)"', svg)
    assert sorted(missed) == [("3", "5"), ("5", "4")]
    assert svg.count('class="align"') == 5  # every word has its counterpart


# --------------------------------------------------------------------------- clicking through


def chromedriver():
    path = shutil.which("chromedriver")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs chromedriver for the report test (apt-get install chromium-driver)")
        pytest.skip("chromedriver not installed (apt-get install chromium-driver)")
    return path


def wait_for(condition, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


RED = "rgb(221, 17, 17)"
OVERLAPS = """const boxes = [...document.querySelectorAll(arguments[0])].map(t => [t.textContent, t.getBBox()]);
const hits = [];
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const [a, b] = [boxes[i][1], boxes[j][1]];
  if (Math.min(a.x + a.width, b.x + b.width) > Math.max(a.x, b.x)
      && Math.min(a.y + a.height, b.y + b.height) > Math.max(a.y, b.y)) hits.push([boxes[i][0], boxes[j][0]]);
}
return hits;"""


@pytest.mark.slow
def test_explorer_click_through_in_chromium(page_path, con, tmp_path):
    from srlens.report.runs import examples_anchor, run_file, sentence_file

    browser = Browser(
        chromedriver(),
        chromium(),
        [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,1000"],
    )
    try:
        browser.get(page_path.resolve().as_uri())
        assert browser.js("return document.documentElement.scrollWidth") <= 1280  # readable at 1,280 px
        browser.screenshot(tmp_path / "index.png")

        # go to a run by keyboard: its link in the English ranking takes focus visibly, Enter opens it
        run_link = browser.js("""return [...document.querySelectorAll('#c0-k0 ~ table.ranking a')]
                                 .find(a => a.textContent === 'perturb/swaps')""")[ELEMENT]
        browser.type(run_link, SHIFT)  # a key press on the link, as a keyboard user's: its focus must show
        assert (
            browser.js(
                "return document.activeElement === arguments[0] && getComputedStyle(arguments[0]).outlineStyle",
                browser.element(run_link),
            )
            == "solid"
        )
        browser.type(run_link, ENTER)
        wait_for(
            lambda: browser.url.endswith(run_file(SWAPS)) and browser.js("return document.readyState") == "complete"
        )
        assert browser.js("return document.documentElement.scrollWidth") <= 1280
        browser.screenshot(tmp_path / "run.png")

        # sort the weakest relations by edges (ascending, then descending), then filter them
        def column(n):
            return browser.js(f"""return [...document.querySelectorAll('table.relations tbody tr')]
                                  .filter(r => !r.hidden).map(r => r.cells[{n}].textContent)""")

        dea = [float(v) for v in column(3)]
        assert dea == sorted(dea)  # as written: worst first
        edges = [int(v.replace(",", "")) for v in column(1)]
        assert edges != sorted(edges)
        edges_header = browser.find("table.relations th:nth-child(2) button")
        browser.click(edges_header)
        assert [int(v.replace(",", "")) for v in column(1)] == sorted(edges)
        assert (
            browser.js("return document.querySelector('table.relations th:nth-child(2)').getAttribute('aria-sort')")
            == "ascending"
        )
        browser.click(edges_header)
        assert [int(v.replace(",", "")) for v in column(1)] == sorted(edges, reverse=True)
        relations = sorted(column(0))
        browser.type(
            browser.js("return document.querySelector('table.relations').previousElementSibling")[ELEMENT], "nsubj"
        )
        assert column(0) == ["nsubj"]
        browser.type(
            browser.js("return document.querySelector('table.relations').previousElementSibling")[ELEMENT], "\ue003" * 5
        )  # backspace: every row is back
        assert sorted(column(0)) == relations

        # open the worst relation, then its worst example
        (relation,) = con.execute(
            """select relation from dea_by_relation d where submission_id = ? and exists
                                   (select 1 from error_examples x where x.submission_id = d.submission_id
                                    and x.kind = 'relation' and x.key = d.relation)
                                   order by dea, edges desc, relation limit 1""",
            [SWAPS],
        ).fetchone()
        anchor = examples_anchor("relation", relation)
        browser.click(browser.find(f'table.relations a[href="#{anchor}"]'))
        assert browser.url.endswith(f"#{anchor}")
        assert browser.js(f"return document.getElementById('{anchor}').getBoundingClientRect().top") < 100
        sent_idx, missed, edges = con.execute(
            """select sent_idx, missed, edges from error_examples where
                                                 submission_id = ? and kind = 'relation' and key = ? and rank = 1""",
            [SWAPS, relation],
        ).fetchone()
        browser.click(browser.find(f"#{anchor} table a"))
        wait_for(lambda: browser.url.endswith(sentence_file(SWAPS, sent_idx)))

        # the tree: one arc per reference edge, the missed ones (as many as the mart says) in red
        assert browser.js("return document.querySelectorAll('svg.tree .missed').length") == missed > 0
        assert browser.js("return document.querySelectorAll('svg.tree path.arc:not(.root)').length") == edges
        strokes = browser.js("""return [...document.querySelectorAll('svg.tree path.arc:not(.root)')]
                                .map(p => [p.classList.contains('missed'), getComputedStyle(p).stroke])""")
        assert {s for m, s in strokes if m} == {RED} and RED not in {s for m, s in strokes if not m}
        assert browser.js("return document.documentElement.scrollWidth") <= 1280
        # readable: with the real font, no two arc labels and no two words cover each other, and a
        # tree wider than the page scrolls in a region that takes keyboard focus
        assert browser.js(OVERLAPS, "svg.tree text.label") == []
        assert browser.js(OVERLAPS, "svg.tree text.word") == []
        assert browser.js("return document.querySelector('svg.tree').parentElement.tabIndex") == 0
        shot = browser.screenshot(tmp_path / "sentence.png")
        pixels = imread(shot)[..., :3]
        red = (pixels[..., 0] > 0.75) & (pixels[..., 1] < 0.25) & (pixels[..., 2] < 0.25)
        assert red.sum() > 200  # the highlighted arcs are drawn
    finally:
        browser.close()


# --------------------------------------------------------------------------- the charts' geometry
# The charts are read back as a reader would: a mark's position against the axis's tick labels.


def test_heatmap_cells_sit_at_their_pair_in_the_colour_of_their_rho(page_text, con):
    frame = con.execute("select metric_a, metric_b, rho from metric_correlations where campaign = 'demo'").df()
    medians = frame.dropna().groupby(["metric_a", "metric_b"]).rho.median()
    name = {label: metric for metric, label in rpt.METRICS.items()}
    cells = cells_of(chart_trees(page_text)[0])  # the campaign's heatmap
    assert len(cells) == len(medians) > 40
    for row, column, fill, text in cells:
        pair = (name[row], name[column]) if (name[row], name[column]) in medians else (name[column], name[row])
        rho = medians[pair]
        assert text == f"{rho:.2f}".replace("0.", ".", 1)
        assert close_colour(fill, matplotlib_rgb("RdBu_r", (rho + 1) / 2)), (row, column, rho, fill)


def test_ranking_cells_are_coloured_by_rank_and_show_the_value(page_text, con):
    svg = chart_trees(corpus_part(page_text, "c0-k0", "c0-k1"))[0]
    ranked = con.execute(rpt.SQL_RANKING, {"campaign": "demo", "corpus": "en_ewt_demo"}).df()
    runs = ranked.groupby("score").submission.count()
    label = {v: k for k, v in rpt.SCORES.items()}
    expected = {(r.submission, r.score): (r.rank, r.value) for r in ranked.itertuples()}
    cells = cells_of(svg)
    assert len(cells) == len(expected) == 8 * len(runs)
    for submission, column, fill, text in cells:
        score = label[column]
        rank, value = expected[submission, score]
        assert text == f"{value:.2f}"
        assert close_colour(fill, matplotlib_rgb("viridis", (rank - 1) / (runs[score] - 1))), (submission, score)


def test_dea_boxes_are_the_quartiles_of_the_mart(page_text, con):
    svg = next(
        s for s in chart_trees(corpus_part(page_text, "c0-k0", "c0-k1")) if "box: quartiles" in "".join(s.itertext())
    )
    frame = con.execute(
        rpt.SQL_CORPUS_DEA, {"campaign": "demo", "corpus": "en_ewt_demo", "min_edges": rpt.MIN_EDGES}
    ).df()
    value = y_scale(svg)
    relations = [t for t in svg_texts(svg) if t[3] == "end" and t[1] > 200]  # the labels under the axis
    boxes = svg.findall(SVG + "g")
    assert len(boxes) == len(frame) > 10
    for box, row in zip(boxes, frame.itertuples()):
        whisker, median = box.findall(SVG + "line")
        rect = box.find(SVG + "rect")
        diamond = [float(p.split(",")[1]) for p in box.find(SVG + "polygon").get("points").split()]
        assert nearest(relations, float(whisker.get("x1")) + 3, 0) == row.relation
        top, height = float(rect.get("y")), float(rect.get("height"))
        got = [float(whisker.get("y1")), top + height, float(median.get("y1")), top, float(whisker.get("y2"))]
        assert [value(p) for p in got] == pytest.approx(
            [row.dea_min, row.dea_q1, row.dea_median, row.dea_q3, row.dea_max], abs=0.002
        )
        assert value(sum(diamond) / len(diamond)) == pytest.approx(row.dea_mean, abs=0.002)


def test_bucket_chart_points_are_the_marts_values_in_the_runs_colours(page_text, con):
    svg = next(
        s for s in chart_trees(corpus_part(page_text, "c0-k0", "c0-k1")) if "sentence length" in "".join(s.itertext())
    )
    frame = con.execute(rpt.SQL_BUCKETS, {"campaign": "demo", "corpus": "en_ewt_demo"}).df().dropna(subset=["value"])
    expected = {(r.dimension.replace("_", " "), r.submission, r.bucket): r.value for r in frame.itertuples()}
    # the legend: each run's name after its line and marker
    children = list(svg)
    colour = {e.text: children[k - 1].get("fill") for k, e in enumerate(children) if e.tag == SVG + "text"}
    run_of = {colour[run]: run for run in frame.submission}
    assert len(run_of) == 8
    texts = svg_texts(svg)
    got = {}
    for circle in svg.iter(SVG + "circle"):
        if circle.find(SVG + "title") is None:
            continue  # a legend's marker
        cx, cy = float(circle.get("cx")), float(circle.get("cy"))
        # the panel: its y axis's labels 0.0 and 1.0 nearest left of the point, its title above them,
        # its buckets under it
        zeros = [(x, y) for x, y, s, a in texts if s == "0.0" and a == "end" and x < cx and y + 3 >= cy]
        x0, y0 = max(zeros, key=lambda p: (p[0], -p[1]))  # the nearest left, then the nearest below
        (y1,) = [y for x, y, s, a in texts if s == "1.0" and x == x0 and y0 - 300 < y < y0]
        title = min(
            (t for t in texts if t[3] == "middle" and y1 - 25 < t[1] < y1 - 5 and t[0] > x0),
            key=lambda t: abs(t[0] - cx),
        )
        ticks = [(x - 3 if a == "end" else x, y, s, a) for x, y, s, a in texts if y0 + 5 < y < y0 + 15 and x > x0]
        bucket = nearest(ticks, cx, 0)
        got[title[2].removesuffix(" (lemma recall)"), run_of[circle.get("fill")], bucket] = linear(y0, y1, 0, 1)(cy)
    assert got.keys() == expected.keys()
    assert [got[k] for k in expected] == pytest.approx(list(expected.values()), abs=0.002)


def test_projectivity_bars_are_the_medians(page_text, con):
    svg = next(
        s for s in chart_trees(corpus_part(page_text, "c0-k0", "c0-k1")) if "median bleu" in "".join(s.itertext())
    )
    frame = con.execute(rpt.SQL_PROJECTIVITY, {"campaign": "demo", "corpus": "en_ewt_demo"}).df()
    value = x_scale(svg)
    children = list(svg)  # the legend: each label after its colour's box
    side = {
        children[k - 1].get("fill"): e.text
        for k, e in enumerate(children)
        if e.text in ("projective", "non-projective")
    }
    names = [t for t in svg_texts(svg) if t[3] == "end"]
    got = {}
    for bar in svg.iter(SVG + "rect"):
        if bar.find(SVG + "title") is not None:
            x, y, w, h = (float(bar.get(k)) for k in ("x", "y", "width", "height"))
            got[nearest(names, y + h / 2, 1).removesuffix(" *"), side[bar.get("fill")]] = value(x + w) - value(x)
    assert len(got) == 2 * len(frame) == 16
    assert got == pytest.approx(
        {(r.submission, "projective"): r.median_projective for r in frame.itertuples()}
        | {(r.submission, "non-projective"): r.median_nonprojective for r in frame.itertuples()},
        abs=0.002,
    )


def test_table_cells_escape_text_format_numbers_and_keep_links():
    from srlens.report.markup import Html, fmt, fmt_p, table

    rows = [
        {"name": "a<b", "n": 1234, "x": 0.5, "p": 0.0001, "q": 3, "run": Html('<a href="r.html">r</a>')},
        {"name": "c&d", "n": None, "x": float("nan"), "p": None, "q": 4, "run": "plain"},
    ]
    columns = [
        ("name", "name", str),
        ("n", "count", fmt),
        ("x", "x", fmt),
        ("p", "p", fmt_p),
        ("q", "q", lambda v: f"<{v}"),  # a formatter's text is escaped
        ("run", "run", str),
    ]
    assert table(rows, columns, "t") == (
        '<table class="data t"><thead><tr><th scope="col" class="text">name</th><th scope="col">count</th>'
        '<th scope="col">x</th><th scope="col">p</th><th scope="col">q</th><th scope="col" class="text">run</th>'
        "</tr></thead><tbody>"
        '<tr><td class="text">a&lt;b</td><td data-sort="1234.0">1,234</td><td data-sort="0.5">0.500</td>'
        '<td data-sort="0.0001">1.00e-04</td><td data-sort="3.0">&lt;3</td>'
        '<td class="text"><a href="r.html">r</a></td></tr>'
        '<tr><td class="text">c&amp;d</td><td>–</td><td>–</td><td>–</td><td data-sort="4.0">&lt;4</td>'
        '<td class="text">plain</td></tr>'
        "</tbody></table>"
    )


# A report folder's files are never written through a link planted there (over the warehouse).


@pytest.mark.parametrize("name", [".srlens-report", "index.html", "runs"])
def test_a_report_is_never_written_through_a_link(demo_wh, tmp_path, capsys, name):
    out = tmp_path / "rep"
    out.mkdir()
    (out / ".srlens-report").write_text("")
    (out / name).unlink(missing_ok=True)
    (out / name).symlink_to(demo_wh)
    before = demo_wh.read_bytes()
    code, _, err = cli(capsys, "--warehouse", demo_wh, "report", out)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"srlens: error: report folder {out}: {name} is a symbolic link")
    assert demo_wh.read_bytes() == before
