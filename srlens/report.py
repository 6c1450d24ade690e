"""`srlens report`: a self-contained static HTML report of a built warehouse.

One index.html, no external references: charts are matplotlib SVGs written inline, the CSS is
inline, there is no JavaScript. Sections go per campaign, then per corpus of the campaign. Every
table and chart comes from one of the SQL constants below, run read-only with named parameters
($campaign, $corpus, ...), and the page shows that exact text under it.

Scale: the number of queries and charts is bounded per corpus (top-N cuts, no per-sentence
figures), so a campaign of ~30 corpora and ~170 submissions renders in well under a minute.
"""

import html
import io
import math
import re
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.figure import Figure

from srlens.definitions import MINING_VIEWS
from srlens.status import WarehouseError, mart_names, open_read_only

# The marts the report reads; a warehouse without them has not been built.
REQUIRED_MARTS = ("corpus_stats", "submission_scores", "sentence_scores", "dea_by_relation",
                  "metric_correlations", "projectivity_tests", "suspicious_subtrees",
                  "suspicious_subtrees_summary", "lambre_rule_scores")

TOP_SUBTREES = 20     # per view
TOP_RULES = 30        # worst rules by mean score
MIN_EDGES = 20        # a relation needs this many reference edges to be shown in DEA per relation
MAX_BARS = 40         # submissions a chart shows (tables show all)
VIEWS = MINING_VIEWS  # srlens/definitions.py

# Scores of submissions, in display order, with short labels (as in the framework paper).
SCORES = {
    "corpus_bleu": "BLEU (corpus)",
    "dea": "DEA (micro)",
    "simple_string_accuracy_mean": "SSA",
    "generation_string_accuracy_mean": "GSA",
    "simple_tree_accuracy_mean": "STA",
    "generation_tree_accuracy_mean": "GTA",
    "understandability_accuracy_mean": "understandability",
    "quality_accuracy_mean": "quality",
    "reorder_accuracy_mean": "reorder acc.",
    "rule_score": "rule score",
    "fluency_z_mean": "fluency (z)",
    "adequacy_z_mean": "adequacy (z)",
}

# Sentence-level variables of the correlation study (SPEC 10), in the order of
# int_corr_sentence_values.
METRICS = {
    "bleu": "BLEU", "dea": "DEA", "simple_string_accuracy": "SSA",
    "generation_string_accuracy": "GSA", "simple_tree_accuracy": "STA",
    "generation_tree_accuracy": "GTA", "reorder_accuracy": "reorder", "rule_score": "rule",
    "fluency_z": "fluency", "adequacy_z": "adequacy", "tree_depth": "depth",
    "tree_length": "length", "mean_dependency_distance": "MDD", "mean_flux_size": "MFS",
    "mean_flux_weight": "MFW", "mean_arity": "arity",
}

# ---------------------------------------------------------------------------------------------
# The queries. Each is shown verbatim under what it feeds.

SQL_CAMPAIGNS = """\
select campaign, count(distinct corpus) as corpora, count(*) as submissions
from submission_scores
group by campaign
order by campaign"""

SQL_CORPUS_STATS = """\
-- The treebanks of the campaign (SPEC 1): mean and sample SD of each tree metric, and the
-- submissions the campaign has on each.
select c.*, s.submissions
from corpus_stats c
join (select corpus, count(*) as submissions
      from submission_scores
      where campaign = $campaign
      group by corpus) s using (corpus)
order by c.corpus"""

SQL_UNUSED_CORPORA = """\
-- Treebanks loaded without any submission (train splits, rule treebanks, ...).
select c.*, 0 as submissions
from corpus_stats c
where c.corpus not in (select corpus from submission_scores)
order by c.corpus"""

SQL_CAMPAIGN_CORRELATIONS = """\
-- Median Spearman rho of each pair of variables over the campaign's submissions (SPEC 10).
select metric_a, metric_b, count(rho) as submissions, median(rho) as rho_median
from metric_correlations
where campaign = $campaign
group by metric_a, metric_b
having count(rho) > 0"""

SQL_CORPUS_CORRELATIONS = """\
-- Median Spearman rho of each pair of variables over the corpus's submissions (SPEC 10).
select metric_a, metric_b, count(rho) as submissions, median(rho) as rho_median
from metric_correlations
where campaign = $campaign and corpus = $corpus
group by metric_a, metric_b
having count(rho) > 0"""

SQL_CAMPAIGN_DEA = """\
-- Macro-average DEA per base relation over the campaign's submissions, worst first (the
-- framework paper's Table 4). edges: reference edges of the relation in the campaign's treebanks.
with runs as (
    select d.*
    from dea_by_relation d
    join submission_scores s using (submission_id)
    where s.campaign = $campaign
),
edges as (
    select relation, sum(edges)::bigint as edges
    from (select relation, corpus, max(edges) as edges from runs group by relation, corpus)
    group by relation
)
select r.relation, e.edges, count(distinct r.corpus) as corpora, count(*) as submissions,
       avg(r.dea) as dea_mean, min(r.dea) as dea_min, max(r.dea) as dea_max
from runs r
join edges e using (relation)
where e.edges >= $min_edges
group by r.relation, e.edges
order by dea_mean, r.relation"""

SQL_RANKING = """\
-- Each score of each submission on the corpus, ranked (1 = best; ties share a rank). Scores
-- that are NULL for a run (rule score without a parse, human scores without judgments) drop out.
with human as (
    select submission_id, avg(fluency_z) as fluency_z_mean, avg(adequacy_z) as adequacy_z_mean
    from sentence_scores
    where campaign = $campaign and corpus = $corpus
    group by submission_id
),
runs as (
    select s.team || '/' || s.run as submission,
           s.corpus_bleu, s.dea, s.simple_string_accuracy_mean, s.generation_string_accuracy_mean,
           s.simple_tree_accuracy_mean, s.generation_tree_accuracy_mean,
           s.understandability_accuracy_mean, s.quality_accuracy_mean, s.reorder_accuracy_mean,
           s.rule_score, h.fluency_z_mean, h.adequacy_z_mean
    from submission_scores s
    left join human h using (submission_id)
    where s.campaign = $campaign and s.corpus = $corpus
)
select submission, score, value,
       rank() over (partition by score order by value desc) as rank
from (unpivot runs on columns(* exclude (submission)) into name score value value)
order by score, rank, submission"""

SQL_CORPUS_DEA = """\
-- DEA per base relation across the corpus's submissions, worst mean first. edges: reference
-- edges of the relation (the most any run was scored on); rarer relations are left out.
select d.relation,
       max(d.edges) as edges,
       count(*) as submissions,
       avg(d.dea) as dea_mean,
       min(d.dea) as dea_min,
       quantile_cont(d.dea, 0.25) as dea_q1,
       median(d.dea) as dea_median,
       quantile_cont(d.dea, 0.75) as dea_q3,
       max(d.dea) as dea_max
from dea_by_relation d
join submission_scores s using (submission_id)
where s.campaign = $campaign and s.corpus = $corpus
group by d.relation
having max(d.edges) >= $min_edges
order by dea_mean, d.relation"""

SQL_PROJECTIVITY = """\
-- Projective vs non-projective sentences per submission and score (SPEC 10, Mann-Whitney U).
-- Untested rows keep their medians and say why they were skipped.
select team || '/' || run as submission, score, n_projective, n_nonprojective,
       median_projective, median_nonprojective, u, p_value, tested, skipped_reason
from projectivity_tests
where campaign = $campaign and corpus = $corpus
  and n_projective + n_nonprojective > 0
order by case score when 'bleu' then 1 when 'fluency' then 2 when 'adequacy' then 3 end, score, submission"""

SQL_CAMPAIGN_SUBTREES = """\
-- Top suspicious subtrees per view over the campaign's submissions (SPEC 8): coverage = % of
-- submissions where the subtree is suspicious, MSS = mean suspicion there.
select view, subtree, suspicious_in, submissions_in_scope, coverage_pct, mean_suspicion
from suspicious_subtrees_summary
where scope = 'campaign' and scope_value = $campaign and suspicious_in > 0
qualify row_number() over (partition by view order by coverage_pct desc, mean_suspicion desc, subtree) <= $top
order by view, coverage_pct desc, mean_suspicion desc, subtree"""

SQL_CORPUS_SUBTREES = """\
-- Top suspicious subtrees per view over the corpus's submissions in the campaign (SPEC 8), as
-- suspicious_subtrees_summary computes them for a scope.
with scope as (
    select count(distinct submission_id) as submissions_in_scope
    from suspicious_subtrees
    where campaign = $campaign and corpus = $corpus
),
summary as (
    select view, subtree,
           count(*) as suspicious_in,
           submissions_in_scope,
           100.0 * suspicious_in / submissions_in_scope as coverage_pct,
           avg(suspicion) as mean_suspicion
    from suspicious_subtrees, scope
    where campaign = $campaign and corpus = $corpus and is_suspicious
    group by view, subtree, submissions_in_scope
)
select * from summary
qualify row_number() over (partition by view order by coverage_pct desc, mean_suspicion desc, subtree) <= $top
order by view, coverage_pct desc, mean_suspicion desc, subtree"""

SQL_RULES = """\
-- L'AMBRE rule scores per rule over the corpus's submissions (SPEC 9), worst mean first.
-- pooled = matches / (matches + failures) over all runs; rules_fired counts every rule.
select rule_id,
       count(*) as submissions,
       sum(matches)::bigint as matches,
       sum(failures)::bigint as failures,
       sum(matches) / (sum(matches) + sum(failures)) as pooled_score,
       avg(score) as score_mean,
       min(score) as score_min,
       max(score) as score_max,
       count(*) over () as rules_fired
from lambre_rule_scores
where campaign = $campaign and corpus = $corpus
group by rule_id
order by score_mean, rule_id
limit $top"""

SQL_BUILD = """\
select started_at, processor, models, tests, srlens_version, dbt_vars->>'signature' as signature
from meta.builds
order by started_at desc
limit 1"""

# ---------------------------------------------------------------------------------------------
# Charts: matplotlib Figure objects (no pyplot, so no global figure registry to fill up or close),
# saved as SVG with text kept as text. Margins are fixed in inches: layout engines (constrained,
# bbox_inches="tight") measure every label again and cost more than the drawing itself.

RC = {"svg.fonttype": "none", "svg.hashsalt": "srlens", "text.parse_math": False,
      "font.size": 8, "axes.titlesize": 9, "axes.spines.top": False, "axes.spines.right": False}


class Charts:
    """Numbers the charts: every SVG id (and reference to it) gets the chart's number as a prefix,
    as all charts share one HTML document and matplotlib restarts its ids in each figure."""

    def __init__(self):
        self.count = 0

    def svg(self, fig):
        self.count += 1
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        text = buf.getvalue()
        text = text[text.index("<svg"):]  # no XML declaration or DOCTYPE inside HTML
        text = re.sub(r'(\bid="|url\(#|href="#)', rf"\1s{self.count}-", text)
        return f'<div class="chart">{text}</div>'


def figure(width, height, left=0.6, right=0.2, top=0.35, bottom=0.45):
    """A figure of width x height inches, its axes inside the given margins (inches)."""
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                        top=1 - top / height)
    return fig


def label_width(labels, size=7):
    """Inches a column of tick labels needs (about 0.6 em a character)."""
    return 0.15 + 0.6 * size / 72 * max((len(str(x)) for x in labels), default=0)


def cells_mesh(ax, grid, **style):
    """grid[i, j] drawn as cell (row i from the top, column j), NaN cells left blank. A mesh of
    vector cells rather than imshow, which would embed a bitmap that browsers blur."""
    rows, cols = grid.shape
    mesh = ax.pcolormesh(np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5,
                         np.ma.masked_invalid(grid), **style)
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    return mesh


def heatmap_chart(charts, frame, title):
    """Lower triangle of median rho between every pair of variables (framework paper, Fig. 2)."""
    names = sorted(set(frame.metric_a) | set(frame.metric_b), key=metric_order)
    index = {m: i for i, m in enumerate(names)}
    grid = np.full((len(names), len(names)), np.nan)
    for a, b, rho in zip(frame.metric_a, frame.metric_b, frame.rho_median):
        i, j = sorted((index[a], index[b]), reverse=True)  # row below column: lower triangle
        grid[i, j] = rho
    grid = grid[1:, :-1]  # the first row and the last column of a strict lower triangle are empty
    labels = [METRICS.get(m, m) for m in names]
    cells = 0.36 * len(grid)
    fig = figure(cells + 2.2, cells + 1.2, left=0.9, right=1.3, top=0.4, bottom=0.8)
    ax = fig.add_subplot()
    image = cells_mesh(ax, grid, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(len(grid)), labels[:-1], rotation=60, ha="right")
    ax.set_yticks(range(len(grid)), labels[1:])
    for (i, j), value in np.ndenumerate(grid):
        if not math.isnan(value):
            ax.text(j, i, f"{value:.2f}".replace("0.", ".", 1), ha="center", va="center", fontsize=6.5,
                    color="white" if abs(value) > 0.6 else "black")
    ax.set_title(title)
    ax.spines[:].set_visible(False)
    bar = fig.add_axes((1 - 1.0 / fig.get_figwidth(), 0.3, 0.12 / fig.get_figwidth(), 0.5))
    fig.colorbar(image, cax=bar, label="median Spearman rho", ticks=[-1, -0.5, 0, 0.5, 1])
    return charts.svg(fig)


def ranking_chart(charts, submissions, scores, rank, value):
    """Submissions (rows, in table order) x scores: colour = rank on that score, text = value."""
    submissions = submissions[:MAX_BARS]
    grid = np.full((len(submissions), len(scores)), np.nan)
    for i, sub in enumerate(submissions):
        for j, score in enumerate(scores):
            if (sub, score) in rank:  # colour: 0 = first, 1 = last of the runs with that score
                last = max(1, sum(1 for (_, s) in rank if s == score) - 1)
                grid[i, j] = (rank[sub, score] - 1) / last
    left = label_width(submissions)
    fig = figure(left + 0.75 * len(scores) + 0.3, 1.3 + 0.22 * len(submissions), left=left, top=0.35,
                 bottom=0.95)
    ax = fig.add_subplot()
    cells_mesh(ax, grid, cmap="viridis", vmin=0, vmax=1)
    for i, sub in enumerate(submissions):
        for j, score in enumerate(scores):
            if (sub, score) in value:
                ax.text(j, i, f"{value[sub, score]:.2f}", ha="center", va="center", fontsize=6.5,
                        color="white" if grid[i, j] < 0.5 else "black")
    ax.set_xticks(range(len(scores)), [SCORES.get(s, s) for s in scores], rotation=45, ha="right")
    ax.set_yticks(range(len(submissions)), submissions, fontsize=7)
    ax.spines[:].set_visible(False)
    ax.set_title("rank on each score (dark = first)")
    return charts.svg(fig)


def dea_chart(charts, frame):
    """A box per relation over the submissions (quartiles, min-max whiskers, mean), worst mean
    first. Drawn as a few collections rather than with Axes.bxp, which makes seven artists a box."""
    x = np.arange(len(frame))
    fig = figure(max(4.0, 0.3 * len(frame) + 0.9), 3.2, bottom=0.8)
    ax = fig.add_subplot()
    ax.vlines(x, frame.dea_min, frame.dea_max, color="#555", linewidth=0.8)
    ax.bar(x, frame.dea_q3 - frame.dea_q1, bottom=frame.dea_q1, width=0.6, color="#c6d7ea",
           edgecolor="#555", linewidth=0.8)
    ax.hlines(frame.dea_median, x - 0.3, x + 0.3, color="#dd8452", linewidth=1.2)
    ax.plot(x, frame.dea_mean, "D", color="#2a7a2a", markersize=3)
    ax.set_xticks(x, frame.relation, rotation=60, ha="right")
    ax.set_xlim(-0.6, len(frame) - 0.4)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("DEA")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("box: quartiles over submissions, line: median, diamond: mean, whiskers: min-max",
                 fontsize=8)
    return charts.svg(fig)


def projectivity_chart(charts, frame):
    """Per score, the medians of the projective and non-projective sentences of each submission."""
    scores = list(dict.fromkeys(frame.score))
    parts = [frame[frame.score == score].head(MAX_BARS) for score in scores]
    left = label_width(frame.submission) + 0.1
    rows = max(len(p) for p in parts)
    fig = Figure(figsize=((left + 2.6) * len(scores), 1.1 + 0.22 * rows))
    fig.subplots_adjust(left=left / fig.get_figwidth(), right=0.97, bottom=0.4 / fig.get_figheight(),
                        top=1 - 0.6 / fig.get_figheight(), wspace=left / 2.6)
    for k, (score, part) in enumerate(zip(scores, parts)):
        y = np.arange(len(part))[::-1]
        ax = fig.add_subplot(1, len(scores), k + 1)
        ax.barh(y + 0.2, part.median_projective, height=0.4, color="#4c72b0", label="projective")
        ax.barh(y - 0.2, part.median_nonprojective, height=0.4, color="#dd8452", label="non-projective")
        labels = [s + (" *" if t and p < 0.05 else "")
                  for s, t, p in zip(part.submission, part.tested, part.p_value.fillna(1.0))]
        ax.set_yticks(y, labels, fontsize=7)
        ax.set_title(f"median {score}")
        ax.axvline(0, color="grey", linewidth=0.5)
    fig.legend(*ax.get_legend_handles_labels(), loc="upper left", ncols=2, fontsize=7, frameon=False)
    return charts.svg(fig)


def rules_chart(charts, frame):
    """Mean rule score over the submissions, whiskers from the worst to the best run."""
    part = frame.iloc[::-1]
    y = np.arange(len(part))
    left = label_width(part.rule_id)
    fig = figure(left + 4.5, 0.9 + 0.2 * len(part), left=left)
    ax = fig.add_subplot()
    ax.barh(y, part.score_mean, color="#55a868",
            xerr=[part.score_mean - part.score_min, part.score_max - part.score_mean],
            error_kw={"elinewidth": 0.8, "capsize": 2})
    ax.set_yticks(y, part.rule_id, fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_title("rule score: mean over submissions, whiskers min-max")
    return charts.svg(fig)


def metric_order(name):
    return (list(METRICS).index(name), name) if name in METRICS else (len(METRICS), name)


# ---------------------------------------------------------------------------------------------
# HTML helpers.

def esc(value):
    return html.escape(str(value))


def missing(value):
    return value is None or (pd.api.types.is_scalar(value) and pd.isna(value))


def fmt(value, digits=3):
    """Numbers for tables: floats rounded, NULL as a dash."""
    if missing(value):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_p(value):
    if missing(value):
        return "–"
    return f"{value:.2e}" if value < 0.001 else f"{value:.3f}"


def table(rows, columns, cls=""):
    """rows: list of dicts; columns: (key, header, formatter)."""
    head = "".join(f"<th>{esc(h)}</th>" for _, h, _ in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(f(row[k]))}</td>" for k, _, f in columns) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def records(frame):
    return frame.to_dict("records")


def note(text):
    return f'<p class="note">{esc(text)}</p>'


class Report:
    """Runs each query once, keeps the HTML in order."""

    def __init__(self, con):
        self.con = con
        self.charts = Charts()
        self.parts = []
        self.toc = []

    def query(self, sql, **params):
        """The result as a DataFrame, and the SQL and parameters to show under it."""
        frame = self.con.execute(sql, params).df() if params else self.con.execute(sql).df()
        shown = "".join(f"\n-- ${k} = {v!r}" for k, v in params.items())
        details = (f'<details class="sql"><summary>SQL</summary><pre>{esc(sql)}</pre>'
                   + (f'<pre class="params">{esc(shown.strip())}</pre>' if params else "")
                   + "</details>")
        return frame, details

    def add(self, *chunks):
        self.parts.extend(chunks)

    def heading(self, level, text, anchor):
        self.add(f'<h{level} id="{anchor}">{esc(text)}</h{level}>')
        if level <= 3:
            self.toc.append((level, text, anchor))


# ---------------------------------------------------------------------------------------------
# Sections.

STAT_COLUMNS = [("tree_depth", "depth"), ("tree_length", "length"), ("mdd", "MDD"),
                ("mfs", "MFS"), ("mfw", "MFW"), ("mean_arity", "arity")]


def corpus_stats_table(frame):
    """The framework paper's Table 2: S, count, then mean (sd) of each metric, NP %."""
    rows = []
    for r in frame.to_dict("records"):
        row = {"corpus": r["corpus"], "submissions": r["submissions"], "sentences": r["sentences"],
               "nonprojective_pct": r["nonprojective_pct"]}
        for key, _ in STAT_COLUMNS:
            row[key] = f"{fmt(r[key + '_mean'], 2)} ({fmt(r[key + '_sd'], 2)})"
        rows.append(row)
    columns = ([("corpus", "corpus", str), ("submissions", "S", fmt), ("sentences", "sentences", fmt)]
               + [(k, h, str) for k, h in STAT_COLUMNS]
               + [("nonprojective_pct", "NP %", lambda v: fmt(v, 2))])
    return table(rows, columns, "stats")


def subtree_tables(report, frame, scope_text):
    if frame.empty:
        report.add(note(f"No suspicious subtree in {scope_text}."))
        return
    out = []
    for view in sorted(set(frame.view), key=lambda v: (VIEWS.index(v) if v in VIEWS else 9, v)):
        part = frame[frame.view == view].to_dict("records")
        out.append(f'<div class="subtrees"><h5>view {esc(view)}</h5>' + table(part, [
            ("subtree", "subtree", str), ("coverage_pct", "coverage %", lambda v: fmt(v, 1)),
            ("suspicious_in", "suspicious in", fmt), ("mean_suspicion", "MSS", lambda v: fmt(v, 2)),
        ]) + "</div>")
    denominator = int(frame.submissions_in_scope.iloc[0])
    report.add(f"<p>Top {TOP_SUBTREES} per view; coverage is over {denominator} submission"
               f"{'s' if denominator != 1 else ''}.</p>", '<div class="row">' + "".join(out) + "</div>")


def campaign_section(report, campaign, ci):
    anchor = f"c{ci}"
    report.heading(2, f"Campaign {campaign}", anchor)

    report.heading(4, "Corpus statistics", f"{anchor}-stats")
    stats, sql = report.query(SQL_CORPUS_STATS, campaign=campaign)
    report.add(corpus_stats_table(stats), sql)

    report.heading(4, "Median Spearman ρ between metrics, all submissions", f"{anchor}-rho")
    corr, sql = report.query(SQL_CAMPAIGN_CORRELATIONS, campaign=campaign)
    report.add(heatmap_chart(report.charts, corr, f"{campaign}: median over submissions")
               if len(corr) else note("No correlation could be computed."), sql)

    report.heading(4, "DEA per relation, macro-average over submissions", f"{anchor}-dea")
    dea, sql = report.query(SQL_CAMPAIGN_DEA, campaign=campaign, min_edges=MIN_EDGES)
    report.add(table(records(dea), [
        ("relation", "relation", str), ("edges", "edges", fmt), ("corpora", "corpora", fmt),
        ("submissions", "submissions", fmt), ("dea_mean", "DEA (mean)", fmt),
        ("dea_min", "min", fmt), ("dea_max", "max", fmt)]) if len(dea)
        else note(f"No relation has {MIN_EDGES} edges."), sql)

    report.heading(4, "Top suspicious subtrees, all submissions", f"{anchor}-subtrees")
    subtrees, sql = report.query(SQL_CAMPAIGN_SUBTREES, campaign=campaign, top=TOP_SUBTREES)
    subtree_tables(report, subtrees, "this campaign")
    report.add(sql)

    for ki, corpus in enumerate(stats.corpus):
        print(f"report: campaign {campaign}, corpus {corpus}", file=sys.stderr)
        corpus_section(report, campaign, corpus, f"{anchor}-k{ki}")


def corpus_section(report, campaign, corpus, anchor):
    report.heading(3, f"{corpus} ({campaign})", anchor)
    params = {"campaign": campaign, "corpus": corpus}

    report.heading(4, "Submissions ranked by each score", f"{anchor}-rank")
    ranked, sql = report.query(SQL_RANKING, **params)
    if ranked.empty:
        report.add(note("No scores."), sql)
    else:
        rank = {(r.submission, r.score): r.rank for r in ranked.itertuples()}
        value = {(r.submission, r.score): r.value for r in ranked.itertuples()}
        present = set(ranked.score)
        scores = [s for s in SCORES if s in present] + sorted(present - set(SCORES))
        # rows in the order of the first score (corpus BLEU); the query sorts by score and rank
        first = ranked[ranked.score == scores[0]].submission.tolist()
        order = first + sorted(set(ranked.submission) - set(first))
        rows = [{"submission": sub, **{s: f"{fmt(value[sub, s])} (#{rank[sub, s]})" if (sub, s) in rank
                                       else "–" for s in scores}} for sub in order]
        report.add(ranking_chart(report.charts, order, scores, rank, value),
                   table(rows, [("submission", "submission", str)]
                         + [(s, SCORES.get(s, s), str) for s in scores], "ranking"), sql)

    report.heading(4, "Median Spearman ρ between metrics", f"{anchor}-rho")
    corr, sql = report.query(SQL_CORPUS_CORRELATIONS, **params)
    report.add(heatmap_chart(report.charts, corr, f"{corpus}: median over submissions")
               if len(corr) else note("No correlation could be computed (too few sentences?)."), sql)

    report.heading(4, "DEA per relation across submissions, worst first", f"{anchor}-dea")
    dea, sql = report.query(SQL_CORPUS_DEA, **params, min_edges=MIN_EDGES)
    if dea.empty:
        report.add(note(f"No relation has {MIN_EDGES} reference edges in this corpus."), sql)
    else:
        report.add(dea_chart(report.charts, dea), table(records(dea), [
            ("relation", "relation", str), ("edges", "edges", fmt), ("submissions", "submissions", fmt),
            ("dea_mean", "DEA (mean)", fmt), ("dea_min", "min", fmt), ("dea_median", "median", fmt),
            ("dea_max", "max", fmt)], "compact"), sql)

    report.heading(4, "Projective vs non-projective sentences", f"{anchor}-proj")
    proj, sql = report.query(SQL_PROJECTIVITY, **params)
    plotted = proj.dropna(subset=["median_projective", "median_nonprojective"])
    if proj.empty:
        report.add(note("No projectivity comparison (no scored sentences)."), sql)
    else:
        reasons = sorted(set(proj.skipped_reason.dropna()))
        report.add(projectivity_chart(report.charts, plotted) if len(plotted)
                   else note("No submission has both projective and non-projective sentences."),
                   "<p>* p &lt; 0.05 (two-sided Mann-Whitney U).</p>" if proj.tested.any() else "",
                   note("Not tested: " + "; ".join(reasons)) if reasons else "",
                   table(records(proj), [
                       ("submission", "submission", str), ("score", "score", str),
                       ("n_projective", "n proj.", fmt), ("n_nonprojective", "n non-proj.", fmt),
                       ("median_projective", "median proj.", fmt),
                       ("median_nonprojective", "median non-proj.", fmt), ("u", "U", lambda v: fmt(v, 1)),
                       ("p_value", "p", fmt_p), ("tested", "tested", fmt)], "compact"), sql)

    report.heading(4, "Top suspicious subtrees", f"{anchor}-subtrees")
    subtrees, sql = report.query(SQL_CORPUS_SUBTREES, **params, top=TOP_SUBTREES)
    subtree_tables(report, subtrees, "this corpus")
    report.add(sql)

    report.heading(4, "Rule scores per rule", f"{anchor}-rules")
    rules, sql = report.query(SQL_RULES, **params, top=TOP_RULES)
    if rules.empty:
        report.add(note("No rule scores: rules are checked on parsed outputs only (processor stanza "
                        "or runs loaded as CoNLL-U), and only where the language has rules."), sql)
    else:
        fired = int(rules.rules_fired.iloc[0])
        report.add(f"<p>{len(rules)} worst of {fired} rules that fired.</p>",
                   rules_chart(report.charts, rules), table(records(rules), [
                       ("rule_id", "rule", str), ("submissions", "submissions", fmt),
                       ("matches", "matches", fmt), ("failures", "failures", fmt),
                       ("pooled_score", "pooled", fmt), ("score_mean", "mean", fmt),
                       ("score_min", "min", fmt), ("score_max", "max", fmt)], "compact"), sql)


# ---------------------------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222;
       padding: 0 1em; }
h2 { border-bottom: 2px solid #888; margin-top: 2em; }
h3 { border-bottom: 1px solid #bbb; margin-top: 1.8em; }
h5 { margin: 0.3em 0; }
a { color: #335; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f0f0f0; }
td:first-child { text-align: left; font-family: ui-monospace, monospace; }
.chart svg { max-width: 100%; height: auto; }
details.sql { margin: 0.3em 0 1em; }
details.sql summary { cursor: pointer; color: #555; font-size: 0.85em; }
details.sql pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.8em; }
.note { color: #666; font-style: italic; }
.row { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: flex-start; }
nav ul { columns: 2; }
nav .l3 { margin-left: 1.5em; }
"""


def open_warehouse(warehouse):
    con = open_read_only(warehouse)  # the sandbox (no progress bar: progress is a line per section)
    missing = [m for m in REQUIRED_MARTS if m not in mart_names(con)]
    if missing:
        con.close()
        raise WarehouseError(f"warehouse {warehouse} is not built (missing marts: {', '.join(missing)}): "
                             f"run `srlens build` first")
    return con


def write_report(warehouse, out_dir):
    """Write OUT_DIR/index.html for the warehouse and return its path."""
    con = open_warehouse(warehouse)
    try:
        with rc_context(RC):
            report = render(con)
        try:
            build = con.execute(SQL_BUILD).fetchone()
        except duckdb.CatalogException:  # a warehouse built before meta.builds existed
            build = None
    finally:
        con.close()

    name = esc(Path(warehouse).name)
    built = (f"built {build[0]:%Y-%m-%d %H:%M} with processor {build[1]}, srlens {build[4]}"
             if build else "build time unknown") + (f", signature {esc(build[5])}" if build and build[5] else "")
    toc = "".join(f'<li class="l{level}"><a href="#{anchor}">{esc(text)}</a></li>'
                  for level, text, anchor in report.toc)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>srlens report: {name}</title>
<style>{CSS}</style></head>
<body>
<h1>srlens report</h1>
<p>Warehouse <code>{name}</code>, {esc(built)}. The figures are defined in SPEC.md; the SQL behind
every table and chart is under it. SSA/GSA: simple/generation string accuracy, STA/GTA:
simple/generation tree accuracy, MDD: mean dependency distance, MFS/MFW: mean flux size/weight,
NP: non-projective sentences, S: submissions, MSS: mean suspicion score.</p>
<nav><ul>{toc}</ul></nav>
{"".join(report.parts)}
</body></html>
"""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def render(con):
    """Every section, in page order."""
    report = Report(con)
    report.heading(2, "Campaigns", "campaigns")
    campaigns, sql = report.query(SQL_CAMPAIGNS)
    report.add(table(records(campaigns), [
        ("campaign", "campaign", str), ("corpora", "corpora", fmt), ("submissions", "submissions", fmt)])
        if len(campaigns) else note("No submissions loaded."), sql)
    for ci, campaign in enumerate(campaigns.campaign):
        print(f"report: campaign {campaign}", file=sys.stderr)
        campaign_section(report, campaign, ci)
    unused, sql = report.query(SQL_UNUSED_CORPORA)
    if len(unused):
        report.heading(2, "Treebanks without submissions", "unused")
        report.add(corpus_stats_table(unused), sql)
    return report
