"""The committed snapshot of the marts: every figure a build gives, to show that none moved.

A speed-up or a refactoring must leave the marts as they were ("equal means equal"). The
snapshot holds every row of every mart of one reference build (the demo, plus en_ewt test with
a perturbed run), one gzipped CSV per mart under tests/support/snapshots/marts/. tests/builds/test_snapshot.py
builds the same warehouse and compares it with the snapshot, floats to 1e-9 (DuckDB's parallel
sums differ in the last bits between two builds of the same data).

When a change moves figures on purpose, write the snapshot anew and say why in the commit:

    python -m tests.support.snapshot --write        # builds the reference warehouse, rewrites the marts that moved
"""

import argparse
import csv
import gzip
import io
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import duckdb

SNAPSHOT_DIR = Path(__file__).resolve().parent / "snapshots" / "marts"
REL_TOL, ABS_TOL = 1e-9, 1e-12


def build_reference_warehouse(warehouse, en_ewt_test):
    """The demo and en_ewt test with a perturbed run (the demo's `swaps`), built with `aligned`."""
    from srlens.build import build
    from srlens.demo import load_demo
    from srlens.loaders.load import load_outputs, load_treebank

    load_treebank(warehouse, en_ewt_test, "en_ewt_test")
    swaps = Path(warehouse).parent / "en_ewt_test_swaps.sr"
    swaps.write_text(perturbed_run(en_ewt_test), encoding="utf-8")
    load_outputs(warehouse, swaps, "en_ewt_test", "perturb", "swaps", campaign="snapshot")
    load_demo(warehouse)
    build(warehouse, echo=False, processor="aligned")


def perturbed_run(treebank):
    """en_ewt test through the demo generator's `swaps` run: deterministic, like the demo files."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "demo"))
    try:
        import make_demo
    finally:
        sys.path.pop(0)
    rng = make_demo.random.Random(make_demo.seed_for("en_ewt_test", "swaps"))
    blocks = []
    for k, sentence in enumerate(make_demo.read_conllu(treebank)):
        text = " ".join(sentence.form[i] for i in make_demo.run_swaps(sentence, rng, k))
        blocks.append(f"# sent_id = {sentence.sent_id}\n# text = {text}\n\n")
    return "".join(blocks)


def mart_rows(con):
    """{mart: (column names, rows in a canonical order)} for every table of the main schema."""
    marts = [
        name
        for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main' "
            "and table_type = 'BASE TABLE' order by 1"
        ).fetchall()
    ]
    out = {}
    for mart in marts:
        cursor = con.execute(f'select * from main."{mart}"')
        columns = [d[0] for d in cursor.description]
        rows = [tuple(_canonical(v) for v in row) for row in cursor.fetchall()]
        out[mart] = (columns, sorted(rows, key=_sort_key))
    return out


def _canonical(value):
    """Values as CSV can carry them: lists as JSON, NULL as None, the rest as they are."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _sort_key(row):
    # Floats rounded so that last-bit noise cannot reorder rows; None sorts first.
    return tuple((0, "") if v is None else (1, f"{v:.9g}") if isinstance(v, float) else (1, str(v)) for v in row)


def write_snapshot(warehouse, directory=SNAPSHOT_DIR):
    """Write the marts that differ from the snapshot (only those: last-bit float noise in the
    others is no change, and rewriting them would make a diff of nothing); drop marts that are gone.
    Returns the lines that say what moved."""
    directory.mkdir(parents=True, exist_ok=True)
    found = differences(warehouse, directory)
    moved = {line.split(" ", 1)[0].rstrip(":") for line in found}
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        built = mart_rows(con)
        for gone in set(read_snapshot(directory)) - set(built):
            (directory / f"{gone}.csv.gz").unlink()
        for mart, (columns, rows) in built.items():
            if mart not in moved:
                continue
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows([_cell(v) for v in row] for row in rows)
            # mtime=0: the same marts give the same bytes, so git sees no change.
            with gzip.GzipFile(directory / f"{mart}.csv.gz", "wb", mtime=0) as handle:
                handle.write(buffer.getvalue().encode("utf-8"))
    finally:
        con.close()
    return found


def _cell(value):
    if value is None:
        return r"\N"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def read_snapshot(directory=SNAPSHOT_DIR):
    """{mart: (column names, rows as strings, NULL as None)}."""
    out = {}
    for path in sorted(directory.glob("*.csv.gz")):
        with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            columns = next(reader)
            out[path.name.removesuffix(".csv.gz")] = (
                columns,
                [tuple(None if v == r"\N" else v for v in row) for row in reader],
            )
    return out


def differences(warehouse, directory=SNAPSHOT_DIR, most=10):
    """Lines that say where the built marts differ from the snapshot (empty: none)."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        built = mart_rows(con)
    finally:
        con.close()
    expected = read_snapshot(directory)
    found = []
    for mart in sorted(set(built) | set(expected)):
        if mart not in expected or mart not in built:
            found.append(f"{mart}: {'not in the snapshot' if mart in built else 'missing from the build'}")
            continue
        (columns, rows), (want_columns, want_rows) = built[mart], expected[mart]
        if columns != want_columns:
            found.append(f"{mart}: columns {columns} != snapshot {want_columns}")
            continue
        if len(rows) != len(want_rows):
            found.append(f"{mart}: {len(rows)} rows != snapshot {len(want_rows)}")
            continue
        bad = [(k, row, want) for k, (row, want) in enumerate(zip(rows, want_rows)) if not _row_equal(row, want)]
        found += [f"{mart} row {k}: {row} != snapshot {want}" for k, row, want in bad[:most]]
    return found


def _row_equal(row, want):
    return all(_value_equal(v, w) for v, w in zip(row, want))


def _value_equal(value, want):
    if value is None or want is None:
        return value is None and want is None
    if isinstance(value, float):
        expected = float(want)
        if math.isnan(value) or math.isnan(expected):
            return math.isnan(value) and math.isnan(expected)
        return math.isclose(value, expected, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return _cell(value) == want


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="build the reference warehouse and write the snapshot")
    args = parser.parse_args()
    if not args.write:
        parser.error("nothing to do (--write writes the snapshot; the suite compares with it)")
    shared = Path(os.environ.get("SRLENS_SHARED_DIR", Path(__file__).resolve().parents[3] / "shared"))
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = Path(tmp) / "snapshot.duckdb"
        build_reference_warehouse(warehouse, shared / "ud" / "en_ewt" / "en_ewt-ud-test.conllu")
        found = write_snapshot(warehouse)
    print("\n".join(found[:40]) or "no mart moved")
    print(f"the snapshot in {SNAPSHOT_DIR} now holds this build's marts")


if __name__ == "__main__":
    main()
