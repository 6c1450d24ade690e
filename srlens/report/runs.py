"""Run pages (runs/<run>.html): one per submission, with its scores, its weakest relations and
most suspicious subtrees (each linked to its example sentences), its bucket table, and the
examples of error_examples, each linked to its sentence page."""

from itertools import groupby

from srlens.report.markup import (
    Html,
    esc,
    fmt,
    link,
    missing,
    note,
    page,
    short,
    slug,
    table,
)
from srlens.report.queries import TOP_SUBTREES


def run_file(submission_id):
    return f"runs/{slug(submission_id)}.html"


def sentence_dir(submission_id):
    return f"sentences/{slug(submission_id)}"


def sentence_file(submission_id, sent_idx):
    return f"{sentence_dir(submission_id)}/{int(sent_idx)}.html"


def examples_anchor(kind, key, view=None):
    return "ex-" + slug(f"{kind}|{view or ''}|{key}")


def interval(value, low, high):
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]" if not missing(low) else fmt(value)


def examples_link(count, anchor):
    return link(f"#{anchor}", f"{count} example{'s' if count != 1 else ''}") if count else Html("–")


def relations_table(rows):
    for r in rows:
        anchor = examples_anchor("relation", r["relation"])
        r["relation"] = link(f"#{anchor}", r["relation"]) if r["examples"] else r["relation"]
        r["examples"] = examples_link(r["examples"], anchor)
    return table(
        rows,
        [
            ("relation", "relation", str),
            ("edges", "edges", fmt),
            ("matched", "matched", fmt),
            ("dea", "DEA", fmt),
            ("examples", "examples", str),
        ],
        "relations",
    )


def subtrees_table(rows):
    for r in rows:
        anchor = examples_anchor("subtree", r["subtree"], r["view"])
        r["subtree"] = link(f"#{anchor}", r["subtree"]) if r["examples"] else r["subtree"]
        r["examples"] = examples_link(r["examples"], anchor)
    return table(
        rows,
        [
            ("view", "view", str),
            ("subtree", "subtree", str),
            ("c_f", "C(f)", fmt),
            ("c_f_fail", "C(f|F)", fmt),
            ("suspicion", "S(f)", fmt),
            ("examples", "examples", str),
        ],
        "subtrees",
    )


def buckets_table(rows):
    return table(
        rows,
        [
            ("dimension", "dimension", str),
            ("bucket", "bucket", str),
            ("sentences", "sentences", fmt),
            ("edges", "edges", fmt),
            ("dea", "DEA", fmt),
            ("corpus_bleu", "BLEU (corpus)", fmt),
            ("lemmas", "lemmas", fmt),
            ("lemma_recall", "lemma recall", fmt),
        ],
        "buckets",
    )


def example_sections(examples, submission_id):
    """One section per (kind, view, key), in the order of error_examples, its sentences worst first."""
    out = []
    for (kind, view, key), part in groupby(examples, key=lambda r: (r["kind"], r["view"], r["key"])):
        title = f"relation {key}" if kind == "relation" else f"subtree {key} (view {view})"
        rows = []
        for r in part:
            rows.append(
                {
                    **r,
                    "sentence": link(
                        "../" + sentence_file(submission_id, r["sent_idx"]), short(r["sent_id"]), title=r["sent_id"]
                    ),
                    "of_key": f'{r["key_missed"]} of {r["key_edges"]}' if kind == "relation" else "–",
                }
            )
        columns = [
            ("rank", "rank", fmt),
            ("sentence", "sentence", str),
            *([("of_key", f"missed {key}", str)] if kind == "relation" else []),
            ("missed", "missed edges", fmt),
            ("edges", "edges", fmt),
            ("bleu", "BLEU", fmt),
            ("reference_text", "reference", str),
            ("output_text", "output", str),
        ]
        out.append(
            f'<section id="{examples_anchor(kind, key, view)}" class="examples">'
            f"<h3>{esc(title)}</h3>" + table(rows, columns, "examples") + "</section>"
        )
    return "".join(out)


def rank_sentence(run):
    """Where the run stands among the corpus's runs on corpus BLEU and DEA (system_rankings)."""
    parts = []
    for metric, label in (("corpus_bleu", "BLEU (corpus)"), ("dea", "DEA (micro)")):
        best, worst = run[f"{metric}_rank_best"], run[f"{metric}_rank_worst"]
        if missing(best):
            continue
        ranks = f"rank {int(best)}" if best == worst else f"ranks {int(best)}–{int(worst)}"
        parts.append(f"{label} {ranks} of {int(run[f'{metric}_ranked'])}, cluster {int(run[f'{metric}_cluster'])}")
    if not parts:
        return ""
    return "\nRank range among the corpus's runs (Holm-corrected paired bootstrap): " + esc("; ".join(parts)) + "."


def run_page(run, rows, corpus_href):
    """The HTML of one run's page; run is a row of SQL_RUNS, rows the run's rows of RUN_QUERIES."""
    sid = run["submission_id"]
    relations, subtrees, bucket_rows, examples = (rows[k] for k in ("relations", "subtrees", "buckets", "examples"))
    title = f"{run['submission']} on {run['corpus']}"
    body = f"""<nav class="crumbs" aria-label="breadcrumbs"><a href="../index.html">report</a> ›
<a href="../{esc(corpus_href)}">{esc(run['corpus'])} ({esc(run['campaign'])})</a> › {esc(run['submission'])}</nav>
<main id="main">
<h1>{esc(title)}</h1>
<p>Submission <code>{esc(sid)}</code>: {fmt(run['sentences'])} sentences, {fmt(run['missing'])} missing.
BLEU (corpus) {esc(interval(run['corpus_bleu'], run['corpus_bleu_ci_low'], run['corpus_bleu_ci_high']))},
DEA (micro) {esc(interval(run['dea'], run['dea_ci_low'], run['dea_ci_high']))}
(95% bootstrap intervals).{rank_sentence(run)}</p>
<nav aria-label="sections"><ul class="inline"><li><a href="#relations">weakest relations</a></li>
<li><a href="#subtrees">suspicious subtrees</a></li><li><a href="#buckets">buckets</a></li>
<li><a href="#examples">examples</a></li></ul></nav>
<h2 id="relations">Weakest relations</h2>
<p>DEA of the run per base relation, worst first (dea_by_relation). A relation links to the sentences
that miss the most of its edges (error_examples).</p>
{relations_table(relations) if relations else note("No reference edges scored.")}
<h2 id="subtrees">Most suspicious subtrees</h2>
<p>Top {TOP_SUBTREES} per view by suspicion S(f) (suspicious_subtrees); a subtree links to failing
sentences that contain it.</p>
{subtrees_table(subtrees) if subtrees else note("No suspicious subtree in this run.")}
<h2 id="buckets">Buckets</h2>
{buckets_table(bucket_rows) if bucket_rows else note("No bucket scores.")}
<h2 id="examples">Examples</h2>
{example_sections(examples, sid) if examples else note("No example sentences (nothing missed).")}
</main>"""
    return page(f"srlens: {title}", Html(body), "..")
