"""Scoring benchmark: >= 100,000 output sentences through load + build, against an nltk loop.

Generates system runs from a UD treebank by deterministic perturbations (gold order, local
swaps, shuffles, drops), loads them into a fresh warehouse, builds with the model-free
'aligned' processor, and reports per-model times from dbt's run_results.json. Then it times
nltk's sentence_bleu in a Python loop on the very same lemma pairs and checks bit-identity.

(Its comparison with the scoring models before issue 18's set-based rewrite, section "Set-based
scoring, before and after", is gone: those models' files were renamed since; bench/models_before_after.py
compares any models between two commits.)

    python bench/scoring_speed.py [--treebank PATH] [--runs 8] [--out docs/benchmarks.md]
"""

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from srlens.build import build
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import load_outputs, load_treebank
from srlens.udfs import register_all, register_references

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import BENCHMARKS_MD, write_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PERTURBATIONS = ("gold", "swaps", "shuffle", "drops")


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
    ap.add_argument("--treebank", default=str(shared / "ud/en_ewt/en_ewt-ud-train.conllu"))
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--out", default=str(BENCHMARKS_MD))
    args = ap.parse_args()
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
        register_references(con)
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

    dea_s = times["int_dea_edges"]
    udf_s = times["int_sentence_accuracies"] + times["int_sentence_bleu_stats"]
    scoring_models = (
        "int_output_words_aligned",
        "int_output_words",
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
        f"| DEA, set-based SQL (`int_dea_edges`) | {dea_s:.1f} | {n / dea_s:,.0f} |",
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


if __name__ == "__main__":
    sys.exit(main())
