"""Sentence pages (sentences/<run>/<sent_idx>.html): only for the sentences that are examples in
error_examples, so a campaign writes a bounded number of pages (at most examples_per_key per
relation and suspicious subtree of each run, and usually far fewer distinct sentences)."""

from itertools import groupby

from srlens.report.markup import Html, esc, fmt, link, page, table
from srlens.report.runs import examples_anchor, run_file
from srlens.report.tree import tree_svg


def aligned_words(reference, output):
    """Join the k-th reference word of a lemma with the k-th output word of that lemma (the
    queries number the occurrences): sets each word's `aligned` position (in place: the dicts are
    the page's own, and a copy of every word cost more than the drawing) and returns both lists."""
    out_by_key = {(w["lemma_lower"], w["occurrence"]): w["pos"] for w in output}
    ref_by_key = {(w["lemma_lower"], w["occurrence"]): w["pos"] for w in reference}
    for w in reference:
        w["aligned"] = out_by_key.get((w["lemma_lower"], w["occurrence"]))
    for w in output:
        w["aligned"] = ref_by_key.get((w["lemma_lower"], w["occurrence"]))
    return reference, output


def sentence_page(run, rows, words, output, missed_edges):
    """rows: the run's error_examples rows of this sentence (one per key it exemplifies);
    missed_edges: the reference edges the sentence misses (error_examples.missed_edges)."""
    first = rows[0]
    missed = {(e["head_pos"], e["dep_pos"]) for e in missed_edges}
    words, output = aligned_words(words, output)
    back = "../../" + run_file(run["submission_id"])
    keys = "".join(
        f'<li>{link(back + "#" + examples_anchor(r["kind"], r["key"], r["view"]), label(r))} (rank {r["rank"]})</li>'
        for r in rows
    )
    edges = (
        table(
            missed_edges,
            [
                ("relation", "relation", str),
                ("head", "head", str),
                ("dependent", "dependent", str),
                ("distance", "distance", str),
            ],
            "missed-edges",
        )
        if missed_edges
        else ""
    )
    title = f"{run['submission']}: sentence {first['sent_id']}"
    body = f"""<nav class="crumbs" aria-label="breadcrumbs"><a href="../../index.html">report</a> ›
<a href="{esc(back)}">{esc(run['submission'])} on {esc(run['corpus'])}</a> › {esc(first['sent_id'])}</nav>
<main id="main">
<h1 class="sentence">{esc(title)}</h1>
<p>Sentence BLEU {fmt(first['bleu'])}, DEA {fmt(first['dea'])}: {first['missed']} of {first['edges']}
reference edges missed.</p>
<figure class="tree-view">
<div class="scroll" tabindex="0" role="region" aria-label="dependency tree">{tree_svg(words, output, missed)}</div>
<figcaption>Reference analysis tree (punctuation dropped, SPEC 1) over its words; the output's words
below, each joined to the reference word of the same lemma. <span class="legend-missed">Red dashed
arcs</span>: reference edges the output misses (DEA). Grey words: reference words the output lacks;
italic: output words not in the reference. A tree wider than the page scrolls sideways (focus it and
use the arrow keys).</figcaption>
</figure>
<dl><dt>Reference</dt><dd>{esc(first['reference_text'] or '–')}</dd>
<dt>Output</dt><dd>{esc(first['output_text'])}</dd></dl>
<h2>An example of</h2>
<ul class="keys">{keys}</ul>
{"<h2>Missed edges</h2>" + edges if edges else ""}
</main>"""
    return page(f"srlens: {title}", Html(body), "../..")


def label(row):
    return f"relation {row['key']}" if row["kind"] == "relation" else f"subtree {row['key']} (view {row['view']})"


def sentence_pages(run, rows):
    """(sent_idx, html) of each example sentence of the run; rows: the run's rows of RUN_QUERIES."""
    ref_by_sentence = {k: list(g) for k, g in groupby(rows["reference"], key=lambda w: w["sent_idx"])}
    out_by_sentence = {k: list(g) for k, g in groupby(rows["output"], key=lambda w: w["sent_idx"])}
    missed_by_sentence = {r["sent_idx"]: r["missed_edges"] for r in rows["missed_edges"]}
    by_sentence = sorted(rows["examples"], key=lambda r: r["sent_idx"])  # stable: each sentence's rows keep their order
    for sent_idx, part in groupby(by_sentence, key=lambda r: r["sent_idx"]):
        words, output = ref_by_sentence.get(sent_idx, []), out_by_sentence.get(sent_idx, [])
        yield sent_idx, sentence_page(run, list(part), words, output, missed_by_sentence[sent_idx])
