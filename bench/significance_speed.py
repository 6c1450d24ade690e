"""Time the analyst marts of SPEC 12 (significance, buckets, examples) at two scales.

    python bench/significance_speed.py [--runs 10] [--work DIR] [--doc]
    python bench/significance_speed.py --render WORK/significance_speed.json   # section from saved figures

1. the bundled demo (2 corpora x 8 runs x 200 sentences, baselines included);
2. en_ewt test (2,077 sentences) with --runs deterministic perturbed runs (the demo generator's
   run kinds, cycled, each with its own seed).

Each warehouse is built once with `srlens build` (processor aligned); then the new models alone
are rebuilt (dbt --full-refresh --select) and their times read from dbt's run_results.json, so
the figures are the models' own, not the rest of the build. The campaign figure is extrapolated:
the resampling join is linear in runs x sentences x (B + R), which the second scale measures.
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "demo"))

from benchmarks_doc import write_section  # noqa: E402

SECTION = "Significance, buckets and examples (SPEC 12)"
MODELS = [
    "int_significance_sentences",
    "int_significance_pairs",
    "int_submission_resample_sums",
    "int_pair_resample_sums",
    "int_submission_intervals",
    "pairwise_significance",
    "int_language_frequencies",
    "bucket_scores",
    "error_examples",
]


def perturbed_runs(treebank, out_dir, runs):
    import make_demo

    sentences = list(make_demo.read_conllu(treebank))
    files = []
    for r in range(runs):
        kind = make_demo.RUNS[1 + r % (len(make_demo.RUNS) - 1)]  # every kind but gold
        name = f"{kind}_{r}"
        rng = make_demo.random.Random(make_demo.seed_for("en_ewt_test", name))
        blocks = []
        for k, s in enumerate(sentences):
            order = make_demo.RUN_FUNCS[kind](s, rng, k)
            blocks.append(f"# sent_id = {s.sent_id}\n# text = {' '.join(s.form[i] for i in order)}\n\n")
        path = out_dir / f"{name}.sr"
        path.write_text("".join(blocks), encoding="utf-8")
        files.append((name, path))
    return files


def model_times(warehouse):
    """Rebuild the new models alone; {model: seconds} from run_results.json."""
    from srlens.build import run_dbt
    from srlens.paths import DBT_PROJECT_DIR

    work = Path(warehouse).parent / ".bench.dbt"
    env_vars = json.dumps({"processor": "aligned"})
    args = ["run", "--full-refresh", "--vars", env_vars, "--select", *MODELS]
    start = time.perf_counter()
    ok, output = run_dbt(args, Path(warehouse), work, DBT_PROJECT_DIR, echo=False)
    wall = time.perf_counter() - start
    if not ok:
        raise SystemExit(output[-3000:])
    results = json.loads((work / "target" / "run_results.json").read_text())
    return {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results["results"]}, wall


def counts(warehouse):
    import duckdb

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "runs": q("select count(*) from staging.stg_submissions"),
            "sentences": q("select count(*) from intermediate.int_significance_sentences"),
            "pairs": q("select count(*) from intermediate.int_significance_pairs"),
            "resampled": q("select count(*) from intermediate.int_submission_resample_sums"),
            "pairwise_rows": q("select count(*) from pairwise_significance"),
            "bucket_rows": q("select count(*) from bucket_scores"),
            "example_rows": q("select count(*) from error_examples"),
        }
    finally:
        con.close()


def scale(name, warehouse, load):
    from srlens.build import build

    print(f"[{name}] loading and building", file=sys.stderr)
    load(warehouse)
    start = time.perf_counter()
    build(warehouse, echo=False, processor="aligned")
    build_seconds = time.perf_counter() - start
    print(f"[{name}] timing the new models", file=sys.stderr)
    times, wall = model_times(warehouse)
    return {"name": name, "build_seconds": build_seconds, "models": times, "models_wall": wall, **counts(warehouse)}


def render(results):
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs while measured: "
        "wall times are upper bounds). B = R = 1,000. `python bench/significance_speed.py --doc`.",
        "",
    ]
    lines.append("| model | " + " | ".join(r["name"] for r in results) + " |")
    lines.append("|---|" + "---:|" * len(results))
    for model in MODELS:
        lines.append(
            f"| {model} | " + " | ".join(f"{r['models'].get(model, float('nan')):.1f} s" for r in results) + " |"
        )
    lines.append("| **all new models (dbt wall)** | " + " | ".join(f"{r['models_wall']:.0f} s" for r in results) + " |")
    lines.append("| whole build, for scale | " + " | ".join(f"{r['build_seconds']:.0f} s" for r in results) + " |")
    lines.append("")
    for r in results:
        lines.append(
            f"* {r['name']}: {r['runs']} runs, {r['sentences']:,} realized sentences, {r['pairs']} ordered "
            f"pairs; {r['resampled']:,} resampled sums (one matrix product per run and kind, "
            f"udfs/resample.py); marts: {r['pairwise_rows']:,} pairwise rows, {r['bucket_rows']:,} bucket "
            f"rows, {r['example_rows']:,} example rows."
        )
    big = results[-1]
    per_run = big["models"].get("int_submission_resample_sums", float("nan")) / big["runs"]
    lines.append(
        f"* int_submission_resample_sums takes {per_run:.2f} s per run of {big['name']} (numpy's draws "
        "and two matrix products per run); it grows linearly with runs x sentences x (B + R). Pairs then "
        "combine the runs' sums, independently of the sentence count."
    )
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--work", help="folder for the warehouses (default: a temporary one)")
    p.add_argument("--doc", action="store_true", help="write the section of docs/benchmarks.md")
    p.add_argument("--render", metavar="JSON", help="only write the section from a saved significance_speed.json")
    args = p.parse_args()
    if args.render:
        write_section(SECTION, render(json.loads(Path(args.render).read_text())))
        return
    shared = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
    en_ewt_test = shared / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"

    from srlens.demo import load_demo
    from srlens.loaders.load import load_outputs, load_treebank

    def load_en_ewt(warehouse):
        load_treebank(warehouse, en_ewt_test, "en_ewt_test")
        for name, path in perturbed_runs(en_ewt_test, Path(warehouse).parent, args.runs):
            load_outputs(warehouse, path, "en_ewt_test", "perturb", name, campaign="bench")

    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        results = []
        for name, load in (("demo", load_demo), (f"en_ewt test x {args.runs} runs", load_en_ewt)):
            folder = Path(tmp) / name.split()[0]
            folder.mkdir()
            results.append(scale(name, folder / "srlens.duckdb", load))
    body = render(results)
    print(body)
    (Path(args.work or ".") / "significance_speed.json").write_text(json.dumps(results, indent=1))
    if args.doc:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
