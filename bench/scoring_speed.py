"""Scoring benchmark: >= 100,000 output sentences through load + build, against an nltk loop.

Generates system runs from a UD treebank by deterministic perturbations (gold order, local
swaps, shuffles, drops), loads them into a fresh warehouse, builds with the model-free
'aligned' processor, and reports per-model times from dbt's run_results.json. Then it times
nltk's sentence_bleu in a Python loop on the very same lemma pairs and checks bit-identity.

Then, on the same warehouse and in the same process, it runs the scoring models of issue 18 as they
were before the set-based rewrite (their SQL at git commit --before) and as they are now, back to
back, checks that both give the same rows, and reports wall and CPU seconds (user + sys of this
process, DuckDB's threads and the Python UDFs included) per model.

    python bench/scoring_speed.py [--treebank PATH] [--runs 8] [--out docs/benchmarks.md]
    python bench/scoring_speed.py --warehouse BUILT.duckdb    # before/after only, on a built warehouse
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import jinja2
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from srlens.build import build
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import load_outputs, load_treebank
from srlens.udfs import register_all

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import BENCHMARKS_MD, write_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PERTURBATIONS = ("gold", "swaps", "shuffle", "drops")
# The commit before the set-based scoring (issue 18), whose model SQL is "before".
BEFORE_COMMIT = "7721387"
SCHEMAS = {"stg": "staging", "int": "intermediate"}  # by model-name prefix; marts live in main
# Before and after, each a list of (model, path under dbt_project/models) run in that order.
BEFORE_AFTER = [
    (
        "sentence scores (BLEU + accuracies)",
        [("int_sentence_accuracies", "intermediate/int_sentence_accuracies.sql")],
        [
            ("int_sentence_bleu_stats", "intermediate/int_sentence_bleu_stats.sql"),
            ("int_sentence_accuracies", "intermediate/int_sentence_accuracies.sql"),
        ],
    ),
    (
        "metric_correlations",
        [("metric_correlations", "marts/metric_correlations.sql")],
        [("metric_correlations", "marts/metric_correlations.sql")],
    ),
]


def perturb(words, kind, rng):
    words = list(words)
    if kind == "swaps":
        for i in range(len(words) - 1):
            if rng.random() < 0.15:
                words[i], words[i + 1] = words[i + 1], words[i]
    elif kind == "shuffle":
        rng.shuffle(words)
    elif kind == "drops":
        words = [w for w in words if rng.random() > 0.1] or words[:1]
    return words


def write_runs(treebank_path, runs, out_dir):
    tb = read_conllu(treebank_path)
    forms = {}
    t = tb.tokens
    for idx, tid, form in zip(t["sent_idx"], t["id"], t["form"]):
        if tid.isdigit():
            forms.setdefault(idx, []).append(form)
    sent_ids = tb.sentences["sent_id"]
    paths = []
    for r in range(runs):
        kind = PERTURBATIONS[r % len(PERTURBATIONS)]
        rng = random.Random(f"{kind}-{r}")
        path = out_dir / f"run{r}_{kind}.sr"
        with open(path, "w") as handle:
            for idx, sent_id in enumerate(sent_ids, start=1):
                handle.write(f"# sent_id = {sent_id}\n# text = {' '.join(perturb(forms[idx], kind, rng))}\n\n")
        paths.append(path)
    return paths, len(sent_ids)


def model_times(warehouse):
    results = json.loads((warehouse.parent / f".{warehouse.name}.dbt" / "target" / "run_results.json").read_text())
    return {
        r["unique_id"].split(".")[-1]: r["execution_time"]
        for r in results["results"]
        if r["unique_id"].startswith("model.")
    }


def git_text(commit, path):
    return subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:{path}"], capture_output=True, text=True, check=True
    ).stdout


def render_model(sql, macros, local):
    """A model's SQL as a full build runs it: refs to the attached warehouse `w` (or to the tables
    this run made, `local`), incremental filters off, the project's macros available."""
    env = jinja2.Environment(extensions=["jinja2.ext.do"])
    ref = lambda name: name if name in local else f"w.{SCHEMAS.get(name.split('_')[0], 'main')}.{name}"  # noqa: E731
    return env.from_string(macros + "\n" + sql).render(
        ref=ref,
        config=lambda **kwargs: "",
        is_incremental=lambda: False,
        var=lambda name, default=None: default,
        execute=False,
    )


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def before_after(warehouse, commit):
    """[(label, before (wall, cpu), after (wall, cpu), rows, same rows)] on one connection."""
    from srlens.build import memory_limit

    con = duckdb.connect()
    register_all(con)
    con.execute(f"set memory_limit = '{memory_limit()}'")
    con.execute(f"attach '{warehouse}' as w (read_only)")
    results = []
    for label, before_models, after_models in BEFORE_AFTER:
        timings = {}
        for version, models in (("before", before_models), ("after", after_models)):
            con.execute(f"create schema {version}")
            con.execute(f"set schema = '{version}'")
            macro_dir = "dbt_project/macros"
            if version == "before":
                names = subprocess.run(
                    ["git", "-C", str(REPO), "ls-tree", "--name-only", commit, macro_dir + "/"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                macros = "\n".join(git_text(commit, name) for name in names)
            else:
                macros = "\n".join(p.read_text() for p in sorted((REPO / macro_dir).glob("*.sql")))
            wall = cpu = 0.0
            local = set()
            for name, path in models:
                text = (
                    git_text(commit, f"dbt_project/models/{path}")
                    if version == "before"
                    else (REPO / "dbt_project" / "models" / path).read_text()
                )
                sql = render_model(text, macros, local)
                cpu0, wall0 = cpu_seconds(), time.perf_counter()
                con.execute(f"create table {name} as {sql}")
                wall += time.perf_counter() - wall0
                cpu += cpu_seconds() - cpu0
                local.add(name)
            timings[version] = (wall, cpu, models[-1][0])
        con.execute("set schema = 'main'")
        final = timings["after"][2]
        rows = con.execute(f"select count(*) from after.{final}").fetchone()[0]
        differ = con.execute(
            f"select (select count(*) from (from before.{final} except all from after.{final})) + "
            f"(select count(*) from (from after.{final} except all from before.{final}))"
        ).fetchone()[0]
        results.append((label, timings["before"][:2], timings["after"][:2], rows, differ == 0))
        con.execute("drop schema before cascade")
        con.execute("drop schema after cascade")
    con.close()
    return results


def before_after_report(warehouse, commit):
    sentences = duckdb.connect(str(warehouse), read_only=True).execute("select count(*) from raw.outputs").fetchone()[0]
    results = before_after(warehouse, commit)
    lines = [
        f"`python bench/scoring_speed.py`: the models issue 18 rewrote, as they were at commit `{commit}` "
        f"(\"before\") and as they are now (\"after\"), run back to back in one process on the same warehouse "
        f"({sentences:,} output sentences, every submission, as a full build runs them). CPU is user + sys "
        "of the process (DuckDB threads and Python UDFs), less sensitive than wall time to the other "
        "jobs on this shared 2-core machine.",
        "",
        "| model | before wall s | before CPU s | after wall s | after CPU s | CPU ratio | rows | same rows |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, (bw, bc), (aw, ac), rows, same in results:
        lines.append(
            f"| {label} | {bw:.1f} | {bc:.1f} | {aw:.1f} | {ac:.1f} | {bc / ac:.1f} | {rows:,} | "
            f"{'yes' if same else 'NO'} |"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
    ap.add_argument("--treebank", default=str(shared / "ud/en_ewt/en_ewt-ud-train.conllu"))
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--out", default=str(BENCHMARKS_MD))
    ap.add_argument("--before", default=BEFORE_COMMIT, help="git commit of the 'before' models")
    ap.add_argument("--warehouse", help="a built warehouse: only the before/after comparison, on it")
    args = ap.parse_args()
    if args.warehouse:
        report = before_after_report(Path(args.warehouse), args.before)
        print(report)
        write_section("Set-based scoring, before and after (issue 18)", report, Path(args.out))
        return

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        warehouse = tmp / "bench.duckdb"
        run_paths, per_run = write_runs(args.treebank, args.runs, tmp)
        n = per_run * args.runs

        t0 = time.perf_counter()
        load_treebank(warehouse, args.treebank, "bench")
        for path in run_paths:
            load_outputs(warehouse, path, "bench", "bench", path.stem)
        load_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        build(warehouse, echo=False, processor="aligned")
        build_s = time.perf_counter() - t0
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        times = model_times(warehouse)

        con = duckdb.connect(str(warehouse), read_only=True)
        register_all(con)
        udf_seconds = {}
        for name, call in (
            ("bleu", "srlens_sentence_bleu(out_lemmas, ref_lemmas)"),
            ("accuracies", "srlens_accuracies(ref_lemmas, ref_heads, out_lemmas)"),
        ):
            t0 = time.perf_counter()
            con.execute(f"select count({call}) from intermediate.int_scored_outputs").fetchone()
            udf_seconds[name] = time.perf_counter() - t0
        pairs = con.execute(
            "select s.out_lemmas, s.ref_lemmas, u.bleu from intermediate.int_scored_outputs s "
            "join intermediate.int_sentence_bleu_stats u using (submission_id, sent_idx)"
        ).fetchall()
        con.close()
        smooth = SmoothingFunction().method2
        t0 = time.perf_counter()
        nltk_scores = [sentence_bleu([ref], out, smoothing_function=smooth) for out, ref, _ in pairs]
        nltk_s = time.perf_counter() - t0
        identical = sum(a == b for a, (_, _, b) in zip(nltk_scores, pairs))
        comparison = before_after_report(warehouse, args.before)

    dea_s = times["int_dea_edges"] + times["int_output_lemmas"]
    udf_s = times["int_sentence_accuracies"] + times["int_sentence_bleu_stats"]
    scoring_models = (
        "int_output_words",
        "int_output_lemmas",
        "int_scored_outputs",
        "int_dea_edges",
        "int_sentence_bleu_stats",
        "int_sentence_accuracies",
        "sentence_scores",
        "submission_scores",
        "dea_by_relation",
    )
    scoring_s = sum(times[m] for m in scoring_models)
    lines = [
        f"Treebank `{Path(args.treebank).name}`, {args.runs} runs x {per_run:,} sentences = {n:,} output sentences "
        f"(perturbations: {', '.join(PERTURBATIONS)}), processor `aligned`, 2-core machine.",
        "",
        "| step | seconds | sentences/s |",
        "|---|---:|---:|",
        f"| load treebank + {args.runs} runs | {load_s:.1f} | {n / load_s:,.0f} |",
        f"| DEA, set-based SQL (`int_output_lemmas` + `int_dea_edges`) | {dea_s:.1f} | {n / dea_s:,.0f} |",
        "| BLEU (n-gram statistics in SQL, `int_sentence_bleu_stats`) + string/tree/reorder accuracies "
        "(mapping, treelets and alignments with `srlens_accuracy_counts` in "
        f"`int_sentence_accuracies`) | {udf_s:.1f} | {n / udf_s:,.0f} |",
        "| of which sentence BLEU alone (`srlens_sentence_bleu` over the same pairs) | "
        f"{udf_seconds['bleu']:.1f} | {n / udf_seconds['bleu']:,.0f} |",
        "| for comparison, the plain-Python accuracies (`srlens_accuracies`, `sentence_accuracies` per row) "
        f"over the same pairs | {udf_seconds['accuracies']:.1f} | {n / udf_seconds['accuracies']:,.0f} |",
        f"| all scoring models | {scoring_s:.1f} | {n / scoring_s:,.0f} |",
        f"| whole `srlens build` (dbt start-up, every model and data test) | {build_s:.1f} | {n / build_s:,.0f} |",
        f"| nltk `sentence_bleu` in a Python loop, same pairs | {nltk_s:.1f} | {n / nltk_s:,.0f} |",
        "",
        f"Sentence BLEU stored in the warehouse is bit-identical to nltk on {identical:,} of {len(pairs):,} pairs. "
        f"Peak memory of the dbt process: {peak_mb:,.0f} MB.",
        "",
        "Slowest models: "
        + ", ".join(f"`{k}` {v:.1f} s" for k, v in sorted(times.items(), key=lambda kv: -kv[1])[:6])
        + ".",
    ]
    report = "\n".join(lines)
    print(report)
    write_section("Scoring", report, Path(args.out))
    print(comparison)
    write_section("Set-based scoring, before and after (issue 18)", comparison, Path(args.out))


if __name__ == "__main__":
    sys.exit(main())
