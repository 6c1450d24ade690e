"""An HTML page read as its headings, tables and SVG charts, in document order."""

import re
from html.parser import HTMLParser


class Page(HTMLParser):
    """The page as a flat list of headings ('h', level, text) and tables ('table', rows of cell
    texts, header row first), in document order; and the text of every SVG, chart by chart."""

    def __init__(self, text):
        super().__init__()
        self.items, self.svgs = [], []
        self.heading = self.rows = None
        self.cell = None
        self.svg_depth = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self.heading = [int(tag[1]), ""]
        elif tag == "table":
            self.rows = []
        elif tag == "tr" and self.rows is not None:
            self.rows.append([])
        elif tag in ("td", "th") and self.rows is not None:
            self.cell = ""
        elif tag == "svg":
            if self.svg_depth == 0:
                self.svgs.append("")
            self.svg_depth += 1

    def handle_endtag(self, tag):
        if self.heading and tag == f"h{self.heading[0]}":
            self.items.append(("h", *self.heading))
            self.heading = None
        elif tag == "table" and self.rows is not None:
            self.items.append(("table", self.rows))
            self.rows = None
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None
        elif tag == "svg":
            self.svg_depth -= 1

    def handle_data(self, data):
        if self.heading:
            self.heading[1] += data
        if self.cell is not None:
            self.cell += data
        if self.svg_depth:
            self.svgs[-1] += data + "\n"

    def after(self, *path):
        """Index of the item after headings path[0], then path[1], ... (each searched after the last)."""
        i = 0
        for text in path:
            i = next(k for k in range(i, len(self.items)) if self.items[k][0] == "h" and self.items[k][2] == text) + 1
        return i

    def table_after(self, *path):
        i = self.after(*path)
        return next(item[1] for item in self.items[i:] if item[0] == "table")

    def section_text(self, *path):
        """Headings and table cells from path up to the next heading of the same or a higher level."""
        i = self.after(*path)
        level = self.items[i - 1][1]
        out = []
        for item in self.items[i:]:
            if item[0] == "h" and item[1] <= level:
                break
            out.append(item)
        return out


def as_dicts(rows):
    return [dict(zip(rows[0], r)) for r in rows[1:]]
