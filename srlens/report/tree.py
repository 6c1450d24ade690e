"""The sentence view's drawing: the reference analysis tree as arcs over its words, and the
output's words in a row under them, each joined by a line to the reference word it aligns with.
Inline SVG written as text (no matplotlib: one drawing per example sentence must stay cheap).

Every edge is one <path class="arc">; a missed edge's path also has the class `missed`, and no
other element has it, so the number of `.missed` elements is the number of missed edges."""

from srlens.report.markup import esc

CHAR = 7.2  # px per character at the word font size (13px)
GAP = 18  # px between words
LEVEL = 16  # px of arc height per word of distance
MAX_ARC = 190  # px, the highest arc
WORD_ROW = 18  # px from the arcs' feet to the word baseline
OUT_ROW = 78  # px from the reference words down to the output words


def centres(forms, start=10.0):
    """The x centre of each word when the words are set left to right, and the row's width."""
    out, x = [], start
    for form in forms:
        width = max(CHAR * len(form), 14) + GAP
        out.append(x + width / 2)
        x += width
    return out, x + start


def arc_height(distance):
    return min(MAX_ARC, 14 + LEVEL * abs(distance))


def tree_svg(words, output, missed):
    """words: the reference analysis words, dicts with pos (1..n), form, head_pos (0 = root),
    deprel and aligned (the output position it aligns with, or None). output: the output's words,
    dicts with pos (1..m), form and aligned (the reference position, or None). missed: the set of
    (head_pos, dep_pos) of the missed edges."""
    ref_x, ref_width = centres([w["form"] for w in words])
    out_x, out_width = centres([w["form"] for w in output])
    x = dict(zip((w["pos"] for w in words), ref_x))
    ox = dict(zip((w["pos"] for w in output), out_x))
    top = max([arc_height(w["pos"] - w["head_pos"]) for w in words if w["head_pos"]] + [40]) + 24
    base = top  # the arcs' feet
    words_y = base + WORD_ROW
    out_y = words_y + OUT_ROW
    width, height = max(ref_width, out_width), out_y + 14
    parts = [
        (
            f'<svg class="tree" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="reference tree of {len(words)} '
            f'words over the output; {len(missed)} missed edges">'
        ),
        (
            '<defs><marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="5" markerHeight="5" '
            'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="context-stroke"/></marker></defs>'
        ),
    ]
    for w in words:
        dep = x[w["pos"]]
        if not w["head_pos"]:
            parts.append(
                f'<path class="arc root" d="M{dep:.1f},{base - top + 12:.1f} L{dep:.1f},{base:.1f}" '
                f'marker-end="url(#arrow)"><title>root: {esc(w["form"])}</title></path>'
                f'<text class="label" x="{dep:.1f}" y="{base - top + 8:.1f}">root</text>'
            )
            continue
        head = x[w["head_pos"]]
        h = arc_height(w["pos"] - w["head_pos"])
        is_missed = (w["head_pos"], w["pos"]) in missed
        cls = "arc missed" if is_missed else "arc"
        # feet a little apart, so that the arcs meeting at a word stay distinguishable
        x1 = head + (3 if dep > head else -3)
        parts.append(
            f'<path class="{cls}" d="M{x1:.1f},{base:.1f} C{x1:.1f},{base - h:.1f} {dep:.1f},'
            f'{base - h:.1f} {dep:.1f},{base:.1f}" marker-end="url(#arrow)" '
            f'data-head="{w["head_pos"]}" data-dep="{w["pos"]}"><title>{esc(w["deprel"])}: '
            f'{esc(words[w["head_pos"] - 1]["form"])} → {esc(w["form"])} '
            f'({"missed" if is_missed else "matched"})</title></path>'
        )
        parts.append(
            f'<text class="label{" label-missed" if is_missed else ""}" x="{(x1 + dep) / 2:.1f}" '
            f'y="{base - 0.75 * h - 3:.1f}">{esc(w["deprel"])}</text>'
        )
    for w in words:
        cls = "word" if w["aligned"] is not None else "word dropped"
        parts.append(f'<text class="{cls}" x="{x[w["pos"]]:.1f}" y="{words_y:.1f}">{esc(w["form"])}</text>')
        if w["aligned"] is not None:
            parts.append(
                f'<line class="align" x1="{x[w["pos"]]:.1f}" y1="{words_y + 5:.1f}" '
                f'x2="{ox[w["aligned"]]:.1f}" y2="{out_y - 13:.1f}"/>'
            )
    for w in output:
        cls = "out" if w["aligned"] is not None else "out extra"
        parts.append(f'<text class="{cls}" x="{ox[w["pos"]]:.1f}" y="{out_y:.1f}">{esc(w["form"])}</text>')
    parts.append("</svg>")
    return "".join(parts)
