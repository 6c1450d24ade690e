"""SPEC section 12 read literally, in numpy and plain Python loops, for tests.

Inputs are the per-sentence statistics of two runs (one dict per sentence, in treebank order);
the resampling is SPEC's own numpy calls, so the warehouse must agree exactly (p-values) or to
float rounding (intervals, means). Nothing here is shared with the SQL.
"""

import numpy as np

from srlens.udfs.bleu import bleu_from_stats

BLEU_FIELDS = ("hyp_len", "ref_len", "m1", "m2", "m3", "m4", "t1", "t2", "t3", "t4")
MEAN_SCORES = (
    "bleu",
    "dea",
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "understandability_accuracy",
    "quality_accuracy",
    "reorder_accuracy",
    "rule_score",
)
# sacrebleu's corpus scores (SPEC 13): sacrebleu's own formulas on the summed statistics, as its paired_bs
SACREBLEU_FIELDS = {
    "sacrebleu_bleu": ("sb_hyp_len", "sb_ref_len") + tuple(f"sb_{k}{n}" for k in ("c", "t") for n in range(1, 5)),
    "chrf": tuple(f"chrf_{k}{n}" for n in range(1, 7) for k in ("h", "r", "m")),
}
METRICS = ("corpus_bleu", "dea") + tuple(f"{score}_mean" for score in MEAN_SCORES) + tuple(SACREBLEU_FIELDS)


def sacrebleu_of(sentences, metric):
    from sacrebleu.metrics import BLEU, CHRF

    fields = SACREBLEU_FIELDS[metric]
    if any(s[f] is None for s in sentences for f in fields):
        return None
    totals = [int(sum(s[f] for s in sentences)) for f in fields]
    return (BLEU() if metric == "sacrebleu_bleu" else CHRF())._compute_score_from_stats(totals).score


def metric_of(sentences, metric):
    """The corpus-level metric of a list of sentences (repeats count), SPEC 12; None if undefined."""
    if metric == "corpus_bleu":
        totals = [sum(s[f] for s in sentences) for f in BLEU_FIELDS]
        return bleu_from_stats(totals[0], totals[1], totals[2:6], totals[6:10])
    if metric in SACREBLEU_FIELDS:
        return sacrebleu_of(sentences, metric)
    if metric == "dea":
        edges = sum(s["dea_edges"] for s in sentences)
        return sum(s["dea_matched"] for s in sentences) / edges if edges else None
    values = [s[metric.removesuffix("_mean")] for s in sentences]
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def same_statistics(a, b, metric):
    if metric == "corpus_bleu":
        return all(x[f] == y[f] for x, y in zip(a, b) for f in BLEU_FIELDS)
    if metric in SACREBLEU_FIELDS:
        return all(x[f] == y[f] for x, y in zip(a, b) for f in SACREBLEU_FIELDS[metric])
    if metric == "dea":
        return all((x["dea_matched"], x["dea_edges"]) == (y["dea_matched"], y["dea_edges"]) for x, y in zip(a, b))
    score = metric.removesuffix("_mean")
    return all(x[score] == y[score] for x, y in zip(a, b))


def paired_test(a, b, metric, samples=1000, trials=1000, seed=12345, alpha=0.05):
    """SPEC 12 for runs a and b given on the same sentences: the dict of a pairwise_significance row."""
    n = len(a)
    assert n == len(b) and n > 0
    delta = metric_of(a, metric) - metric_of(b, metric)

    idx = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)
    d = []
    for s in range(samples):
        ma = metric_of([a[i] for i in idx[s]], metric)
        mb = metric_of([b[i] for i in idx[s]], metric)
        if ma is not None and mb is not None:
            d.append(ma - mb)
    mean_abs = sum(abs(x) for x in d) / len(d)
    p_value = (1 + sum(1 for x in d if abs(x) - mean_abs > abs(delta))) / (len(d) + 1)
    ci_low, ci_high = np.percentile(d, [2.5, 97.5])

    mask = np.random.default_rng(seed).integers(2, size=(trials, n), dtype=bool)
    d_ar = []
    for r in range(trials):
        a_r = [b[i] if mask[r, i] else a[i] for i in range(n)]
        b_r = [a[i] if mask[r, i] else b[i] for i in range(n)]
        ma, mb = metric_of(a_r, metric), metric_of(b_r, metric)
        if ma is not None and mb is not None:
            d_ar.append(ma - mb)
    p_value_ar = (1 + sum(1 for x in d_ar if abs(x) >= abs(delta))) / (len(d_ar) + 1)

    if same_statistics(a, b, metric):
        p_value = p_value_ar = 1.0
    winner = ("a" if delta > 0 else "b" if delta < 0 else None) if p_value < alpha else None
    return {
        "delta": delta,
        "ci_low": float(ci_low),
        "ci_high": float(ci_high),
        "p_value": p_value,
        "p_value_ar": p_value_ar,
        "winner": winner,
        "bootstrap_samples": len(d),
        "ar_samples": len(d_ar),
    }


def interval(sentences, metric, samples=1000, seed=12345):
    """(ci_low, ci_high, boot_mean) of one run's corpus metric over its own sentences, SPEC 12."""
    n = len(sentences)
    idx = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)
    scores = [metric_of([sentences[i] for i in idx[s]], metric) for s in range(samples)]
    scores = [x for x in scores if x is not None]
    low, high = np.percentile(scores, [2.5, 97.5])
    return float(low), float(high), float(np.mean(scores))
