"""The overview page (index.html): per campaign, then per corpus of the campaign, a list of
sections. Each section is a function (report, scope) that adds a heading, its figure and the SQL
behind it; CAMPAIGN_SECTIONS and CORPUS_SECTIONS give the page order. To add a section, write
such a function and append it to the list where it belongs."""

import os
import pickle
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import duckdb

from srlens.children import cores
from srlens.report import charts as ch
from srlens.report import lambre_trends, pages
from srlens.report.markup import (
    Html,
    esc,
    fmt,
    fmt_p,
    link,
    note,
    page,
    records,
    sql_details,
    table,
)
from srlens.report.queries import (
    MIN_EDGES,
    SCORES,
    SIGNIFICANCE_METRICS,
    SQL_BUCKETS,
    SQL_BUILD,
    SQL_CAMPAIGN_CORPORA,
    SQL_CAMPAIGN_CORRELATIONS,
    SQL_CAMPAIGN_DEA,
    SQL_CAMPAIGN_SUBTREES,
    SQL_CAMPAIGNS,
    SQL_CLUSTERS,
    SQL_CORPUS_CORRELATIONS,
    SQL_CORPUS_DEA,
    SQL_CORPUS_STATS,
    SQL_CORPUS_SUBTREES,
    SQL_PROJECTIVITY,
    SQL_RANKING,
    SQL_RULES,
    SQL_RUNS,
    SQL_SIGNIFICANCE,
    SQL_UNUSED_CORPORA,
    TOP_RULES,
    TOP_SUBTREES,
    VIEWS,
    fetch,
)
from srlens.report.runs import run_file
from srlens.status import open_read_only


@dataclass
class Scope:
    """What a section is about: a campaign, or a corpus of a campaign; anchor prefixes its ids."""

    campaign: str
    corpus: str | None
    anchor: str


class Overview:
    """Runs each query once, keeps the HTML in order, and the table of contents."""

    def __init__(self, con, run_href):
        self.con = con
        self.charts = ch.Charts()
        self.run_href = run_href  # submission_id -> the run page, relative to index.html
        self.parts = []
        self.toc = []

    def query(self, sql, **params):
        """The result as a DataFrame, and the SQL and parameters to show under it."""
        frame = self.con.execute(sql, params).df() if params else self.con.execute(sql).df()
        return frame, sql_details(sql, params)

    def add(self, *chunks):
        self.parts.extend(chunks)

    def heading(self, level, text, anchor):
        self.add(f'<h{level} id="{anchor}">{esc(text)}</h{level}>')
        if level <= 3:
            self.toc.append((level, text, anchor))


# ---------------------------------------------------------------------------------------------
# Campaign sections.

STAT_COLUMNS = [
    ("tree_depth", "depth"),
    ("tree_length", "length"),
    ("mdd", "MDD"),
    ("mfs", "MFS"),
    ("mfw", "MFW"),
    ("mean_arity", "arity"),
]


def corpus_stats_table(frame):
    """The framework paper's Table 2: S, count, then mean (sd) of each metric, NP %."""
    rows = []
    for r in frame.to_dict("records"):
        row = {
            "corpus": r["corpus"],
            "submissions": r["submissions"],
            "sentences": r["sentences"],
            "nonprojective_pct": r["nonprojective_pct"],
        }
        for key, _ in STAT_COLUMNS:
            row[key] = f"{fmt(r[key + '_mean'], 2)} ({fmt(r[key + '_sd'], 2)})"
        rows.append(row)
    columns = (
        [("corpus", "corpus", str), ("submissions", "S", fmt), ("sentences", "sentences", fmt)]
        + [(k, h, str) for k, h in STAT_COLUMNS]
        + [("nonprojective_pct", "NP %", lambda v: fmt(v, 2))]
    )
    return table(rows, columns, "stats") + parsed_trees_note(frame)


def parsed_trees_note(frame):
    """SPEC 13: the trees of text-reference corpora are a parse, not gold; say so, with the parser."""
    if "reference" not in frame.columns:
        return ""
    parsed = frame[frame.reference == "parsed"]
    if parsed.empty:
        return ""
    by_parser = {}
    for r in parsed.to_dict("records"):
        by_parser.setdefault(r["reference_parser"] or "an unknown parser", []).append(r["corpus"])
    return "".join(
        f'<p class="note">The trees of {esc(", ".join(corpora))} are no gold trees: the parse of text '
        f"references by {esc(parser)} (docs/text-references.md).</p>"
        for parser, corpora in sorted(by_parser.items())
    )


def subtree_tables(report, frame, scope_text):
    if frame.empty:
        report.add(note(f"No suspicious subtree in {scope_text}."))
        return
    out = []
    for view in sorted(set(frame.view), key=lambda v: (VIEWS.index(v) if v in VIEWS else 9, v)):
        part = frame[frame.view == view].to_dict("records")
        out.append(
            f'<div class="subtrees"><h5>view {esc(view)}</h5>'
            + table(
                part,
                [
                    ("subtree", "subtree", str),
                    ("coverage_pct", "coverage %", lambda v: fmt(v, 1)),
                    ("suspicious_in", "suspicious in", fmt),
                    ("mean_suspicion", "MSS", lambda v: fmt(v, 2)),
                ],
            )
            + "</div>"
        )
    denominator = int(frame.submissions_in_scope.iloc[0])
    report.add(
        f"<p>Top {TOP_SUBTREES} per view; coverage is over {denominator} submission"
        f"{'s' if denominator != 1 else ''}.</p>",
        '<div class="row">' + "".join(out) + "</div>",
    )


def campaign_stats(report, scope):
    report.heading(4, "Corpus statistics", f"{scope.anchor}-stats")
    stats, sql = report.query(SQL_CORPUS_STATS, campaign=scope.campaign)
    report.add(corpus_stats_table(stats), sql)


def campaign_correlations(report, scope):
    report.heading(4, "Median Spearman ρ between metrics, all submissions", f"{scope.anchor}-rho")
    corr, sql = report.query(SQL_CAMPAIGN_CORRELATIONS, campaign=scope.campaign)
    report.add(
        ch.heatmap_chart(report.charts, corr, f"{scope.campaign}: median over submissions")
        if len(corr)
        else note("No correlation could be computed."),
        sql,
    )


def campaign_dea(report, scope):
    report.heading(4, "DEA per relation, macro-average over submissions", f"{scope.anchor}-dea")
    dea, sql = report.query(SQL_CAMPAIGN_DEA, campaign=scope.campaign, min_edges=MIN_EDGES)
    report.add(
        table(
            records(dea),
            [
                ("relation", "relation", str),
                ("edges", "edges", fmt),
                ("corpora", "corpora", fmt),
                ("submissions", "submissions", fmt),
                ("dea_mean", "DEA (mean)", fmt),
                ("dea_min", "min", fmt),
                ("dea_max", "max", fmt),
            ],
        )
        if len(dea)
        else note(f"No relation has {MIN_EDGES} edges."),
        sql,
    )


def campaign_subtrees(report, scope):
    report.heading(4, "Top suspicious subtrees, all submissions", f"{scope.anchor}-subtrees")
    subtrees, sql = report.query(SQL_CAMPAIGN_SUBTREES, campaign=scope.campaign, top=TOP_SUBTREES)
    subtree_tables(report, subtrees, "this campaign")
    report.add(sql)


# ---------------------------------------------------------------------------------------------
# Corpus sections.


def ranking(report, scope):
    report.heading(4, "Submissions ranked by each score", f"{scope.anchor}-rank")
    ranked, sql = report.query(SQL_RANKING, campaign=scope.campaign, corpus=scope.corpus)
    if ranked.empty:
        report.add(note("No scores."), sql)
        return
    rank = {(r.submission, r.score): r.rank for r in ranked.itertuples()}
    value = {(r.submission, r.score): r.value for r in ranked.itertuples()}
    ids = dict(zip(ranked.submission, ranked.submission_id))
    present = set(ranked.score)
    scores = [s for s in SCORES if s in present] + sorted(present - set(SCORES))
    # rows in the order of the first score (corpus BLEU); the query sorts by score and rank
    first = ranked[ranked.score == scores[0]].submission.tolist()
    order = first + sorted(set(ranked.submission) - set(first))
    rows = [
        {
            "submission": link(report.run_href(ids[sub]), sub),
            **{s: f"{fmt(value[sub, s])} (#{rank[sub, s]})" if (sub, s) in rank else "–" for s in scores},
        }
        for sub in order
    ]
    report.add(
        ch.ranking_chart(report.charts, order, scores, rank, value),
        "<p>Each submission links to its page: weakest relations and subtrees, with example sentences.</p>",
        table(
            rows, [("submission", "submission", lambda v: v)] + [(s, SCORES.get(s, s), str) for s in scores], "ranking"
        ),
        sql,
    )


def significance_cell(row, label):
    """delta, its 95% interval and p, coloured by the winner (the row's run is a, the column's b)."""
    cls = {"a": "win", "b": "lose"}.get(row["winner"], "tie")
    verdict = {"win": "row run better", "lose": "column run better", "tie": "no significant difference"}[cls]
    return (
        f'<td class="{cls}" title="{esc(label)}: {esc(row["submission_a"])} - '
        f'{esc(row["submission_b"])}: {verdict} (bootstrap p {fmt_p(row["p_value"])}, '
        f'approximate randomization p {fmt_p(row["p_value_ar"])})">'
        f'{row["delta"]:+.3f}<br><span class="ci">[{fmt(row["ci_low"])}, {fmt(row["ci_high"])}]</span>'
        f'<br><span class="p">p {fmt_p(row["p_value"])}</span></td>'
    )


def significance_matrix(frame, runs, label):
    """Rows: run a, columns: run b, in the ranking's order."""
    cells = {(r["submission_a"], r["submission_b"]): r for r in records(frame)}
    # a column's name may break after team/ so that eight runs fit in 1,280 px
    head = '<th scope="col">a \\ b</th>' + "".join(
        f'<th scope="col">{esc(b).replace("/", "/<wbr>")}</th>' for b in runs
    )
    body = ""
    for a in runs:
        body += (
            f'<tr><th scope="row">{esc(a)}</th>'
            + "".join(
                significance_cell(cells[a, b], label) if (a, b) in cells else '<td class="self">–</td>' for b in runs
            )
            + "</tr>"
        )
    return (
        f'<div class="scroll" tabindex="0" role="region" aria-label="{esc(label)} significance matrix">'
        f'<table class="matrix"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )


def rank_range(best, worst):
    return f"{best}" if best == worst else f"{best}–{worst}"


def cluster_list(frame, label):
    """The metric's clusters, best first: each a list item (numbered as in system_rankings) of its
    runs with their rank ranges."""
    items = "".join(
        f'<li value="{cluster}">'
        + ", ".join(f"{esc(r['submission'])} ({rank_range(r['rank_best'], r['rank_worst'])})" for r in records(part))
        + "</li>"
        for cluster, part in frame.groupby("cluster", sort=True)
    )
    return f'<ol class="clusters" aria-label="{esc(label)} clusters">{items}</ol>'


def significance(report, scope):
    report.heading(4, "Who beats whom: paired significance", f"{scope.anchor}-sig")
    frame, sql = report.query(SQL_SIGNIFICANCE, campaign=scope.campaign, corpus=scope.corpus)
    if frame.empty:
        report.add(note("No pair of runs to compare (one run on this corpus)."), sql)
        return
    params = {"campaign": scope.campaign, "corpus": scope.corpus}
    clusters = report.con.execute(SQL_CLUSTERS, params).df()
    report.add(
        "<p>Clusters, as WMT publishes rankings (system_rankings): runs in one cluster are not separated "
        "by a significant difference (paired bootstrap, Holm-corrected over the corpus's pairs); the "
        "range after a run is the ranks it can take. "
        "Cell: the row's run minus the column's run, its 95% paired-bootstrap interval and the "
        "bootstrap p-value (the approximate randomization p is in the tooltip). "
        '<span class="win">Green</span>: the row run is significantly better at 0.05, '
        '<span class="lose">red</span>: worse.</p>'
    )
    for metric, label in SIGNIFICANCE_METRICS.items():
        part = frame[frame.metric == metric]
        if part.empty:
            continue
        runs = list(dict.fromkeys(part.submission_a))
        ranked = clusters[clusters.metric == metric]
        report.add(
            f"<h5>{esc(label)}</h5>",
            cluster_list(ranked, label) if len(ranked) else "",
            significance_matrix(part, runs, label),
        )
    # both queries under the one SQL block of the section
    report.add(sql.replace("</pre>", f"</pre><pre>{esc(SQL_CLUSTERS)}</pre>", 1))


def buckets(report, scope):
    report.heading(4, "Scores by kind of sentence (buckets)", f"{scope.anchor}-buckets")
    frame, sql = report.query(SQL_BUCKETS, campaign=scope.campaign, corpus=scope.corpus)
    plotted = frame.dropna(subset=["value"])
    if plotted.empty:
        report.add(note("No bucket scores."), sql)
        return
    report.add(
        "<p>Micro DEA of each run per bucket of the reference trees (word frequency: recall of the "
        "reference lemmas); each run's page has the table.</p>",
        ch.bucket_chart(report.charts, plotted),
        sql,
    )


def corpus_correlations(report, scope):
    report.heading(4, "Median Spearman ρ between metrics", f"{scope.anchor}-rho")
    corr, sql = report.query(SQL_CORPUS_CORRELATIONS, corpus=scope.corpus)
    report.add(
        ch.heatmap_chart(report.charts, corr, f"{scope.corpus}: median over submissions")
        if len(corr)
        else note("No correlation could be computed (too few sentences?)."),
        sql,
    )


def corpus_dea(report, scope):
    report.heading(4, "DEA per relation across submissions, worst first", f"{scope.anchor}-dea")
    dea, sql = report.query(SQL_CORPUS_DEA, campaign=scope.campaign, corpus=scope.corpus, min_edges=MIN_EDGES)
    if dea.empty:
        report.add(note(f"No relation has {MIN_EDGES} reference edges in this corpus."), sql)
        return
    report.add(
        ch.dea_chart(report.charts, dea),
        table(
            records(dea),
            [
                ("relation", "relation", str),
                ("edges", "edges", fmt),
                ("submissions", "submissions", fmt),
                ("dea_mean", "DEA (mean)", fmt),
                ("dea_min", "min", fmt),
                ("dea_median", "median", fmt),
                ("dea_max", "max", fmt),
            ],
            "compact",
        ),
        sql,
    )


def projectivity(report, scope):
    report.heading(4, "Projective vs non-projective sentences", f"{scope.anchor}-proj")
    proj, sql = report.query(SQL_PROJECTIVITY, campaign=scope.campaign, corpus=scope.corpus)
    plotted = proj.dropna(subset=["median_projective", "median_nonprojective"])
    if proj.empty:
        report.add(note("No projectivity comparison (no scored sentences)."), sql)
        return
    reasons = sorted(set(proj.skipped_reason.dropna()))
    report.add(
        ch.projectivity_chart(report.charts, plotted)
        if len(plotted)
        else note("No submission has both projective and non-projective sentences."),
        "<p>* p &lt; 0.05 (two-sided Mann-Whitney U).</p>" if proj.tested.any() else "",
        note("Not tested: " + "; ".join(reasons)) if reasons else "",
        table(
            records(proj),
            [
                ("submission", "submission", str),
                ("score", "score", str),
                ("n_projective", "n proj.", fmt),
                ("n_nonprojective", "n non-proj.", fmt),
                ("median_projective", "median proj.", fmt),
                ("median_nonprojective", "median non-proj.", fmt),
                ("u", "U", lambda v: fmt(v, 1)),
                ("p_value", "p", fmt_p),
                ("tested", "tested", fmt),
            ],
            "compact",
        ),
        sql,
    )


def corpus_subtrees(report, scope):
    report.heading(4, "Top suspicious subtrees", f"{scope.anchor}-subtrees")
    subtrees, sql = report.query(SQL_CORPUS_SUBTREES, corpus=scope.corpus, top=TOP_SUBTREES)
    subtree_tables(report, subtrees, "this corpus")
    report.add(sql)


def rules(report, scope):
    report.heading(4, "Rule scores per rule", f"{scope.anchor}-rules")
    frame, sql = report.query(SQL_RULES, campaign=scope.campaign, corpus=scope.corpus, top=TOP_RULES)
    if frame.empty:
        report.add(
            note(
                "No rule scores: rules are checked on parsed outputs only (processor stanza "
                "or runs loaded as CoNLL-U), and only where the language has rules."
            ),
            sql,
        )
        return
    fired = int(frame.rules_fired.iloc[0])
    report.add(
        f"<p>{len(frame)} worst of {fired} rules that fired.</p>",
        ch.rules_chart(report.charts, frame),
        table(
            records(frame),
            [
                ("rule_id", "rule", str),
                ("submissions", "submissions", fmt),
                ("matches", "matches", fmt),
                ("failures", "failures", fmt),
                ("pooled_score", "pooled", fmt),
                ("score_mean", "mean", fmt),
                ("score_min", "min", fmt),
                ("score_max", "max", fmt),
            ],
            "compact",
        ),
        sql,
    )


# The page order. Append a function (report, scope) to add a section.
CAMPAIGN_SECTIONS = [campaign_stats, campaign_correlations, campaign_dea, campaign_subtrees]
CORPUS_SECTIONS = [
    ranking,
    significance,
    buckets,
    corpus_correlations,
    corpus_dea,
    projectivity,
    corpus_subtrees,
    rules,
]


# ---------------------------------------------------------------------------------------------


def scopes(con):
    """Each campaign's Scope with the Scopes of its corpora, in page order (their anchors name the
    sections of index.html)."""
    out = []
    for ci, (campaign, *_) in enumerate(con.execute(SQL_CAMPAIGNS).fetchall()):
        corpora = [corpus for (corpus,) in con.execute(SQL_CAMPAIGN_CORPORA, {"campaign": campaign}).fetchall()]
        corpus_scopes = [Scope(campaign, corpus, f"c{ci}-k{ki}") for ki, corpus in enumerate(corpora)]
        out.append((Scope(campaign, None, f"c{ci}"), corpus_scopes))
    return out


def corpus_anchors(con):
    """(campaign, corpus) -> the anchor of the corpus's section in index.html (a run page links there)."""
    return {(s.campaign, s.corpus): s.anchor for _, corpus_scopes in scopes(con) for s in corpus_scopes}


def render(con, run_href):
    """Every section, in page order."""
    report = Overview(con, run_href)
    report.heading(2, "Campaigns", "campaigns")
    campaigns, sql = report.query(SQL_CAMPAIGNS)
    report.add(
        table(
            records(campaigns),
            [("campaign", "campaign", str), ("corpora", "corpora", fmt), ("submissions", "submissions", fmt)],
        )
        if len(campaigns)
        else note("No submissions loaded."),
        sql,
    )
    for scope, corpus_scopes in scopes(con):
        print(f"report: campaign {scope.campaign}", file=sys.stderr)
        report.heading(2, f"Campaign {scope.campaign}", scope.anchor)
        for section in CAMPAIGN_SECTIONS:
            section(report, scope)
        for corpus_scope in corpus_scopes:
            print(f"report: campaign {scope.campaign}, corpus {corpus_scope.corpus}", file=sys.stderr)
            report.heading(3, f"{corpus_scope.corpus} ({scope.campaign})", corpus_scope.anchor)
            for section in CORPUS_SECTIONS:
                section(report, corpus_scope)
    trends = lambre_trends.section(con)  # across campaigns: after them, in the contents as a campaign is
    if trends:
        report.toc.append((2, lambre_trends.TITLE, lambre_trends.ANCHOR))
        report.add(trends)
    unused, sql = report.query(SQL_UNUSED_CORPORA)
    if len(unused):
        report.heading(2, "Treebanks without submissions", "unused")
        report.add(corpus_stats_table(unused), sql)
    return report


def page_body(report, title, built):
    # a campaign's corpora nest under it, so that the two columns never part them
    toc = ""
    for k, (level, text, anchor) in enumerate(report.toc):
        item = f'<a href="#{anchor}">{esc(text)}</a>'
        follows = report.toc[k + 1][0] if k + 1 < len(report.toc) else 2
        if level == 2:
            toc += f"<li>{item}" + ("<ul>" if follows == 3 else "</li>")
        else:
            toc += f"<li>{item}</li>" + ("</ul></li>" if follows == 2 else "")
    return Html(f"""<main id="main">
<h1>srlens report</h1>
<p>Warehouse <code>{esc(title)}</code>, {esc(built)}. The figures are defined in SPEC.md; the SQL behind
every table and chart is under it. Click a column header to sort a table, type in the box above it
to filter its rows. SSA/GSA: simple/generation string accuracy, STA/GTA:
simple/generation tree accuracy, MDD: mean dependency distance, MFS/MFW: mean flux size/weight,
NP: non-projective sentences, S: submissions, MSS: mean suspicion score.</p>
<nav aria-label="contents"><ul>{toc}</ul></nav>
{"".join(report.parts)}
</main>""")


def index_html(con, warehouse):
    """index.html: every section, its charts drawn."""
    report = render(con, run_file)
    try:
        build = con.execute(SQL_BUILD).fetchone()
    except duckdb.CatalogException:  # a warehouse built before meta.builds existed
        build = None
    built = (
        f"built {build[0]:%Y-%m-%d %H:%M} with processor {build[1]}, srlens {build[4]}"
        if build
        else "build time unknown"
    ) + (f", signature {build[5]}" if build and build[5] else "")
    name = Path(warehouse).name
    return page(f"srlens report: {name}", page_body(report, name, built), "")


# ---------------------------------------------------------------------------------------------
# The worker: `python -c WORKER ROOT WAREHOUSE [STAGING STARTED]` writes ("ok", index.html, start)
# or ("error", traceback), pickled, to its stdout; start: the index of the first run whose pages it
# wrote into STAGING (the number of runs if none; None without STAGING).

# The worker dies with the report's process, even by SIGKILL (the kernel's parent-death signal):
# left running, it would go on writing pages into a staging folder the next report starts afresh.
WORKER = """\
import sys
sys.path.insert(0, sys.argv[1])
from srlens.children import die_with_parent
die_with_parent(int(sys.argv[2]))()
from srlens.report.overview import serve
serve(*sys.argv[3:])
"""


def serve(warehouse, staging=None, started=None):
    try:
        con = open_read_only(warehouse)
        try:
            html = index_html(con, warehouse)
            start = None
            if staging is not None:  # the last runs' pages, those the report's process has not reached
                staging, all_runs = Path(staging), fetch(con, SQL_RUNS)
                start = pages.worker_share(staging, all_runs, time.time() - float(started))
                if start < len(all_runs):
                    print(f"report: the overview's worker writes runs {start + 1} to {len(all_runs)}", file=sys.stderr)
                pages.write_runs(con, staging, all_runs, start, len(all_runs), corpus_anchors(con), claimed=True)
            reply = ("ok", html, start)
        finally:
            con.close()
    except BaseException:  # reported to the report's process, which writes the page and the runs itself
        reply = ("error", traceback.format_exc())
    pickle.dump(reply, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)


class Worker:
    """index.html written by a worker process while the report's process writes the run and
    sentence pages: the overview (its queries and charts) needs nothing from them. Given the
    report's staging folder, the worker then writes the pages of the last runs (pages.worker_share).
    The worker is a fresh interpreter (`python -c` on this module) that opens the warehouse
    read-only itself: not multiprocessing, whose spawned child imports the caller's main script
    again, and no fork of a process that holds DuckDB's threads. html(con) returns the page; it is
    written by the report's process instead with one core, without a Python executable, with
    SRLENS_REPORT_WORKER=0, or when the worker cannot start or fails."""

    def __init__(self, warehouse, staging=None):
        self.warehouse = str(warehouse)
        self.process = None
        self.runs_from = None  # the first run whose pages the worker wrote, once html() returned
        if cores() < 2 or not sys.executable or os.environ.get("SRLENS_REPORT_WORKER") == "0":
            return
        root = str(Path(__file__).resolve().parents[2])  # the folder that holds this srlens package
        try:
            pages_args = [str(staging), repr(time.time())] if staging is not None else []
            self.process = subprocess.Popen(
                [sys.executable, "-c", WORKER, root, str(os.getpid()), self.warehouse, *pages_args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
            )
        except OSError as e:
            print(f"report: no overview worker ({e}), index.html is written after the pages", file=sys.stderr)

    def html(self, con):
        if self.process is not None:
            with self.process.stdout:
                out = self.process.stdout.read()
            code, self.process = self.process.wait(), None
            try:
                status, value, *runs_from = pickle.loads(out)
            except Exception:
                status, value = "error", f"exit code {code}, {len(out)} bytes of output"
            if status == "ok":
                self.runs_from = runs_from[0]
                return value
            print(f"report: the overview worker failed, index.html is written here:\n{value}", file=sys.stderr)
        return index_html(con, self.warehouse)

    def close(self):
        """Stop the worker, if it still runs (a report that failed halfway)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
