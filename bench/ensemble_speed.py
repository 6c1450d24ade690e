"""Time ensemble selection (SPEC 12) and `srlens suggest-training` at two scales.

    python bench/ensemble_speed.py [--runs 10] [--work DIR] [--doc]
    python bench/ensemble_speed.py --render WORK/ensemble_speed.json   # the section from saved figures

1. the bundled demo (2 corpora x 8 runs x 200 sentences, baselines included);
2. en_ewt test (2,077 sentences) and en_ewt dev (2,001) with --runs perturbed runs each, of the
   same names (bench/significance_speed.py's generator), French-free: test also learns on dev
   (var ensemble_tuning_corpus), so both setups are timed.

Each warehouse is built once with `srlens build` (processor aligned); then the ensemble models
alone are rebuilt (dbt --full-refresh --select) and their times read from dbt's run_results.json.
suggest-training is timed as a command (one run, 500 sentences, from the other treebank).
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
sys.path.insert(0, str(REPO / "bench"))

from benchmarks_doc import write_section  # noqa: E402
from significance_speed import perturbed_runs  # noqa: E402

SECTION = "Ensemble selection and training data (SPEC 12)"
MODELS = ["int_ensemble_candidates", "int_ensemble_runs", "ensemble_selection", "ensemble_choices"]


def model_times(warehouse, dbt_vars):
    from srlens import build_vars
    from srlens.build import run_dbt
    from srlens.paths import DBT_PROJECT_DIR

    work = Path(warehouse).parent / ".bench.dbt"
    args = ["run", "--full-refresh", "--vars", json.dumps({**build_vars.defaults(), **dbt_vars}), "--select", *MODELS]
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
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        return {
            "runs": q("select count(*) from staging.stg_submissions")[0][0],
            "candidates": q("select count(*) from intermediate.int_ensemble_candidates")[0][0],
            "setups": [
                dict(
                    zip(
                        (
                            "corpus",
                            "tuning_corpus",
                            "sentences",
                            "ensemble_dea",
                            "best_single_dea",
                            "oracle_dea",
                            "ensemble_bleu",
                            "best_single_bleu",
                        ),
                        r,
                    )
                )
                for r in q(
                    "select corpus, tuning_corpus, sentences, ensemble_dea, best_single_dea, "
                    "oracle_dea, ensemble_bleu, best_single_bleu from ensemble_selection "
                    "order by corpus, tuning_corpus"
                )
            ],
        }
    finally:
        con.close()


def suggest_seconds(warehouse, submission_id, treebank, out):
    from srlens.suggest import suggest

    start = time.perf_counter()
    result = suggest(warehouse, submission_id, treebank, 500, out)
    return time.perf_counter() - start, len(result.sent_ids)


def scale(name, warehouse, load, dbt_vars, submission_id, treebank):
    from srlens.build import build

    print(f"[{name}] loading and building", file=sys.stderr)
    load(warehouse)
    start = time.perf_counter()
    build(warehouse, echo=False, processor="aligned", dbt_vars=dbt_vars)
    build_seconds = time.perf_counter() - start
    print(f"[{name}] timing the ensemble models and suggest-training", file=sys.stderr)
    times, wall = model_times(warehouse, dbt_vars)
    seconds, written = suggest_seconds(warehouse, submission_id, treebank, Path(warehouse).parent / "more.conllu")
    return {
        "name": name,
        "build_seconds": build_seconds,
        "models": times,
        "models_wall": wall,
        "suggest_seconds": seconds,
        "suggest_written": written,
        "suggest_run": submission_id,
        "suggest_treebank": treebank,
        **counts(warehouse),
    }


def render(results):
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, shared with other engineers' jobs while "
        "measured (wall times are upper bounds). `python bench/ensemble_speed.py --doc`.",
        "",
    ]
    lines.append("| model | " + " | ".join(r["name"] for r in results) + " |")
    lines.append("|---|" + "---:|" * len(results))
    for model in MODELS:
        lines.append(
            f"| {model} | " + " | ".join(f"{r['models'].get(model, float('nan')):.1f} s" for r in results) + " |"
        )
    lines.append(
        "| **the four models (dbt wall)** | " + " | ".join(f"{r['models_wall']:.0f} s" for r in results) + " |"
    )
    lines.append(
        "| suggest-training, 500 sentences | " + " | ".join(f"{r['suggest_seconds']:.1f} s" for r in results) + " |"
    )
    lines.append("| whole build, for scale | " + " | ".join(f"{r['build_seconds']:.0f} s" for r in results) + " |")
    lines.append("")
    lines.append(
        "* The dbt wall time is mostly dbt's own start (parsing the whole project) on the loaded machine; "
        "the four models take the sum of their rows."
    )
    for r in results:
        lines.append(
            f"* {r['name']}: {r['runs']} runs, {r['candidates']:,} candidate rows (setup x run x realized "
            f"sentence); suggest-training wrote {r['suggest_written']} sentences of {r['suggest_treebank']} "
            f"for {r['suggest_run']}."
        )
        for s in r["setups"]:
            lines.append(
                f"  * {s['corpus']} learned on {s['tuning_corpus']}: DEA ensemble {s['ensemble_dea']:.3f}, "
                f"best single {s['best_single_dea']:.3f}, oracle {s['oracle_dea']:.3f}; BLEU ensemble "
                f"{s['ensemble_bleu']:.3f}, best single {s['best_single_bleu']:.3f}."
            )
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--work", help="folder for the warehouses (default: a temporary one)")
    p.add_argument("--doc", action="store_true", help="write the section of docs/benchmarks.md")
    p.add_argument("--render", metavar="JSON", help="only write the section from a saved ensemble_speed.json")
    args = p.parse_args()
    if args.render:
        write_section(SECTION, render(json.loads(Path(args.render).read_text())))
        return
    shared = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
    ud = shared / "ud" / "en_ewt"

    from srlens.demo import load_demo
    from srlens.loaders.load import load_outputs, load_treebank

    def load_en_ewt(warehouse):
        for corpus, file in (("en_ewt_test", "en_ewt-ud-test.conllu"), ("en_ewt_dev", "en_ewt-ud-dev.conllu")):
            load_treebank(warehouse, ud / file, corpus)
            folder = Path(warehouse).parent / corpus
            folder.mkdir()
            for name, path in perturbed_runs(ud / file, folder, args.runs):
                load_outputs(warehouse, path, corpus, "perturb", name, campaign="bench")

    gold = ["demo/en_ewt_demo/baseline/gold", "demo/fr_gsd_demo/baseline/gold"]
    scales = (
        ("demo", load_demo, {"ensemble_exclude_runs": gold}, "demo/en_ewt_demo/perturb/advmod_moved", "fr_gsd_demo"),
        (
            f"en_ewt test and dev x {args.runs} runs",
            load_en_ewt,
            {"ensemble_tuning_corpus": {"en_ewt_test": "en_ewt_dev"}},
            "bench/en_ewt_test/perturb/swaps_1",
            "en_ewt_dev",
        ),
    )
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        results = []
        for name, load, dbt_vars, submission_id, treebank in scales:
            folder = Path(tmp) / name.split()[0]
            folder.mkdir()
            results.append(scale(name, folder / "srlens.duckdb", load, dbt_vars, submission_id, treebank))
    body = render(results)
    print(body)
    (Path(args.work or ".") / "ensemble_speed.json").write_text(json.dumps(results, indent=1))
    if args.doc:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
