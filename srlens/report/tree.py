"""The sentence view's drawing: the reference analysis tree as arcs over its words, and the
output's words in a row under them, each joined by a line to the reference word it aligns with.
Inline SVG written as text (no matplotlib: one drawing per example sentence must stay cheap).

Every edge is one <path class="arc">; a missed edge's path also has the class `missed`, and no
other element has it, so the number of `.missed` elements is the number of missed edges."""

import functools
from typing import NamedTuple

from srlens.report.markup import esc

CHAR = 7.2  # px per character at the word font size (13px)
GAP = 14  # px between words
LEVEL = 21  # px of arc height per nesting level: a label (10px font) fits between two levels
LABEL_CHAR = 6.6  # px per character at the label font size (10px; DejaVu Sans averages 6.5)
LABEL_HEIGHT = 12  # px, the height of a label's box at 10px
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


def nesting_levels(spans):
    """spans: {key: (left, right)} word positions. An arc's level is 1 + the highest level of the
    arcs inside its span, so an arc is always drawn above every arc it encloses (a height by
    distance would give all long arcs one height and stack their labels)."""
    level = {}
    starting = {}  # left position -> (right, level) of the arcs placed so far: an arc inside
    # [left, right] starts at one of its positions (looking there only keeps a long tree cheap)
    for key in sorted(spans, key=lambda k: spans[k][1] - spans[k][0]):
        left, right = spans[key]
        inside = [lv for lt in range(left, right + 1) for rt, lv in starting.get(lt, ()) if rt <= right]
        level[key] = 1 + max(inside, default=0)
        starting.setdefault(left, []).append((right, level[key]))
    return level


def arc_height(level):
    return 14 + LEVEL * level


def place_labels(labels):
    """labels: (x centre, baseline y, text) in drawing order, lowest arcs first. A label that would
    overlap one placed before moves up a label height at a time, so no two labels cover each other."""
    placed, out = [], []
    for x, y, text in labels:
        half = LABEL_CHAR * len(text) / 2 + 3  # and a little space between two labels
        near = [py for px, py, ph in placed if abs(x - px) < half + ph]  # the labels it could cover
        while near and any(abs(y - py) < LABEL_HEIGHT for py in near):
            y -= LABEL_HEIGHT
        placed.append((x, y, half))
        out.append(y)
    return out


def tree_svg(words, output, missed):
    """words: the reference analysis words, dicts with pos (1..n), form, head_pos (0 = root),
    deprel and aligned (the output position it aligns with, or None). output: the output's words,
    dicts with pos (1..m), form and aligned (the reference position, or None). missed: the set of
    (head_pos, dep_pos) of the missed edges."""
    ref = reference_drawing(tuple((w["pos"], w["form"], w["head_pos"], w["deprel"]) for w in words))
    out_x, out_width = centres([w["form"] for w in output])
    opx = {w["pos"]: f"{v:.1f}" for w, v in zip(output, out_x)}
    width, height = max(ref.width, out_width), ref.height
    parts = [
        (
            f'<svg class="tree" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="reference tree of {len(words)} '
            f'words over the output; {len(missed)} missed edges">'
        ),
        DEFS,
    ]
    parts += [if_missed if edge in missed else if_matched for edge, if_matched, if_missed in ref.arcs]
    parts += [if_missed if edge in missed else if_matched for edge, if_matched, if_missed in ref.labels]
    for w, (aligned_start, dropped) in zip(words, ref.words):
        if w["aligned"] is None:
            parts.append(dropped)
        else:
            parts += (aligned_start, opx[w["aligned"]], ref.align_end)
    for w in output:
        cls = "out" if w["aligned"] is not None else "out extra"
        parts.append(f'<text class="{cls}" x="{opx[w["pos"]]}" y="{ref.out_y}">{esc(w["form"])}</text>')
    parts.append("</svg>")
    return "".join(parts)


DEFS = (
    '<defs><marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="5" markerHeight="5" '
    'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="context-stroke"/></marker></defs>'
)


class Drawing(NamedTuple):
    """The reference tree's part of a drawing, as SVG text: arcs and labels as (edge, text if
    matched, text if missed), edge = (head_pos, dep_pos) (None for the root); each word as (its
    text and the start of its alignment line, to be followed by the output word's x and align_end;
    its text if it has no output word)."""

    width: float
    height: float
    out_y: str
    arcs: list
    labels: list
    words: list
    align_end: str


@functools.lru_cache(maxsize=2048)  # the runs of a corpus share their example sentences' trees
def reference_drawing(words):
    """words: (pos, form, head_pos, deprel) of each reference word."""
    ref_x, ref_width = centres([form for _, form, _, _ in words])
    x = {pos: v for (pos, *_), v in zip(words, ref_x)}
    arcs = [(pos, head, deprel) for pos, _, head, deprel in words if head]
    level = nesting_levels({pos: (min(pos, head), max(pos, head)) for pos, head, _ in arcs})
    # an arc's foot at the head sits a little apart, so that the arcs meeting at a word stay
    # distinguishable; its label goes just above the curve's apex (3/4 of the control height),
    # nudged up where it would cover another label
    feet = {pos: x[head] + (3 if pos > head else -3) for pos, head, _ in arcs}
    by_level = sorted(arcs, key=lambda a: (level[a[0]], a[0]))
    wanted = [((feet[pos] + x[pos]) / 2, -0.75 * arc_height(level[pos]) - 3, deprel) for pos, _, deprel in by_level]
    label_y = dict(zip((pos for pos, _, _ in by_level), place_labels(wanted)))
    base = max([LABEL_HEIGHT - y for y in label_y.values()] + [40]) + 24  # the arcs' feet
    words_y = base + WORD_ROW
    out_y = words_y + OUT_ROW
    # every coordinate written with one decimal, each formatted once (a tree has thousands of them)
    px = {pos: f"{v:.1f}" for pos, v in x.items()}
    b, wy = f"{base:.1f}", f"{words_y:.1f}"
    forms = [esc(form) for _, form, _, _ in words]
    tops = {lv: f"{base - arc_height(lv):.1f}" for lv in set(level.values())}
    arc_parts, labels = [], []  # labels drawn after every arc, so that no arc crosses a label
    for (pos, _, head, deprel), form in zip(words, forms):
        dep = px[pos]
        if not head:
            arc = (
                f'<path class="arc root" d="M{dep},12 L{dep},{b}" '
                f'marker-end="url(#arrow)"><title>root: {form}</title></path>'
            )
            label = f'<text class="label" x="{dep}" y="9">root</text>'
            arc_parts.append((None, arc, arc))
            labels.append((None, label, label))
            continue
        top = tops[level[pos]]
        x1 = feet[pos]
        foot = f"{x1:.1f}"
        deprel = esc(deprel)
        path = (
            f'" d="M{foot},{b} C{foot},{top} {dep},{top} {dep},{b}" marker-end="url(#arrow)" '
            f'data-head="{head}" data-dep="{pos}"><title>{deprel}: {forms[head - 1]} → {form} ('
        )
        arc_parts.append(
            (
                (head, pos),
                f'<path class="arc{path}matched)</title></path>',
                f'<path class="arc missed{path}missed)</title></path>',
            )
        )
        place = f'" x="{(x1 + x[pos]) / 2:.1f}" y="{base + label_y[pos]:.1f}">{deprel}</text>'
        labels.append(((head, pos), f'<text class="label{place}', f'<text class="label label-missed{place}'))
    align_y1, align_y2 = f"{words_y + 5:.1f}", f"{out_y - 13:.1f}"
    word_parts = [
        (
            f'<text class="word" x="{px[pos]}" y="{wy}">{form}</text>'
            f'<line class="align" x1="{px[pos]}" y1="{align_y1}" x2="',
            f'<text class="word dropped" x="{px[pos]}" y="{wy}">{form}</text>',
        )
        for (pos, *_), form in zip(words, forms)
    ]
    return Drawing(ref_width, out_y + 14, f"{out_y:.1f}", arc_parts, labels, word_parts, f'" y2="{align_y2}"/>')
