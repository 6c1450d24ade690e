"""HTML pieces every page uses: escaping, number formats, tables (made sortable and filterable
by assets/report.js), notes, the SQL shown under a figure, and the page around a body."""

import functools
import hashlib
import html
import re

import numpy as np
import pandas as pd


class Html(str):
    """Text that is already HTML: table() and page() insert it as it is."""


# The report escapes millions of short strings (words, relations, labels), most of them many times.
_escape = functools.lru_cache(maxsize=1 << 16)(html.escape)


def esc(value):
    if value.__class__ is str:
        return _escape(value)
    return value if isinstance(value, Html) else html.escape(str(value))


def missing(value):
    cls = value.__class__  # the types of nearly every value first: pd.isna costs more than the rest
    if cls is str or cls is int or cls is Html:
        return False
    if cls is float:
        return value != value  # NaN
    return value is None or (pd.api.types.is_scalar(value) and pd.isna(value))


def fmt(value, digits=3):
    """Numbers for tables: floats rounded, NULL as a dash."""
    cls = value.__class__  # as below, the common types first
    if cls is int:
        return f"{value:,}"
    if cls is float and value == value:
        return f"{value:.{digits}f}"
    if cls is str:
        return value
    if missing(value):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_p(value):
    if missing(value):
        return "–"
    return f"{value:.2e}" if value < 0.001 else f"{value:.3f}"


def link(href, text, title=""):
    return Html(f'<a href="{html.escape(href)}"' + (f' title="{esc(title)}"' if title else "") + f">{esc(text)}</a>")


def short(text, keep=20):
    """A long identifier (a UD sent_id) cut to its end, which tells sentences of a document apart."""
    return text if len(text) <= keep + 4 else "…" + text[-keep:]


def sort_key(value):
    """The data-sort attribute of a numeric cell: the JS sorts by it rather than by the shown text."""
    cls = value.__class__  # as below, the common types first
    if cls is str or cls is Html:
        return ""
    if cls is int or (cls is float and value == value):
        return f' data-sort="{float(value)!r}"'
    if isinstance(value, (bool, np.bool_)) or missing(value):
        return ""
    if isinstance(value, (int, float, np.integer, np.floating)):
        return f' data-sort="{float(value)!r}"'
    return ""


def cell(value, formatter):
    """A table cell's HTML: Html (a link) as it is, anything else formatted and escaped."""
    return value if isinstance(value, Html) else esc(formatter(value))


NUMBER_LIKE = re.compile(r"[-+<]?\d")  # 0.863 (#2), -0.5, 1,000+, <100: set right like numbers
TAG = re.compile(r"<[^>]*>")


def is_text(rows, key):
    """A column of words (names, subtrees, views; links to them) is set flush left, numbers right:
    it has a value, and every value is text that does not start like a number."""
    seen = False
    for row in rows:
        value = row[key]
        if value.__class__ is str:  # nearly every value of a text column: the test below, cheaper
            if NUMBER_LIKE.match(value):
                return False
            seen = True
            continue
        if missing(value):
            continue
        shown = html.unescape(TAG.sub("", value)) if isinstance(value, Html) else value
        if not isinstance(shown, str) or NUMBER_LIKE.match(shown):
            return False
        seen = True
    return seen


def table(rows, columns, cls=""):
    """rows: list of dicts; columns: (key, header, formatter). A formatter may return Html (a link).
    Every table is a data table: report.js adds sorting by header and a filter box."""
    align = [' class="text"' if is_text(rows, k) else "" for k, _, _ in columns]
    head = "".join(f'<th scope="col"{a}>{esc(h)}</th>' for (_, h, _), a in zip(columns, align))
    cols = [(k, f, f"<td{a}>", f"<td{a}") for (k, _, f), a in zip(columns, align)]
    parts = []
    for row in rows:  # the report's tables have millions of cells: sort_key and cell inlined for
        parts.append("<tr>")  # the common types (text, numbers, links), the rest through them
        for k, f, td, td_open in cols:
            value = row[k]
            kind = value.__class__
            if kind is str:
                parts.append(f"{td}{esc(f(value))}</td>")
            elif kind is int or (kind is float and value == value):
                parts.append(f'{td_open} data-sort="{float(value)!r}">{esc(f(value))}</td>')
            elif kind is Html:
                parts.append(f"{td}{value}</td>")
            else:
                parts.append(f"{td_open}{sort_key(value)}>{cell(value, f)}</td>")
        parts.append("</tr>")
    body = "".join(parts)
    classes = f"data {cls}".strip()
    return f'<table class="{classes}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def records(frame):
    return frame.to_dict("records")


def note(text):
    return f'<p class="note">{esc(text)}</p>'


def sql_details(sql, params):
    """The query and its parameters, folded under what it feeds."""
    shown = "".join(f"\n-- ${k} = {v!r}" for k, v in params.items())
    return (
        f'<details class="sql"><summary>SQL</summary><pre>{esc(sql)}</pre>'
        + (f'<pre class="params">{esc(shown.strip())}</pre>' if params else "")
        + "</details>"
    )


@functools.lru_cache(maxsize=1 << 16)  # the same run and key names come back on every example row
def slug(text):
    """A file or anchor name for any text: its readable part and a short hash (no collisions)."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_.")[:60]
    return f"{readable}-{hashlib.sha1(str(text).encode()).hexdigest()[:8]}"


def page(title, body, root):
    """A whole HTML page. root: the relative path from the page to the report's top directory
    ('' or '../..'), where report.css and report.js are."""
    prefix = f"{root}/" if root else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<link rel="stylesheet" href="{prefix}report.css">
<script src="{prefix}report.js" defer></script></head>
<body>
<a class="skip" href="#main">Skip to content</a>
{body}
</body></html>
"""
