"""The researcher's way: score a campaign sentence by sentence in plain Python.

This is the script a researcher writes instead of using srlens, kept as the
baseline of bench/campaign.py: read each reference treebank with the `conllu`
package and each run as text (one sentence a line), then, per sentence, the
SPEC metrics the warehouse computes for it:

* tree metrics of the reference (SPEC 1) and relation entropy (SPEC 2):
  tests/reference_metrics.py (networkx for the exact flux weight);
* model-free lemmatization of the output ('aligned') and DEA (SPEC 3):
  tests/reference_scores.py;
* sentence BLEU (SPEC 4): nltk sentence_bleu with smoothing method 2, and
  corpus BLEU per run with nltk corpus_bleu;
* string/tree accuracies and reordering accuracy (SPEC 5, 7):
  udfs/accuracy.sentence_accuracies (plain per-sentence Python, the same
  function the warehouse calls through an arrow UDF);
* per run: corpus BLEU, micro DEA, mean of each sentence score; per corpus:
  mean and SD of each tree metric, % non-projective.

It does not do what the warehouse adds on top (error mining, L'AMBRE rules,
correlations and tests, DEA by relation marts, data tests).

    python bench/campaign_researcher.py .bench/campaign/main/manifest.json [--corpora N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import conllu  # noqa: E402
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu  # noqa: E402

from srlens.udfs.accuracy import sentence_accuracies  # noqa: E402
from tests.reference_metrics import (  # noqa: E402
    analysis_tree_from_tokenlist,
    relation_entropy,
    sentence_metrics,
)
from tests.reference_scores import aligned_lemmas, dea  # noqa: E402

SMOOTH = SmoothingFunction().method2
TREE_METRICS = (
    "tree_depth",
    "tree_length",
    "mean_dependency_distance",
    "mean_flux_size",
    "mean_flux_weight",
    "mean_arity",
)
SENTENCE_SCORES = (
    "bleu",
    "dea",
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "reorder_accuracy",
)


def read_reference(path):
    """Analysis trees plus, per sentence, the word forms, lemmas and punct flags the 'aligned' mapping needs."""
    trees, words = [], []
    with open(path, encoding="utf-8") as handle:
        for index, tokenlist in enumerate(conllu.parse_incr(handle), start=1):
            trees.append(analysis_tree_from_tokenlist(tokenlist, index))
            syntactic = [t for t in tokenlist if isinstance(t["id"], int)]
            words.append(
                (
                    [t["form"] for t in syntactic],
                    [t["lemma"] for t in syntactic],
                    [t["deprel"].split(":")[0] == "punct" for t in syntactic],
                )
            )
    return trees, words


def corpus_statistics(trees):
    per_sentence = [sentence_metrics(tree) for tree in trees]
    defined = [m for m in per_sentence if m["tree_length"] is not None]
    stats = {
        "sentences": len(trees),
        "nonprojective_pct": 100 * sum(not m["is_projective"] for m in defined) / len(defined),
    }
    for key in TREE_METRICS:
        values = [m[key] for m in defined]
        stats[key + "_mean"] = statistics.fmean(values)
        stats[key + "_sd"] = statistics.stdev(values) if len(values) > 1 else None
    return per_sentence, stats


def score_run(path, trees, words):
    """Per sentence scores and the run's aggregates."""
    with open(path, encoding="utf-8") as handle:
        texts = handle.read().split("\n")
    if texts and texts[-1] == "":
        texts.pop()
    if len(texts) != len(trees):
        raise ValueError(f"{path}: {len(texts)} sentences, the treebank has {len(trees)}")
    rows, hyps, refs = [], [], []
    matched_total = edges_total = 0
    for tree, (forms, lemmas, punct), text in zip(trees, words, texts):
        ref = [lemma.lower() for lemma in tree.lemmas]
        out = aligned_lemmas(text, forms, lemmas, punct)
        matched, edges, _by_relation = dea(ref, tree.heads, tree.deprels, out)
        row = {
            "sent_id": tree.sent_id,
            "bleu": sentence_bleu([ref], out, smoothing_function=SMOOTH),
            "dea": matched / edges if edges else None,
        }
        row.update(sentence_accuracies(ref, tree.heads, out))
        rows.append(row)
        hyps.append(out)
        refs.append([ref])
        matched_total += matched
        edges_total += edges
    summary = {
        "sentences": len(rows),
        "corpus_bleu": corpus_bleu(refs, hyps, smoothing_function=SMOOTH),
        "dea_micro": matched_total / edges_total if edges_total else None,
    }
    for key in SENTENCE_SCORES:
        values = [r[key] for r in rows if r[key] is not None]
        summary[key + "_mean"] = statistics.fmean(values) if values else None
    return rows, summary


def score_campaign(corpora, runs, progress=None):
    """corpora: [{name, path}], runs: [{submission_id, corpus, path}] -> (results, seconds by part, counts)."""
    seconds = defaultdict(float)
    results = {"corpora": {}, "runs": {}, "sentences": {}, "seconds": {"corpora": {}, "runs": {}}}
    references = {}
    reference_sentences = output_sentences = 0
    for number, corpus in enumerate(corpora, start=1):
        started = time.perf_counter()
        trees, words = read_reference(corpus["path"])
        read_s = time.perf_counter() - started
        seconds["read treebanks"] += read_s
        started = time.perf_counter()
        _per_sentence, stats = corpus_statistics(trees)
        stats["relation_entropy"] = relation_entropy(trees)
        metrics_s = time.perf_counter() - started
        seconds["tree metrics and entropy"] += metrics_s
        results["seconds"]["corpora"][corpus["name"]] = read_s + metrics_s
        results["corpora"][corpus["name"]] = stats
        references[corpus["name"]] = (trees, words)
        reference_sentences += len(trees)
        if progress:
            progress(f"researcher: treebank {number}/{len(corpora)} {corpus['name']}")
    for number, run in enumerate(runs, start=1):
        trees, words = references[run["corpus"]]
        started = time.perf_counter()
        rows, summary = score_run(run["path"], trees, words)
        run_s = time.perf_counter() - started
        seconds["score outputs"] += run_s
        results["seconds"]["runs"][run["submission_id"]] = run_s
        results["runs"][run["submission_id"]] = summary
        results["sentences"][run["submission_id"]] = rows
        output_sentences += len(rows)
        if progress and (number % 10 == 0 or number == len(runs)):
            progress(f"researcher: run {number}/{len(runs)}")
    return results, dict(seconds), {"reference_sentences": reference_sentences, "output_sentences": output_sentences}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifest", help="manifest.json written by bench/campaign.py")
    ap.add_argument("--corpora", type=int, default=None, help="only the first N corpora (and their runs)")
    args = ap.parse_args()
    manifest = json.loads(Path(args.manifest).read_text())
    base = Path(args.manifest).parent
    corpora = manifest["corpora"][: args.corpora]
    names = {c["name"] for c in corpora}
    runs = [r for r in manifest["runs"] if r["corpus"] in names]
    corpora = [{**c, "path": base / c["path"]} for c in corpora]
    runs = [{**r, "path": base / r["path"]} for r in runs]
    started = time.perf_counter()
    results, seconds, counts = score_campaign(corpora, runs, progress=lambda m: print(m, file=sys.stderr))
    total = time.perf_counter() - started
    for sub_id, summary in results["runs"].items():
        print(f"{sub_id}\tBLEU {summary['corpus_bleu']:.4f}\tDEA {summary['dea_micro']:.4f}")
    print(
        f"{counts['output_sentences']} output sentences, {counts['reference_sentences']} reference "
        f"sentences in {total:.1f} s: " + ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items())
    )


if __name__ == "__main__":
    sys.exit(main())
