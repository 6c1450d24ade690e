"""CPU seconds of srlens_accuracy_counts' Python body on a built warehouse, at an older revision and
at this tree, alternately, and whether both give the same counts.

    python bench/accuracy_udf_speed.py WAREHOUSE --before REV [--rounds 3]

The UDF's inputs are read once from int_scored_outputs as int_sentence_accuracies passes them, in
batches of 2,048 rows as DuckDB hands them to an arrow UDF; each side calls
srlens_accuracy_counts_arrow on all batches in a fresh process with that revision's srlens on the
path (its tables kept across batches, as in a build), CPU = user + sys of that loop. The counts of
both sides are compared row for row.
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BATCH = 2048

RUN = f"""
import sys, time, pyarrow as pa, pyarrow.parquet as pq
from srlens.udfs import accuracy
from srlens.udfs.accuracy import srlens_accuracy_counts_arrow
print(accuracy.__file__, file=sys.stderr)
table = pq.read_table(sys.argv[1])
slices = [table.slice(i, {BATCH}) for i in range(0, len(table), {BATCH})]
batches = [[part.column(c).combine_chunks() for c in ("r", "h", "o")] for part in slices]
start = time.process_time()
counts = [srlens_accuracy_counts_arrow(*b) for b in batches]
print(time.process_time() - start)
pq.write_table(pa.table({{"counts": pa.chunked_array(counts)}}), sys.argv[2])
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("warehouse", type=Path)
    p.add_argument("--before", required=True, help="git revision of the before side, e.g. main")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = tmp / "inputs.parquet"
        con = duckdb.connect()
        con.execute(f"attach '{args.warehouse.resolve()}' as w (read_only)")
        con.execute(
            "copy (select coalesce(ref_lemmas, []) as r, coalesce(ref_heads, []) as h, out_lemmas as o "
            f"from w.intermediate.int_scored_outputs) to '{inputs}' (format parquet)"
        )
        rows = con.execute(f"select count(*) from '{inputs}'").fetchone()[0]
        old_tree = tmp / "before-tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(old_tree), args.before], check=True
        )
        try:
            print(
                f"`python bench/accuracy_udf_speed.py WAREHOUSE --before {args.before}`: {rows:,} rows in batches "
                f"of {BATCH:,}, {os.cpu_count()} CPUs; CPU s of the calls, each side in a fresh process.\n"
            )
            print("| round | load | before: CPU s | after: CPU s | same counts |\n|---:|---:|---:|---:|:---:|")
            for round_ in range(1, args.rounds + 1):
                load = os.getloadavg()[0]
                cpu = {}
                for side, tree in (("before", old_tree), ("after", REPO)):
                    out = subprocess.run(
                        [sys.executable, "-c", RUN, str(inputs), str(tmp / f"{side}.parquet")],
                        env={**os.environ, "PYTHONPATH": str(tree)},
                        cwd=tree,  # python -c puts the working directory first on the path
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    cpu[side] = float(out.stdout)
                    assert out.stderr.startswith(str(tree)), out.stderr  # that side's code
                differ = con.execute(
                    f"select count(*) from (select * from '{tmp / 'before.parquet'}' "
                    f"except all select * from '{tmp / 'after.parquet'}')"
                ).fetchone()[0]
                differ += con.execute(
                    f"select count(*) from (select * from '{tmp / 'after.parquet'}' "
                    f"except all select * from '{tmp / 'before.parquet'}')"
                ).fetchone()[0]
                same = "yes" if differ == 0 else f"no ({differ} differ)"
                print(f"| {round_} | {load:.1f} | {cpu['before']:.2f} | {cpu['after']:.2f} | {same} |", flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old_tree)], check=True)


if __name__ == "__main__":
    main()
