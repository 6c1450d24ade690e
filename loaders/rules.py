"""`srlens load-rules FILE`: add, change or disable L'AMBRE rules by hand (SPEC section 9).

The file is a CSV with a header. Columns (any order; other columns, such as those of an
exported `lambre_rules`, are ignored):

    rule_id, language, kind, deprel, dep_upos, head_upos, feature, side, allowed_values,
    enabled, comment

* A rule is named by its rule_id, or by its defining columns (language, kind, deprel,
  dep_upos, head_upos, feature, and side for argstruct), or both, in which case they must
  agree. rule_id is `language|kind|deprel|DEP_UPOS>HEAD_UPOS|feature`, with `|side` added
  for argstruct: `de|agreement|amod|ADJ>NOUN|Case`, `de|argstruct|obj|NOUN>VERB|Case|dep`.
* kind is `agreement` or `argstruct`; side is `both` (or blank) for agreement, `dep` or
  `head` for argstruct.
* allowed_values (argstruct only): value sets separated by `;`, e.g. `Acc;Nom` (a list as
  `srlens query --format csv` writes it, `['Acc', 'Nom']`, is read too). Blank keeps the
  extracted rule's values (a row that only enables or disables it).
* enabled (required): true/false, yes/no, 1/0.

A row whose rule_id is an extracted rule overrides it (enabled, allowed_values); every
other row is a manual rule. The rows live in raw.lambre_manual_rules and survive
re-extraction. Loading the same file again replaces its rows (a header-only file removes
them); when several files name one rule, the last loaded wins.
"""

import csv
import re
from pathlib import Path

from srlens.definitions import RULE_ID, RULE_ID_ARGSTRUCT
from srlens.loaders.errors import LoadError
from srlens.loaders.names import NameRefused, check_name
from srlens.loaders.store import file_sha256, insert_columns, open_for_write, transaction, utc_now

DEFINING = ("language", "kind", "deprel", "dep_upos", "head_upos", "feature", "side")
COLUMNS = ("rule_id", *DEFINING, "allowed_values", "enabled", "comment")
KINDS = ("agreement", "argstruct")
TRUE = {"true", "t", "yes", "y", "1"}
FALSE = {"false", "f", "no", "n", "0"}

_DEPREL = re.compile(r"\w+(:\w+)*")  # UD: a relation and its subtypes, nmod:poss; never | > / or controls
_UPOS = re.compile(r"[A-Z]+")
_FEATURE = re.compile(r"[A-Za-z0-9]+(\[[A-Za-z0-9]+\])?")
_VALUE_SET = re.compile(r"[A-Za-z0-9]+(,[A-Za-z0-9]+)*")


def rule_id(language, kind, deprel, dep_upos, head_upos, feature, side=None):
    """The stable, readable identity of a rule: the format of srlens/definitions.py, which the dbt
    model lambre_rules writes in SQL too (parse_rule_id below is its inverse)."""
    columns = dict(
        language=language, kind=kind, deprel=deprel, dep_upos=dep_upos, head_upos=head_upos, feature=feature, side=side
    )
    return RULE_ID.format(**columns) + (RULE_ID_ARGSTRUCT.format(**columns) if kind == "argstruct" else "")


def parse_rule_id(text):
    """rule_id -> dict of the defining columns, or None when it is not a rule_id."""
    parts = text.split("|")
    if len(parts) not in (5, 6) or ">" not in parts[3]:
        return None
    language, kind, deprel, link, feature = parts[:5]
    dep_upos, _, head_upos = link.partition(">")
    if kind == "agreement" and len(parts) == 5:
        side = "both"
    elif kind == "argstruct" and len(parts) == 6:
        side = parts[5]
    else:
        return None
    return dict(
        language=language, kind=kind, deprel=deprel, dep_upos=dep_upos, head_upos=head_upos, feature=feature, side=side
    )


def _check_definition(path, line, d):
    checks = [
        ("deprel", _DEPREL, "a dependency relation such as amod or nmod:poss"),
        ("dep_upos", _UPOS, "a UPOS tag such as NOUN"),
        ("head_upos", _UPOS, "a UPOS tag such as NOUN"),
        ("feature", _FEATURE, "a feature name such as Case"),
    ]
    if d["kind"] not in KINDS:
        raise LoadError(path, f"kind {d['kind']!r} is not one of {', '.join(KINDS)}", line)
    try:
        check_name(d["language"], "language")  # a name like the --language of load-treebank
    except NameRefused as err:
        raise LoadError(path, str(err), line) from None
    for column, pattern, what in checks:
        if not pattern.fullmatch(d[column]):
            raise LoadError(path, f"{column} {d[column]!r} is not {what}", line)
    sides = ("both",) if d["kind"] == "agreement" else ("dep", "head")
    if d["side"] not in sides:
        raise LoadError(path, f"side {d['side']!r} of a {d['kind']} rule must be {' or '.join(sides)}", line)


def _row(path, line, cells):
    """One CSV row -> the completed, validated raw row."""
    given = {c: (cells.get(c) or "").strip() for c in COLUMNS}
    if given["kind"] == "agreement" and not given["side"]:
        given["side"] = "both"
    named = {c: given[c] for c in DEFINING if given[c]}
    if given["rule_id"]:
        parsed = parse_rule_id(given["rule_id"])
        if parsed is None:
            raise LoadError(
                path, f"rule_id {given['rule_id']!r} is not language|kind|deprel|DEP>HEAD|feature[|side]", line
            )
        clash = {c: v for c, v in named.items() if v != parsed[c]}
        if clash:
            column, value = next(iter(clash.items()))
            raise LoadError(path, f"{column} {value!r} disagrees with rule_id {given['rule_id']!r}", line)
        definition = parsed
    else:
        missing = [c for c in DEFINING if c not in named and c != "side"]
        if missing:
            raise LoadError(path, f"no rule_id, and {', '.join(missing)} missing: a row needs one or the other", line)
        if "side" not in named:
            raise LoadError(path, "side missing: an argstruct rule is about the dep or the head side", line)
        definition = named
    _check_definition(path, line, definition)

    enabled = given["enabled"].lower()
    if enabled not in TRUE | FALSE:
        raise LoadError(path, f"enabled {given['enabled']!r} is not true or false", line)

    allowed = None
    if given["allowed_values"]:
        if definition["kind"] == "agreement":
            raise LoadError(path, "allowed_values belong to argstruct rules, not agreement rules", line)
        cell = given["allowed_values"]
        if cell.startswith("[") and cell.endswith("]"):  # a list as `srlens query --format csv` writes it
            cell = ";".join(v.strip(" '\"") for v in re.split(r"',\s*'|'\s+'|,\s+", cell[1:-1]))
        allowed = [v.strip() for v in cell.split(";") if v.strip()]
        bad = [v for v in allowed if not _VALUE_SET.fullmatch(v)]
        if bad or not allowed:
            raise LoadError(
                path,
                f"allowed_values {given['allowed_values']!r}: write feature values separated by ';', e.g. Acc;Nom",
                line,
            )
        allowed = sorted(set(allowed))
    return {
        "line_no": line,
        "rule_id": rule_id(**definition),
        **definition,
        "allowed_values": allowed,
        "enabled": enabled in TRUE,
        "comment": given["comment"] or None,
    }


def read_rules(path):
    """Read and validate the whole file; returns the rows (dicts). Raises LoadError naming the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(path, f"cannot read the file: {exc}") from exc
    reader = csv.reader(text.splitlines(keepends=True))
    header = next(reader, None)
    if not header:
        raise LoadError(path, "empty file: a CSV header is needed", 1)
    header = [h.strip().lower() for h in header]
    if "enabled" not in header:
        raise LoadError(path, "no 'enabled' column in the header", 1)
    if "rule_id" not in header and not all(c in header for c in DEFINING[:-1]):
        raise LoadError(
            path, "the header needs rule_id, or language, kind, deprel, dep_upos, head_upos, feature (and side)", 1
        )
    rows, first_line = [], {}
    try:
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise LoadError(path, f"{len(cells)} fields where the header has {len(header)}", line)
            row = _row(path, line, dict(zip(header, cells)))
            if row["rule_id"] in first_line:
                raise LoadError(path, f"rule {row['rule_id']} is already on line {first_line[row['rule_id']]}", line)
            first_line[row["rule_id"]] = line
            rows.append(row)
    except csv.Error as exc:
        raise LoadError(path, f"malformed CSV: {exc}", reader.line_num) from exc
    return rows


def load_rules(warehouse, path):
    """Load (or replace) the hand-made rules of one CSV file; returns the number of rows loaded."""
    rows = read_rules(path)
    source = str(Path(path).resolve())
    sha = file_sha256(path)
    now = utc_now()
    columns = {
        "source_file": [source] * len(rows),
        **{c: [r[c] for r in rows] for c in ("line_no", "rule_id", *DEFINING, "allowed_values", "enabled", "comment")},
        "sha256": [sha] * len(rows),
        "loaded_at": [now] * len(rows),
    }
    with open_for_write(warehouse) as con, transaction(con):
        con.execute("delete from raw.lambre_manual_rules where source_file = ?", [source])
        if rows:
            insert_columns(con, "raw.lambre_manual_rules", columns)
    return len(rows)
