"""The report's charts, written as SVG text here: cells, bars, boxes, lines and markers on axes with
fixed ticks, titles and legends. The charts are simple, and matplotlib's figure, tick and text
objects cost most of the overview's time (measured: 47 s of CPU for the campaign's 152 charts).

Sizes are CSS pixels. Text stays text in the page's sans-serif font (searchable, sharp at any
zoom); it is not measured: margins come from the labels' length (`text_width`). Each chart says
what it shows in its aria-label, and its cells, boxes and bars carry their exact values in a
tooltip (<title>)."""

import math
from html import escape

from srlens.report.queries import MAX_BARS, METRICS, SCORES

FONT = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
INK = "#333"  # axes, ticks and text
GRID = "#e4e4e4"
# matplotlib's default cycle (tab10), as before: a run keeps its colour across the bucket panels
CYCLE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
DASHES = [None, "5 2", "1.5 2", "6 2 1.5 2"]  # the 11th to 20th run dashed, and so on
# colour maps as evenly spaced stops, linearly interpolated: ColorBrewer's RdBu (11 colours, as
# matplotlib's RdBu_r) and viridis (17 samples: within 5/255 of matplotlib's 256)
RDBU_R = ["#" + c for c in "053061 2166ac 4393c3 92c5de d1e5f0 f7f7f7 fddbc7 f4a582 d6604d b2182b 67001f".split()]
VIRIDIS = [
    "#" + c
    for c in """440154 48186a 472d7b 424086 3b528b 33638d 2c728e 26828e 21918c 1fa088 28ae80 3fbc73 5ec962
                84d44b addc30 d8e219 fde725""".split()
]


def colour(stops, t):
    """The colour at t in [0, 1] of a map given as evenly spaced stops."""
    t = min(1.0, max(0.0, t)) * (len(stops) - 1)
    k = min(int(t), len(stops) - 2)
    a, b = stops[k], stops[k + 1]
    return "#" + "".join(
        f"{round(int(a[i : i + 2], 16) + (t - k) * (int(b[i : i + 2], 16) - int(a[i : i + 2], 16))):02x}"
        for i in (1, 3, 5)
    )


def text_width(labels, size=11):
    """Pixels the longest label takes, estimated (labels are not measured): 0.7 em a capital, 0.58
    em any other character, about the widths of DejaVu Sans."""
    return size * max((sum(0.7 if c.isupper() else 0.58 for c in str(x)) for x in labels), default=0)


def nice_ticks(lo, hi, most=6):
    """Round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) from lo to hi, at most about
    `most` of them, and the number of decimals they need."""
    span = (hi - lo) or abs(hi) or 1.0
    raw = span / most
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    first = math.ceil(lo / step - 1e-9)
    ticks = [round((first + k) * step, 12) for k in range(int((hi - lo) / step + 1e-9) + 2)]
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if round(step / power, 3) == 2.5 else 0)
    return [t for t in ticks if lo - 1e-9 * step <= t <= hi + 1e-9 * step], decimals


def padded(values, pad=0.05):
    """(lo, hi) around the values, 5 % of their span added each side (0.1 around a single value)."""
    lo, hi = min(values), max(values)
    extra = (hi - lo) * pad or 0.1
    return lo - extra, hi + extra


class Svg:
    """One chart's SVG elements, added in drawing order. Numbers are written to 0.1 px."""

    def __init__(self, width, height, label, prefix):
        self.width, self.height, self.label, self.prefix = width, height, label, prefix
        self.parts = []

    def id(self, name):
        """A document-wide unique id: every chart of the page shares one HTML document."""
        return f"{self.prefix}-{name}"

    def add(self, element):
        self.parts.append(element)

    def rect(self, x, y, w, h, fill, extra="", tip=None):
        self.add(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}"{extra}'
            + (f"><title>{escape(tip, quote=False)}</title></rect>" if tip else "/>")
        )

    def line(self, x1, y1, x2, y2, stroke=INK, width=1.0, extra=""):
        self.add(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
            f'stroke-width="{width}"{extra}/>'
        )

    def polyline(self, points, stroke, width=1.3, dash=None):
        if len(points) > 1:
            self.add(
                f'<polyline points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in points)}" fill="none" '
                f'stroke="{stroke}" stroke-width="{width}"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>"
            )

    def marker(self, shape, x, y, r, fill, tip=None):
        """A circle (o), diamond (D) or star (*) of radius r centred at x, y."""
        if shape == "o":
            element = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}"'
        else:
            corners = 4 if shape == "D" else 10
            points = " ".join(
                f"{x + s * math.sin(k * 2 * math.pi / corners):.1f},{y - s * math.cos(k * 2 * math.pi / corners):.1f}"
                for k in range(corners)
                for s in [r if shape == "D" or k % 2 == 0 else r * 0.4]
            )
            element = f'<polygon points="{points}" fill="{fill}"'
        closing = "</circle>" if shape == "o" else "</polygon>"
        self.add(element + (f"><title>{escape(tip, quote=False)}</title>{closing}" if tip else "/>"))

    def text(self, x, y, s, size=11, anchor="middle", rotate=0, fill=None, baseline="central"):
        """Text at x, y; lines split at newlines go down from the first."""
        lines = str(s).split("\n")
        body = escape(lines[0], quote=False) + "".join(
            f'<tspan x="{x:.1f}" dy="1.15em">{escape(line, quote=False)}</tspan>' for line in lines[1:]
        )
        self.add(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"'
            + (f' dominant-baseline="{baseline}"' if baseline else "")
            + (f' transform="rotate({-rotate} {x:.1f} {y:.1f})"' if rotate else "")
            + (f' fill="{fill}"' if fill else "")
            + f">{body}</text>"
        )

    def title(self, y, s, size=12):
        self.text(self.width / 2, y, s, size=size)

    def legend(self, x, y, entries, size=10, columns=1, row_height=None):
        """entries: (label, colour, kind, dash), kind "bar" (a filled box), "line" (a line with a
        round marker), "o" or "*" (a marker); filled in columns of equal width from x, y."""
        row_height = row_height or size * 1.45
        per_column = math.ceil(len(entries) / columns)
        column_width = 30 + text_width([e[0] for e in entries], size)
        for k, (label, fill, kind, dash) in enumerate(entries):
            cx, cy = x + (k // per_column) * column_width, y + (k % per_column) * row_height
            if kind == "bar":
                self.rect(cx, cy - size * 0.35, 18, size * 0.7, fill)
            elif kind == "line":
                self.polyline([(cx, cy), (cx + 18, cy)], fill, dash=dash)
                self.marker("o", cx + 9, cy, 2.5, fill)
            else:
                self.marker(kind, cx + 9, cy, 6 if kind == "*" else 3, fill)
            self.text(cx + 24, cy, label, size=size, anchor="start")

    def render(self):
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:.0f}" height="{self.height:.0f}" '
            f'viewBox="0 0 {self.width:.0f} {self.height:.0f}" font-family="{FONT}" fill="{INK}" role="img" '
            f'aria-label="{escape(self.label)}">' + "".join(self.parts) + "</svg>"
        )


class Axes:
    """A plot area of an Svg: data coordinates to pixels inside the box left, top, width, height.
    ylim[0] is at the bottom: a reversed ylim, (rows - 0.5, -0.5), puts row 0 at the top."""

    def __init__(self, svg, box, xlim, ylim):
        self.svg = svg
        self.left, self.top, self.width, self.height = box
        self.x0, self.y0 = xlim[0], ylim[0]
        self.sx = self.width / (xlim[1] - xlim[0])
        self.sy = self.height / (ylim[1] - ylim[0])

    def x(self, v):
        return self.left + (v - self.x0) * self.sx

    def y(self, v):
        return self.top + self.height - (v - self.y0) * self.sy

    def spines(self):
        """The left and bottom axis lines."""
        bottom, right = self.top + self.height, self.left + self.width
        self.svg.line(self.left, self.top, self.left, bottom)
        self.svg.line(self.left, bottom, right, bottom)

    def xticks(self, values, labels, size=10, rotate=0, marks=True):
        """Labels under the plot at the data x of each value; rotated ones end at their tick."""
        bottom = self.top + self.height
        for v, label in zip(values, labels):
            x = self.x(v)
            if marks:
                self.svg.line(x, bottom, x, bottom + 4)
            if rotate:
                self.svg.text(x + 3, bottom + 8, label, size, anchor="end", rotate=rotate)
            else:
                self.svg.text(x, bottom + 7, label, size, baseline="hanging")

    def yticks(self, values, labels, size=10, grid=False, marks=True):
        """Labels left of the plot at the data y of each value, optionally with grid lines."""
        for v, label in zip(values, labels):
            y = self.y(v)
            if grid:
                self.svg.line(self.left, y, self.left + self.width, y, GRID, 0.8)
            if marks:
                self.svg.line(self.left - 4, y, self.left, y)
            self.svg.text(self.left - (7 if marks else 4), y, label, size, anchor="end")

    def number_yticks(self, lo, hi, size=10, grid=False):
        ticks, decimals = nice_ticks(lo, hi)
        self.yticks(ticks, [f"{t:.{decimals}f}" for t in ticks], size, grid)

    def number_xticks(self, lo, hi, size=10):
        ticks, decimals = nice_ticks(lo, hi)
        self.xticks(ticks, [f"{t:.{decimals}f}" for t in ticks], size)

    def title(self, s, size=12):
        self.svg.text(self.left + self.width / 2, self.top - 10, s, size)

    def ylabel(self, s, offset, size=11):
        y = self.top + self.height / 2
        self.svg.text(self.left - offset, y, s, size, rotate=90)


class Charts:
    """Makes the charts of one page: each gets its own id prefix (s1, s2, ...), as they share one
    HTML document."""

    def __init__(self, prefix="s"):
        self.prefix = prefix
        self.count = 0

    def new(self, width, height, label):
        self.count += 1
        return Svg(width, height, label, f"{self.prefix}{self.count}")

    @staticmethod
    def div(svg):
        return f'<div class="chart">{svg.render()}</div>'


def cells(ax, grid, stops, text, text_colour, tips):
    """grid[i][j] as the cell of row i (from the top) and column j, coloured by the map `stops` at
    grid[i][j] (None: left blank), with the cell's text and tooltip."""
    svg, w, h = ax.svg, ax.sx, -ax.sy  # ylim is reversed: -sy is a row's height
    for i, row in enumerate(grid):
        for j, t in enumerate(row):
            if t is None:
                continue
            x, y = ax.x(j - 0.5), ax.y(i - 0.5)
            svg.rect(x, y, w, h, colour(stops, t), tip=tips[i][j])
            svg.text(x + w / 2, y + h / 2, text[i][j], 9, fill=text_colour(t))


def colour_bar(svg, stops, x, y, height, lo, hi, ticks, label):
    """A vertical colour bar (lo at the bottom), its ticks on the right and its label beyond."""
    gradient = svg.id("bar")
    svg.add(
        f'<defs><linearGradient id="{gradient}" x1="0" y1="1" x2="0" y2="0">'
        + "".join(f'<stop offset="{k / (len(stops) - 1):.2f}" stop-color="{c}"/>' for k, c in enumerate(stops))
        + "</linearGradient></defs>"
    )
    svg.rect(x, y, 12, height, f"url(#{gradient})", f' stroke="{INK}" stroke-width="0.5"')
    for t in ticks:
        ty = y + height * (hi - t) / (hi - lo)
        svg.line(x + 12, ty, x + 16, ty)
        svg.text(x + 19, ty, f"{t:.1f}", 10, anchor="start")
    svg.text(x + 52, y + height / 2, label, 11, rotate=90)


def short(value):
    """0.86 -> .86, -0.10 -> -.10, 1.00 stays (a heatmap cell's text)."""
    return f"{value:.2f}".replace("0.", ".", 1)


def heatmap_chart(charts, frame, title):
    """Lower triangle of median rho between every pair of variables (framework paper, Fig. 2)."""
    names = sorted(set(frame.metric_a) | set(frame.metric_b), key=metric_order)
    index = {m: i for i, m in enumerate(names)}
    labels = [METRICS.get(m, m) for m in names]
    n = len(names) - 1  # the first row and the last column of a strict lower triangle are empty
    grid = [[None] * n for _ in range(n)]
    for a, b, rho in zip(frame.metric_a, frame.metric_b, frame.rho_median):
        i, j = sorted((index[a], index[b]), reverse=True)  # row below column: lower triangle
        if rho == rho:  # not NaN
            grid[i - 1][j] = rho
    size = 34
    left, top = text_width(labels[1:]) + 16, 34
    bottom = text_width(labels[:-1]) * 0.87 + 22
    svg = charts.new(left + n * size + 100, top + n * size + bottom, f"heatmap: {title}")
    svg.title(14, title)
    ax = Axes(svg, (left, top, n * size, n * size), (-0.5, n - 0.5), (n - 0.5, -0.5))
    cells(
        ax,
        [[None if v is None else (v + 1) / 2 for v in row] for row in grid],
        RDBU_R,
        [[None if v is None else short(v) for v in row] for row in grid],
        lambda t: "white" if abs(2 * t - 1) > 0.6 else "black",
        [
            [f"{labels[i + 1]} / {labels[j]}: {v:.3f}" if v is not None else "" for j, v in enumerate(row)]
            for i, row in enumerate(grid)
        ],
    )
    ax.xticks(range(n), labels[:-1], 11, rotate=60, marks=False)
    ax.yticks(range(n), labels[1:], 11, marks=False)
    bar = 0.6 * n * size
    colour_bar(
        svg,
        RDBU_R,
        left + n * size + 24,
        top + (n * size - bar) / 2,
        bar,
        -1,
        1,
        [-1, -0.5, 0, 0.5, 1],
        "median Spearman rho",
    )
    return charts.div(svg)


def ranking_chart(charts, submissions, scores, rank, value):
    """Submissions (rows, in table order) x scores: colour = rank on that score, text = value."""
    submissions = submissions[:MAX_BARS]
    runs_with = {s: sum(1 for (_, t) in rank if t == s) for s in scores}
    # colour: 0 = first, 1 = last of the runs with that score
    grid = [
        [(rank[sub, s] - 1) / max(1, runs_with[s] - 1) if (sub, s) in rank else None for s in scores]
        for sub in submissions
    ]
    labels = [SCORES.get(s, s) for s in scores]
    width, height = 72, 21
    left, top = text_width(submissions, 10) + 14, 34
    bottom = text_width(labels) * 0.71 + 24
    svg = charts.new(
        left + width * len(scores) + 20,
        top + height * len(submissions) + bottom,
        "ranking of the submissions on each score",
    )
    svg.title(14, "rank on each score (dark = first)")
    ax = Axes(
        svg,
        (left, top, width * len(scores), height * len(submissions)),
        (-0.5, len(scores) - 0.5),
        (len(submissions) - 0.5, -0.5),
    )
    cells(
        ax,
        grid,
        VIRIDIS,
        [[f"{value[sub, s]:.2f}" if (sub, s) in value else "" for s in scores] for sub in submissions],
        lambda t: "white" if t < 0.5 else "black",
        [
            [
                f"{sub}, {label}: {value.get((sub, s), float('nan')):.4f} (#{rank.get((sub, s))})"
                for s, label in zip(scores, labels)
            ]
            for sub in submissions
        ],
    )
    ax.xticks(range(len(scores)), labels, 11, rotate=45)
    ax.yticks(range(len(submissions)), submissions, 10)
    return charts.div(svg)


def dea_chart(charts, frame):
    """A box per relation over the submissions (quartiles, min-max whiskers, median, mean), worst
    mean first."""
    slot, height = max(29, 300 / len(frame)), 200  # a few relations get wider slots
    left, top = 56, 34
    bottom = text_width(frame.relation) * 0.87 + 22
    width = slot * (len(frame) + 0.2)
    svg = charts.new(left + width + 16, top + height + bottom, "DEA per relation over the submissions")
    svg.title(14, "box: quartiles over submissions, line: median, diamond: mean, whiskers: min-max", 11)
    ax = Axes(svg, (left, top, width, height), (-0.6, len(frame) - 0.4), (-0.02, 1.02))
    ax.number_yticks(0, 1, grid=True)
    half = 0.3 * ax.sx
    rows = zip(
        frame.relation, frame.dea_min, frame.dea_q1, frame.dea_median, frame.dea_q3, frame.dea_max, frame.dea_mean
    )
    for k, (relation, lo, q1, median, q3, hi, mean) in enumerate(rows):
        x = ax.x(k)
        tip = (
            f"{relation}: mean {mean:.3f}, median {median:.3f}, "
            f"quartiles {q1:.3f} to {q3:.3f}, min-max {lo:.3f} to {hi:.3f}"
        )
        svg.add(f"<g><title>{escape(tip)}</title>")
        svg.line(x, ax.y(lo), x, ax.y(hi), "#555", 1)
        svg.rect(x - half, ax.y(q3), 2 * half, ax.y(q1) - ax.y(q3), "#c6d7ea", ' stroke="#555" stroke-width="1"')
        svg.line(x - half, ax.y(median), x + half, ax.y(median), "#dd8452", 1.6)
        svg.marker("D", x, ax.y(mean), 3.5, "#2a7a2a")
        svg.add("</g>")
    ax.spines()
    ax.xticks(range(len(frame)), frame.relation, 11, rotate=60)
    ax.ylabel("DEA", 40)
    return charts.div(svg)


def bar_rows(svg, ax, labels, bars, size=10):
    """Horizontal bars, row k from the top: bars[k] = [(value, colour, offset, thickness, tip), ...]
    (offset and thickness in rows), labelled on the left."""
    for k, row in enumerate(bars):
        for value, fill, offset, thickness, tip in row:
            x0, x1 = ax.x(0), ax.x(value)
            y = ax.y(k + offset - thickness / 2)
            svg.rect(min(x0, x1), y, abs(x1 - x0), thickness * -ax.sy, fill, tip=tip)
    ax.yticks(range(len(labels)), labels, size)


def projectivity_chart(charts, frame):
    """Per score, the medians of the projective and non-projective sentences of each submission."""
    scores = list(dict.fromkeys(frame.score))
    parts = [frame[frame.score == score].head(MAX_BARS) for score in scores]
    label_px = text_width(frame.submission + " *", 10) + 14
    rows = max(len(p) for p in parts)
    panel, row, top = 250, 21, 56
    svg = charts.new(
        len(scores) * (label_px + panel + 20), top + rows * row + 36, "projective against non-projective sentences"
    )
    svg.legend(8, 12, [("projective", "#4c72b0", "bar", None), ("non-projective", "#dd8452", "bar", None)], columns=2)
    for k, (score, part) in enumerate(zip(scores, parts)):
        values = list(part.median_projective) + list(part.median_nonprojective)
        lo, hi = min(0.0, min(values)), max(0.0, max(values))
        lo, hi = lo - 0.05 * (hi - lo) * (lo < 0), hi + 0.05 * (hi - lo) * (hi > 0)  # room past the longest bar
        hi = hi if hi > lo else 1.0  # every median 0
        ax = Axes(svg, (k * (label_px + panel + 20) + label_px, top, panel, rows * row), (lo, hi), (rows - 0.5, -0.5))
        labels = [
            s + (" *" if t and p < 0.05 else "")
            for s, t, p in zip(part.submission, part.tested, part.p_value.fillna(1.0))
        ]
        bars = [
            [
                (a, "#4c72b0", -0.2, 0.4, f"{s}, projective: median {score} {a:.4f}"),
                (b, "#dd8452", 0.2, 0.4, f"{s}, non-projective: median {score} {b:.4f}"),
            ]
            for s, a, b in zip(part.submission, part.median_projective, part.median_nonprojective)
        ]
        bar_rows(svg, ax, labels, bars)
        svg.line(ax.x(0), ax.top, ax.x(0), ax.top + ax.height, "grey", 0.7)
        ax.spines()
        ax.number_xticks(lo, hi)
        ax.title(f"median {score}")
    return charts.div(svg)


def rules_chart(charts, frame):
    """Mean rule score over the submissions, whiskers from the worst to the best run."""
    left = text_width(frame.rule_id, 10) + 14
    row, panel, top = 19, 430, 34
    svg = charts.new(left + panel + 20, top + row * len(frame) + 36, "rule scores per rule")
    svg.title(14, "rule score: mean over submissions, whiskers min-max")
    ax = Axes(svg, (left, top, panel, row * len(frame)), (0, 1.02), (len(frame) - 0.5, -0.5))
    rows = list(zip(frame.rule_id, frame.score_mean, frame.score_min, frame.score_max))
    tips = [f"{r}: mean {m:.4f}, min {lo:.4f}, max {hi:.4f}" for r, m, lo, hi in rows]
    bar_rows(svg, ax, frame.rule_id, [[(m, "#55a868", 0, 0.8, tip)] for (_, m, _, _), tip in zip(rows, tips)])
    for k, (_, _, lo, hi) in enumerate(rows):
        y = ax.y(k)
        svg.line(ax.x(lo), y, ax.x(hi), y, INK, 0.9)
        for end in (lo, hi):
            svg.line(ax.x(end), y - 3, ax.x(end), y + 3, INK, 0.9)
    ax.spines()
    ax.number_xticks(0, 1)
    return charts.div(svg)


def metric_order(name):
    return (list(METRICS).index(name), name) if name in METRICS else (len(METRICS), name)


def run_style(i):
    """The colour and dash of the i-th run: ten colours, then the same dashed, and so on."""
    return CYCLE[i % 10], DASHES[(i // 10) % len(DASHES)]


def line_panel(ax, labels, lines, marker_size=2.5):
    """Lines over categorical x (labels), each (points [(x index, y)], colour, dash, name)."""
    for points, fill, dash, name in lines:
        ax.svg.polyline([(ax.x(x), ax.y(y)) for x, y in points], fill, dash=dash)
        for x, y in points:
            ax.svg.marker("o", ax.x(x), ax.y(y), marker_size, fill, f"{name}, {labels[x]}: {y:.4f}")


def bucket_chart(charts, frame):
    """One panel per bucket dimension: each run's micro DEA (lemma recall for word_frequency)
    across the buckets, in bucket order; the legend names the runs (at most MAX_BARS)."""
    dimensions = list(dict.fromkeys(frame.dimension))
    runs = list(dict.fromkeys(frame.submission))[:MAX_BARS]
    cols = min(4, len(dimensions))
    rows = math.ceil(len(dimensions) / cols)
    # (bucket_no, bucket, value) of each dimension and run, in bucket order: grouped here once
    points = {}
    for row in zip(frame.dimension, frame.submission, frame.bucket_no, frame.bucket, frame.value):
        points.setdefault(row[:2], []).append(row[2:])
    points = {key: sorted(line, key=lambda p: p[0]) for key, line in points.items()}
    panel_w, panel_h, gap_x, gap_y, top = 220, 130, 64, 104, 34
    per_column = max(1, math.ceil((rows * (panel_h + gap_y) - 30) / 14.5))
    legend_w = math.ceil(len(runs) / per_column) * (text_width(runs, 10) + 30)
    svg = charts.new(
        44 + cols * (panel_w + gap_x) + legend_w,
        top + rows * (panel_h + gap_y) - 20,
        "scores by bucket of the reference trees",
    )
    for k, dimension in enumerate(dimensions):
        in_dimension = sorted(
            (p for (d, _), line in points.items() if d == dimension for p in line), key=lambda p: p[0]
        )
        labels = list(dict.fromkeys(bucket for _, bucket, _ in in_dimension))
        position = {b: i for i, b in enumerate(labels)}
        box = (44 + (k % cols) * (panel_w + gap_x), top + (k // cols) * (panel_h + gap_y), panel_w, panel_h)
        ax = Axes(svg, box, (-0.3, max(1, len(labels) - 1) + 0.3), (-0.02, 1.02))
        ax.number_yticks(0, 1, grid=True)
        lines = []
        for i, run in enumerate(runs):
            fill, dash = run_style(i)
            lines.append(([(position[b], v) for _, b, v in points.get((dimension, run), [])], fill, dash, run))
        line_panel(ax, labels, lines)
        ax.spines()
        # short labels (0-5, <2) stand upright; long ones (1,000-9,999, non-projective) slant
        ax.xticks(range(len(labels)), labels, 10, rotate=30 if max(map(len, labels), default=0) > 5 else 0)
        ax.title(dimension.replace("_", " ") + (" (lemma recall)" if dimension == "word_frequency" else ""))
    svg.legend(
        44 + cols * (panel_w + gap_x),
        top,
        [(run, fill, "line", dash) for i, run in enumerate(runs) for fill, dash in [run_style(i)]],
        columns=math.ceil(len(runs) / per_column),
    )
    return charts.div(svg)
