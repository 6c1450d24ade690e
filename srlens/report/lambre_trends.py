"""L'AMBRE across campaigns: the paper's two diachronic views, as HTML for the report.

* Figure 5 (`systems_chart`): per corpus, the corpus-level rule score of every system run of each
  campaign over time, their median, and the reference run (human translations loaded as the team
  of var lambre_reference_team) marked apart.
* Figure 6 (`rule_medians_chart`): per language, the median score of each rule over the campaign's
  system runs, over time (mart rule_trends), for the rules that fired in the most runs.

`section(con)` returns the whole HTML section (charts as inline SVG, the parsers named), or "" for a
warehouse without these marts; the report places it. Campaigns are ordered by their date
(`srlens campaign NAME --date`), undated ones last by name; the x axis shows campaign names.
"""

import html

from srlens.report.charts import CYCLE, Axes, Charts, line_panel, padded, text_width

TOP_RULES = 8  # rules per language in Figure 6
TITLE = "L'AMBRE across campaigns"
ANCHOR = "lambre-trends"
MARTS = ("campaign_trends", "rule_trends", "submission_scores")
BLUE, ORANGE = "#4c72b0", "#dd8452"
LEFT = 64  # pixels left of a plot: tick labels and the axis's name

# Figure 5's points: every run of the campaign's corpus with a rule score, the reference team's runs
# flagged (every one of them, as campaign_trends leaves them all out of its systems).
SYSTEMS_SQL = """
select t.campaign, t.campaign_date, s.team, s.run, s.rule_score,
       s.team is not distinct from r.team as is_reference
from campaign_trends t
join submission_scores s on s.campaign = t.campaign and s.corpus = t.corpus
left join submission_scores r on r.submission_id = t.reference_submission_id
where t.corpus = $corpus and s.rule_score is not null
order by t.campaign_date nulls last, t.campaign, s.team, s.run
"""

# Figure 6's lines: the language's most often fired rules, their median per campaign.
RULES_SQL = """
with top as (
    select rule_id from rule_trends where language = $language and submissions > 0
    group by rule_id order by sum(submissions) desc, rule_id limit $top
)
select campaign, campaign_date, rule_id, median_score, submissions
from rule_trends join top using (rule_id)
where language = $language and submissions > 0
order by campaign_date nulls last, campaign, rule_id
"""


def _campaign_axis(frame):
    """Campaigns in date order (undated last, by name) -> x positions."""
    order = frame.drop_duplicates("campaign")[["campaign"]]
    return {campaign: x for x, campaign in enumerate(order["campaign"])}


def _axes(svg, frame, xs, values, label, plot_width):
    """The plot area: campaigns on x (each name over its year: the axis is time, one step a
    campaign), the values' range on y."""
    lo, hi = padded(values)
    ax = Axes(svg, (LEFT, 34, plot_width, 170), (-0.5, len(xs) - 0.5), (lo, hi))
    ax.number_yticks(lo, hi, grid=True)
    dates = frame.drop_duplicates("campaign").set_index("campaign").campaign_date
    labels = [c if dates[c] is None or dates[c] != dates[c] else f"{c}\n{dates[c]:%Y}" for c in xs]
    ax.spines()
    ax.xticks(list(xs.values()), labels)
    ax.ylabel(label, 50)
    return ax


def systems_chart(con, corpus, charts=None):
    """Figure 5 for one corpus, as an SVG string ('' when no run has a rule score)."""
    frame = con.execute(SYSTEMS_SQL, {"corpus": corpus}).df()
    if frame.empty:
        return ""
    xs = _campaign_axis(frame)
    plot_width = max(150, 80 * len(xs))
    svg = (charts or Charts("t")).new(LEFT + plot_width + 110, 250, f"{corpus}: rule score of the systems per campaign")
    ax = _axes(svg, frame, xs, frame.rule_score, "rule score", plot_width)
    ax.title(f"{corpus}: systems per campaign")
    systems, references = frame[~frame.is_reference], frame[frame.is_reference]
    medians = systems.groupby("campaign", sort=False).rule_score.median()
    svg.polyline([(ax.x(xs[c]), ax.y(m)) for c, m in medians.items()], BLUE)
    for team, run, campaign, score in zip(systems.team, systems.run, systems.campaign, systems.rule_score):
        svg.marker("o", ax.x(xs[campaign]), ax.y(score), 3, BLUE, f"{team}/{run}, {campaign}: {score:.4f}")
    for team, run, campaign, score in zip(references.team, references.run, references.campaign, references.rule_score):
        svg.marker("*", ax.x(xs[campaign]), ax.y(score), 7, ORANGE, f"reference {team}/{run}, {campaign}: {score:.4f}")
    entries = [("system", BLUE, "o", None), ("median", BLUE, "line", None)]
    svg.legend(
        ax.left + plot_width + 14, ax.top + 6, entries + ([("reference", ORANGE, "*", None)] if len(references) else [])
    )
    return svg.render()


def rule_medians_chart(con, language, top=TOP_RULES, charts=None):
    """Figure 6 for one language, as an SVG string ('' when no rule fired)."""
    frame = con.execute(RULES_SQL, {"language": language, "top": top}).df()
    if frame.empty:
        return ""
    xs = _campaign_axis(frame)
    plot_width = max(150, 80 * len(xs))
    lines = [(rule_id.split("|", 2)[2], rows) for rule_id, rows in frame.groupby("rule_id", sort=True)]
    legend_width = 48 + text_width([name for name, _ in lines], 9)
    svg = (charts or Charts("t")).new(
        LEFT + plot_width + legend_width, 250, f"{language}: median score of each rule per campaign"
    )
    ax = _axes(svg, frame, xs, frame.median_score, "median rule score", plot_width)
    ax.title(f"{language}: per-rule medians over campaigns")
    labels = list(xs)
    line_panel(
        ax,
        labels,
        [
            ([(xs[c], v) for c, v in zip(rows.campaign, rows.median_score)], CYCLE[k % 10], None, name)
            for k, (name, rows) in enumerate(lines)
        ],
        3,
    )
    svg.legend(
        ax.left + plot_width + 14,
        ax.top + 6,
        [(name, CYCLE[k % 10], "line", None) for k, (name, _) in enumerate(lines)],
        9,
    )
    return svg.render()


def section(con):
    """The report's L'AMBRE trends section (HTML), or '' when the warehouse lacks its marts."""
    present = {
        r[0] for r in con.execute("select table_name from duckdb_tables() where schema_name = 'main'").fetchall()
    }
    if not set(MARTS) <= present:
        return ""
    # the corpora with rule scores (a text run under --processor aligned has none: no parser, no chart)
    corpora = con.execute("""
        select corpus, string_agg(distinct parsers, ', ' order by parsers) from campaign_trends
        where systems > 0 or reference_rule_score is not null group by corpus order by corpus""").fetchall()
    languages = [r[0] for r in con.execute("select distinct language from rule_trends order by language").fetchall()]
    if not corpora:
        return ""
    parts = [
        f'<section class="lambre-trends"><h2 id="{ANCHOR}">{html.escape(TITLE)}</h2>',
        "<p class=\"note\">Rule scores check the parses of the outputs: they depend on the parser's "
        "quality. Parsers: " + html.escape("; ".join(f"{c}: {p}" for c, p in corpora)) + ".</p>",
    ]
    charts = Charts("t")  # ids apart from the overview's charts (s1, s2, ...)
    for corpus, _ in corpora:
        parts.append(_chart_div(systems_chart(con, corpus, charts)))
    for language in languages:
        parts.append(_chart_div(rule_medians_chart(con, language, charts=charts)))
    parts.append("</section>")
    return "\n".join(parts)


def _chart_div(svg):
    return f'<div class="chart">{svg}</div>' if svg else ""
