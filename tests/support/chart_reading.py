"""Reading the report's SVG charts back as a reader would: a mark's position against the axis's
tick labels, a cell's row and column by the labels beside and under it. The report's tests compare
what is read with the marts."""

import re
from xml.etree import ElementTree

SVG = "{http://www.w3.org/2000/svg}"


def chart_trees(text):
    """Each chart of an HTML text as an SVG element tree."""
    return [ElementTree.fromstring(s) for s in re.findall(r'<div class="chart">(<svg\b.*?</svg>)</div>', text, re.S)]


def svg_texts(svg):
    """(x, y, text, text-anchor) of every text element (its lines joined by newlines)."""
    return [
        (float(t.get("x")), float(t.get("y")), "\n".join(t.itertext()), t.get("text-anchor"))
        for t in svg.iter(SVG + "text")
    ]


def linear(p0, p1, v0, v1):
    """Pixel -> value, given two pixel positions and their values."""
    return lambda p: v0 + (p - p0) * (v1 - v0) / (p1 - p0)


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def x_scale(svg):
    """Pixel -> value of a chart's x axis, from its first and last numeric tick labels (centred
    under their ticks)."""
    ticks = sorted((x, number(s)) for x, _, s, anchor in svg_texts(svg) if anchor == "middle" and number(s) is not None)
    (x0, v0), (x1, v1) = ticks[0], ticks[-1]
    return linear(x0, x1, v0, v1)


def y_scale(svg):
    """Pixel -> value of a chart's y axis, from its lowest and highest numeric tick labels
    (right-aligned left of the axis)."""
    ticks = sorted((y, number(s)) for _, y, s, anchor in svg_texts(svg) if anchor == "end" and number(s) is not None)
    (y0, v0), (y1, v1) = ticks[0], ticks[-1]
    return linear(y0, y1, v0, v1)


def nearest(texts, position, coordinate):
    """The text of the label nearest `position` along x (coordinate 0) or y (1), within 6 px."""
    label = min(texts, key=lambda t: abs(t[coordinate] - position))
    assert abs(label[coordinate] - position) <= 6
    return label[2]


def rgb(hex_colour):
    return [int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]


def matplotlib_rgb(name, t):
    from matplotlib import colormaps

    return [round(255 * c) for c in colormaps[name](t)[:3]]


def close_colour(hex_colour, expected, tolerance=6):
    return all(abs(a - b) <= tolerance for a, b in zip(rgb(hex_colour), expected))


def cells_of(svg):
    """(row label, column label, fill, cell text) of every heatmap cell: the row's label is left of it
    at its height, the column's under it (rotated, ending at the tick)."""
    texts = svg_texts(svg)
    rects = [r for r in svg.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    cell_texts = {(round(x), round(y)): s for x, y, s, anchor in texts if anchor == "middle"}
    out = []
    for r in rects:
        x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
        row = nearest([t for t in texts if t[3] == "end" and t[0] < x], y + h / 2, 1)
        column = nearest([t for t in texts if t[3] == "end" and t[1] > y + h], x + w / 2 + 3, 0)
        out.append((row, column, r.get("fill"), cell_texts[round(x + w / 2), round(y + h / 2)]))
    return out
