"""A 10x stand-in for the significance models, from a built 1x campaign warehouse: every run's
sentences of intermediate.int_significance_sentences ten times (run ids suffixed #0..#9, so 57 runs
per corpus as in the 10x campaign), and the tables the models read beside it, in a new database.
Then any of int_submission_resample_sums, int_submission_intervals, pairwise_significance runs on it
alone (bench/models_before_after.py --run-one OUT SQL PARQUET LIMIT) in minutes, without the hour of
a 10x build.

    python bench/significance_10x.py WAREHOUSE OUT [--pairs]

--pairs also makes int_submission_resample_sums (this tree's SQL), int_significance_pairs and
int_pair_resample_sums, which pairwise_significance reads.
"""

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("warehouse", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--pairs", action="store_true")
    args = p.parse_args()
    import duckdb

    con = duckdb.connect(str(args.out))
    con.execute(f"attach '{args.warehouse.resolve()}' as w (read_only)")
    con.execute("create schema if not exists intermediate")
    con.execute(
        "create or replace table intermediate.int_significance_sentences as "
        "select * replace (submission_id || '#' || k as submission_id) "
        "from w.intermediate.int_significance_sentences, range(10) t(k) order by submission_id, k, sent_idx"
    )
    con.execute(
        "create or replace table intermediate.int_changed_submissions as "
        "select distinct submission_id from intermediate.int_significance_sentences"
    )
    con.execute(
        "create or replace table intermediate.int_changed_corpora as "
        "select distinct corpus from intermediate.int_significance_sentences"
    )
    if args.pairs:
        import tempfile

        from models_before_after import compile_models

        from srlens.udfs import register_all

        register_all(con)
        models = ["int_submission_resample_sums", "int_significance_pairs", "int_pair_resample_sums"]
        with tempfile.TemporaryDirectory() as tmp:
            sql = compile_models(REPO, models, args.warehouse.resolve(), Path(tmp))
        for model in models:
            query = sql[model].replace('"compile".', f'"{args.out.stem}".')  # compiled on an empty database
            con.execute(f"create or replace table intermediate.{model} as {query}")
    runs = con.execute("select count(distinct submission_id) from intermediate.int_significance_sentences").fetchone()
    print(f"{args.out}: {runs[0]:,} runs")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "bench"))
    main()
