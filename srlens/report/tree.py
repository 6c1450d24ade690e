"""The sentence view's drawing: the reference analysis tree as arcs over its words, and the
output's words in a row under them, each joined by a line to the reference word it aligns with.
Inline SVG written as text (no matplotlib: one drawing per example sentence must stay cheap).

Every edge is one <path class="arc">; a missed edge's path also has the class `missed`, and no
other element has it, so the number of `.missed` elements is the number of missed edges."""

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
    ref_x, ref_width = centres([w["form"] for w in words])
    out_x, out_width = centres([w["form"] for w in output])
    x = dict(zip((w["pos"] for w in words), ref_x))
    ox = dict(zip((w["pos"] for w in output), out_x))
    arcs = [w for w in words if w["head_pos"]]
    level = nesting_levels({w["pos"]: tuple(sorted((w["pos"], w["head_pos"]))) for w in arcs})
    # an arc's foot at the head sits a little apart, so that the arcs meeting at a word stay
    # distinguishable; its label goes just above the curve's apex (3/4 of the control height),
    # nudged up where it would cover another label
    feet = {w["pos"]: x[w["head_pos"]] + (3 if w["pos"] > w["head_pos"] else -3) for w in arcs}
    by_level = sorted(arcs, key=lambda w: (level[w["pos"]], w["pos"]))
    wanted = [
        ((feet[w["pos"]] + x[w["pos"]]) / 2, -0.75 * arc_height(level[w["pos"]]) - 3, w["deprel"]) for w in by_level
    ]
    label_y = dict(zip((w["pos"] for w in by_level), place_labels(wanted)))
    base = max([LABEL_HEIGHT - y for y in label_y.values()] + [40]) + 24  # the arcs' feet
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
    # every coordinate written with one decimal, each formatted once (a tree has thousands of them)
    px = {pos: f"{v:.1f}" for pos, v in x.items()}
    opx = {pos: f"{v:.1f}" for pos, v in ox.items()}
    b, wy, oy = f"{base:.1f}", f"{words_y:.1f}", f"{out_y:.1f}"
    forms = [esc(w["form"]) for w in words]
    tops = {lv: f"{base - arc_height(lv):.1f}" for lv in set(level.values())}
    labels = []  # drawn after every arc, so that no arc crosses a label
    for w, form in zip(words, forms):
        pos, head = w["pos"], w["head_pos"]
        dep = px[pos]
        if not head:
            parts.append(
                f'<path class="arc root" d="M{dep},12 L{dep},{b}" '
                f'marker-end="url(#arrow)"><title>root: {form}</title></path>'
            )
            labels.append(f'<text class="label" x="{dep}" y="9">root</text>')
            continue
        top = tops[level[pos]]
        is_missed = (head, pos) in missed
        x1 = feet[pos]
        foot = f"{x1:.1f}"
        deprel = esc(w["deprel"])
        parts.append(
            f'<path class="{"arc missed" if is_missed else "arc"}" d="M{foot},{b} C{foot},'
            f'{top} {dep},{top} {dep},{b}" marker-end="url(#arrow)" '
            f'data-head="{head}" data-dep="{pos}"><title>{deprel}: '
            f"{forms[head - 1]} → {form} "
            f'({"missed" if is_missed else "matched"})</title></path>'
        )
        labels.append(
            f'<text class="label{" label-missed" if is_missed else ""}" x="{(x1 + x[pos]) / 2:.1f}" '
            f'y="{base + label_y[pos]:.1f}">{deprel}</text>'
        )
    parts += labels
    align_y1, align_y2 = f"{words_y + 5:.1f}", f"{out_y - 13:.1f}"
    for w, form in zip(words, forms):
        pos = w["pos"]
        cls = "word" if w["aligned"] is not None else "word dropped"
        parts.append(f'<text class="{cls}" x="{px[pos]}" y="{wy}">{form}</text>')
        if w["aligned"] is not None:
            parts.append(
                f'<line class="align" x1="{px[pos]}" y1="{align_y1}" x2="{opx[w["aligned"]]}" y2="{align_y2}"/>'
            )
    for w in output:
        cls = "out" if w["aligned"] is not None else "out extra"
        parts.append(f'<text class="{cls}" x="{opx[w["pos"]]}" y="{oy}">{esc(w["form"])}</text>')
    parts.append("</svg>")
    return "".join(parts)
