"""L'AMBRE across campaigns (issue 17): the paper's two diachronic views, as HTML for the report.

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
import io
import re

from srlens.report.charts import new_figure

TOP_RULES = 8  # rules per language in Figure 6
TITLE = "L'AMBRE across campaigns"
ANCHOR = "lambre-trends"
MARTS = ("campaign_trends", "rule_trends", "submission_scores")

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


def _svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]  # no XML declaration inside HTML


def _campaign_axis(frame):
    """Campaigns in date order (undated last, by name) -> x positions."""
    order = frame.drop_duplicates("campaign")[["campaign"]]
    return {campaign: x for x, campaign in enumerate(order["campaign"])}


def _campaign_ticks(ax, frame, xs):
    """The x axis: each campaign's name over its year (the axis is time, one step a campaign)."""
    dates = frame.drop_duplicates("campaign").set_index("campaign").campaign_date
    labels = [c if dates[c] is None or dates[c] != dates[c] else f"{c}\n{dates[c]:%Y}" for c in xs]
    ax.set_xticks(list(xs.values()), labels, fontsize=7)
    ax.set_xlim(-0.5, len(xs) - 0.5)


def systems_chart(con, corpus):
    """Figure 5 for one corpus, as an SVG string ('' when no run has a rule score)."""
    frame = con.execute(SYSTEMS_SQL, {"corpus": corpus}).df()
    if frame.empty:
        return ""
    xs = _campaign_axis(frame)
    fig = new_figure((max(3.2, 1.6 + 0.9 * len(xs)), 3.0))  # room for the title with one campaign
    ax = fig.add_subplot()
    systems, references = frame[~frame.is_reference], frame[frame.is_reference]
    ax.scatter([xs[c] for c in systems.campaign], systems.rule_score, s=14, color="#4c72b0", label="system")
    medians = systems.groupby("campaign", sort=False).rule_score.median()
    ax.plot([xs[c] for c in medians.index], medians.values, color="#4c72b0", linewidth=1, label="median")
    if len(references):
        ax.scatter(
            [xs[c] for c in references.campaign],
            references.rule_score,
            marker="*",
            s=90,
            color="#dd8452",
            label="reference",
        )
    _campaign_ticks(ax, frame, xs)
    ax.set_ylabel("rule score", fontsize=8)
    ax.set_title(f"{corpus}: systems per campaign", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _svg(fig)


def rule_medians_chart(con, language, top=TOP_RULES):
    """Figure 6 for one language, as an SVG string ('' when no rule fired)."""
    frame = con.execute(RULES_SQL, {"language": language, "top": top}).df()
    if frame.empty:
        return ""
    xs = _campaign_axis(frame)
    fig = new_figure((3.6 + 0.9 * len(xs), 3.2))
    ax = fig.add_subplot()
    for rule_id, rows in frame.groupby("rule_id", sort=True):
        ax.plot(
            [xs[c] for c in rows.campaign],
            rows.median_score,
            marker="o",
            markersize=3,
            linewidth=1,
            label=rule_id.split("|", 2)[2],
        )
    _campaign_ticks(ax, frame, xs)
    ax.set_ylabel("median rule score", fontsize=8)
    ax.set_title(f"{language}: per-rule medians over campaigns", fontsize=9)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return _svg(fig)


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
    for n, (corpus, _) in enumerate(corpora):
        parts.append(_chart_div(systems_chart(con, corpus), f"t5-{n}"))
    for n, language in enumerate(languages):
        parts.append(_chart_div(rule_medians_chart(con, language), f"t6-{n}"))
    parts.append("</section>")
    return "\n".join(parts)


def _chart_div(svg, prefix):
    """An inline chart whose SVG ids are made unique on the page."""
    if not svg:
        return ""
    svg = re.sub(r'(\bid="|url\(#|href="#)', rf"\1{prefix}-", svg)
    return f'<div class="chart">{svg}</div>'
