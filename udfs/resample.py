"""Resampled sums of SPEC section 12 as a DuckDB UDF (numpy, exactly as sacrebleu draws them).

``srlens_resample_sums(statistics, samples, trials, seed)`` takes one list of sentences (a run,
or one side of a pair restricted to the common sentences): ``statistics`` holds, in list order,
each sentence's additive statistics (a DOUBLE[] per sentence, the columns of
macros/significance.sql). It returns the statistics summed over

* ``observed``: the list itself (sample 0);
* ``bootstrap``: each sample s = 0..B-1 of ``idx = numpy.random.default_rng(seed).choice(n,
  size=(B, n), replace=True)`` (sacrebleu's paired_bs): position p counts as often as idx[s]
  holds it;
* ``ar``: each trial r = 0..R-1 of ``mask = numpy.random.default_rng(seed).integers(2,
  size=(R, n), dtype=bool)`` (approximate randomization): the sentences that swap sides.

The draws depend only on (n, B or R, seed), never on the data; as weight matrices (counts
[B x n], mask [R x n]) each kind is one matrix product with the [n x columns] statistics. The
sums are as exact as the SQL join they replace: counts and mask are whole numbers, and so are
the statistics except the summed scores, which only differ in the order of float additions.
Every trial has a row, also one that swaps no sentence (its sums are 0), as SPEC reads.

In SQL the result is one STRUCT of parallel lists (kind, sample, sums) that the caller
unnests; a NULL argument gives NULL. A statistic NULL in every sentence of the list (the
reference-based ones of a reference-free run) gives NULL sums, as SQL's sum does.
"""

import ctypes
import ctypes.util
from functools import lru_cache

import numpy as np
import pyarrow as pa

from .bleu import bleu_from_stat_arrays
from .mt_scores import BLEU_FIELDS as MT_BLEU_FIELDS
from .mt_scores import CHRF_FIELDS as MT_CHRF_FIELDS
from .mt_scores import bleu_from_stat_arrays as mt_bleu_from_stats
from .mt_scores import chrf_from_stat_arrays

__all__ = ["ar_weights", "bootstrap_weights", "pair_tests", "quantile_cont", "register", "resample_sums"]


@lru_cache(maxsize=2)  # the runs of a corpus mostly share n: draw once per length
def bootstrap_weights(n, samples, seed):
    """[samples x n] float64: how many times sample s drew position p."""
    idx = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)
    cells = (idx + (np.arange(samples, dtype=np.int64) * n)[:, None]).ravel()
    weights = np.bincount(cells, minlength=samples * n).reshape(samples, n).astype(np.float64)
    weights.flags.writeable = False  # cached: shared between calls
    return weights


@lru_cache(maxsize=2)
def ar_weights(n, trials, seed):
    """[trials x n] float64: 1 where trial r swaps position p."""
    mask = np.random.default_rng(seed).integers(2, size=(trials, n), dtype=bool).astype(np.float64)
    mask.flags.writeable = False
    return mask


def resample_sums(statistics, samples, trials, seed):
    """[(1 + samples + trials) x columns] sums of ``statistics`` [n x columns]: the observed row,
    then the bootstrap samples, then the AR trials (the order of ``kinds``)."""
    statistics = np.asarray(statistics, dtype=np.float64)
    n = statistics.shape[0]
    return np.vstack(
        [
            statistics.sum(axis=0, keepdims=True),
            bootstrap_weights(n, samples, seed) @ statistics,
            ar_weights(n, trials, seed) @ statistics,
        ]
    )


def kinds(samples, trials):
    """(kind, sample) of each row of resample_sums."""
    return (["observed"] + ["bootstrap"] * samples + ["ar"] * trials, [0] + list(range(samples)) + list(range(trials)))


def _udf_resample_sums(statistics, samples, trials, seed):
    kind_lists, sample_lists, sum_rows = [], [], []
    args = zip(samples.to_pylist(), trials.to_pylist(), seed.to_pylist())
    for k, (b, r, s) in enumerate(args):
        lists = statistics[k]
        if not lists.is_valid or None in (b, r, s):
            kind_lists.append(None)
            sample_lists.append(None)
            sum_rows.append(None)
            continue
        sentences = lists.values  # one list of statistics per sentence (a slice: flatten() respects it)
        widths = sentences.value_lengths().to_numpy(zero_copy_only=False)
        values = sentences.flatten()
        if sentences.null_count or len(set(widths.tolist())) > 1:
            raise ValueError("srlens_resample_sums: every sentence needs the same number of statistics, none NULL")
        width = int(widths[0]) if len(widths) else 0
        matrix = values.to_numpy(zero_copy_only=False).reshape(len(widths), width)  # NULL: NaN
        # A statistic NULL in every sentence (the reference-based ones of a reference-free run) sums
        # to NULL, as SQL's sum does; NULL in only some sentences is an error.
        null = np.isnan(matrix)
        absent = null.all(axis=0) if len(widths) else np.zeros(width, dtype=bool)
        if null[:, ~absent].any():
            raise ValueError("srlens_resample_sums: a statistic is NULL in some sentences and not in others")
        sums = resample_sums(np.where(null, 0.0, matrix), b, r, s)
        sums[:, absent] = np.nan
        kind, sample = kinds(b, r)
        kind_lists.append(kind)
        sample_lists.append(sample)
        sum_rows.append(sums)
    return _struct(kind_lists, sample_lists, sum_rows)


def _struct(kind_lists, sample_lists, sum_rows):
    """STRUCT(kind VARCHAR[], sample INTEGER[], sums DOUBLE[][]) per row, NULL where sum_rows is None."""
    valid = [m is not None for m in sum_rows]
    matrices = [m if m is not None else np.zeros((0, 0)) for m in sum_rows]
    rows_per = np.array([m.shape[0] for m in matrices], dtype=np.int64)
    outer = np.concatenate([[0], np.cumsum(rows_per)]).astype(np.int32)
    widths = np.concatenate([np.full(m.shape[0], m.shape[1], dtype=np.int64) for m in matrices] or [[]])
    inner = np.concatenate([[0], np.cumsum(widths)]).astype(np.int32)
    values = np.concatenate([m.ravel() for m in matrices] or [np.zeros(0)])
    # NaN only marks a statistic NULL in every sentence (sums of numbers are never NaN): NULL in SQL
    cells = pa.array(values, from_pandas=True)
    sums = pa.ListArray.from_arrays(pa.array(outer), pa.ListArray.from_arrays(pa.array(inner), cells))
    kind = pa.array([k or [] for k in kind_lists], type=pa.list_(pa.string()))
    sample = pa.array([s or [] for s in sample_lists], type=pa.list_(pa.int32()))
    return pa.StructArray.from_arrays(
        [kind, sample, sums], names=["kind", "sample", "sums"], mask=pa.array([not v for v in valid], type=pa.bool_())
    )


# --------------------------------------------------------------------------
# The paired tests of pairwise_significance, one corpus per call: every pair costs O(B + R)
# arithmetic on its two lists' small arrays (no per-pair, per-sample rows in SQL).

PAIR_TEST_FIELDS = ("samples", "more_extreme", "ci_low", "ci_high", "trials", "extreme")


@lru_cache(maxsize=1)  # on first use: find_library runs ldconfig, not for every process that imports the UDFs
def _libm_fma():
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.fma.restype, libm.fma.argtypes = ctypes.c_double, [ctypes.c_double] * 3
    return np.frompyfunc(libm.fma, 3, 1)


def quantile_cont(values, q):
    """DuckDB's quantile_cont(x, q) of each row of ``values`` [rows x samples] over its non-NaN
    entries, to the bit: RN = (count - 1) * q, d = RN - floor(RN), lo * (1 - d) + hi * d between
    the order statistics at floor(RN) and ceil(RN). DuckDB 2.0's x86-64 build fuses that into
    fma(lo, 1 - d, hi * d), so libm's fma does here too (plain numpy differs in the last bit);
    NaN where a row has no value. numpy's percentile interpolates differently."""
    ordered = np.sort(values, axis=1)  # NaN last
    count = (~np.isnan(values)).sum(axis=1)
    rn = (count - 1) * q
    low, high = np.floor(rn).astype(np.int64), np.ceil(rn).astype(np.int64)
    rows = np.arange(len(values))
    out = ordered[rows, np.maximum(low, 0)]
    mixed = np.flatnonzero(low != high)
    if len(mixed):
        lo, hi, d = out[mixed], ordered[mixed, high[mixed]], rn[mixed] - low[mixed]
        out[mixed] = _libm_fma()(lo, 1 - d, hi * d).astype(np.float64)
    return np.where(count > 0, out, np.nan)


def list_metrics(sums, columns):
    """The metrics of macros/significance.sql (corpus BLEU, micro DEA, then each score's mean, then
    sacrebleu's corpus BLEU and chrF) from summed statistics [..., columns] (NaN: NULL), with the same
    IEEE operations as its SQL (the last columns are sacrebleu's statistics, udfs/mt_scores.py)."""
    flat = sums.reshape(-1, columns)
    bleu = bleu_from_stat_arrays(*(flat[:, c] for c in range(10)))
    ratio_end = columns - len(MT_BLEU_FIELDS) - len(MT_CHRF_FIELDS)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = [np.where(flat[:, c + 1] == 0, np.nan, flat[:, c] / flat[:, c + 1]) for c in range(10, ratio_end, 2)]
    mt_bleu = flat[:, ratio_end : ratio_end + len(MT_BLEU_FIELDS)]
    mt_chrf = flat[:, ratio_end + len(MT_BLEU_FIELDS) :]
    sacrebleu_bleu = np.where(np.isnan(mt_bleu).any(axis=1), np.nan, mt_bleu_from_stats(np.nan_to_num(mt_bleu), False))
    chrf = np.where(np.isnan(mt_chrf).any(axis=1), np.nan, chrf_from_stat_arrays(np.nan_to_num(mt_chrf)))
    return np.stack([bleu, *ratios, sacrebleu_bleu, chrf], axis=1).reshape(*sums.shape[:-1], -1)


def pair_tests(side_a, side_b, observed, bootstrap, observed_sums, ar_sums):
    """SPEC 12's counts and interval of each ordered pair (side_a[p], side_b[p]) of lists, given per
    list its observed metric values [metrics], bootstrap metric values [B x metrics], observed sums
    [columns] and AR trial sums [R x columns] (NaN: NULL). Returns {field: [pairs x metrics]}, the
    fields of PAIR_TEST_FIELDS, as pairwise_significance's SQL computed them:
    bootstrap d_s = a_s - b_s over the samples defined on both sides; more_extreme counts |d_s| -
    mean|d| > |delta|; ci_low, ci_high their quantile_cont 0.025, 0.975. AR trial r: a's sums
    become oa - ra + rb and b's ob - rb + ra; extreme counts |a_r - b_r| >= |delta|. The AR figures
    of (b, a) equal those of (a, b) (same two lists): computed once per unordered pair."""
    metrics = observed.shape[1]
    out = {f: np.full((len(side_a), metrics), np.nan) for f in PAIR_TEST_FIELDS}
    delta = observed[side_a] - observed[side_b]
    ar = {}
    for i in np.unique(side_a):
        rows = np.flatnonzero(side_a == i)
        partners = side_b[rows]
        d = bootstrap[i][None] - bootstrap[partners]  # [pairs x B x metrics]
        defined = ~np.isnan(d)
        out["samples"][rows] = defined.sum(axis=1)
        with np.errstate(invalid="ignore"):
            mean_abs = np.nansum(np.abs(d), axis=1) / defined.sum(axis=1)
            extreme = np.abs(d) - mean_abs[:, None] > np.abs(delta[rows])[:, None]
        out["more_extreme"][rows] = extreme.sum(axis=1)
        flat = d.transpose(0, 2, 1).reshape(-1, d.shape[1])  # [pairs * metrics x B]
        out["ci_low"][rows] = quantile_cont(flat, 0.025).reshape(len(rows), metrics)
        out["ci_high"][rows] = quantile_cont(flat, 0.975).reshape(len(rows), metrics)
        # AR for the partners with a larger index (the others' come from their own turn)
        later = partners[partners > i]
        if len(later):
            columns = observed_sums.shape[1]
            ra, rb = ar_sums[i][None], ar_sums[later]
            a = list_metrics(observed_sums[i] - ra + rb, columns)
            b = list_metrics(observed_sums[later][:, None] - rb + ra, columns)
            d_r = a - b  # [pairs x R x metrics]
            d_obs = observed[i] - observed[later]
            with np.errstate(invalid="ignore"):
                hits = (np.abs(d_r) >= np.abs(d_obs)[:, None]).sum(axis=1)
            trials = (~np.isnan(d_r)).sum(axis=1)
            for k, j in enumerate(later):
                ar[(i, j)] = (trials[k], hits[k])
    for p, (i, j) in enumerate(zip(side_a, side_b)):
        out["trials"][p], out["extreme"][p] = ar[(min(i, j), max(i, j))]
    return out


def _udf_pair_tests(side_a, side_b, observed, bootstrap, observed_sums, ar_sums):
    tests, pairs = [], [0]
    for k in range(len(side_a)):
        a = side_a[k].values.to_numpy(zero_copy_only=False).astype(np.int64)
        b = side_b[k].values.to_numpy(zero_copy_only=False).astype(np.int64)
        lists = len(observed[k].values)
        obs = _numpy(observed[k].values, lists, -1)
        osums = _numpy(observed_sums[k].values, lists, -1)
        boot = _numpy(bootstrap[k].values, lists, -1, obs.shape[1])
        ars = _numpy(ar_sums[k].values, lists, -1, osums.shape[1])
        tests.append(pair_tests(a, b, obs, boot, osums, ars))
        pairs.append(pairs[-1] + len(a))
    # one list of M values per pair and field (NaN: NULL), one list of pairs per corpus
    fields = []
    for f in PAIR_TEST_FIELDS:
        values = np.concatenate([t[f].ravel() for t in tests] or [np.zeros(0)])
        metrics = tests[0][f].shape[1] if tests else 0
        offsets = pa.array(np.arange(pairs[-1] + 1, dtype=np.int32) * metrics)
        fields.append(pa.ListArray.from_arrays(offsets, pa.array(values, from_pandas=True)))
    struct = pa.StructArray.from_arrays(fields, names=list(PAIR_TEST_FIELDS))
    return pa.ListArray.from_arrays(pa.array(pairs, type=pa.int32()), struct)


def _numpy(nested, *shape):
    """A (sliced) nested list array as a float64 array of ``shape`` (NULL: NaN)."""
    while pa.types.is_list(nested.type):
        nested = nested.flatten()
    return nested.to_numpy(zero_copy_only=False).astype(np.float64).reshape(*shape)


def register(con):
    """``srlens_resample_sums(statistics DOUBLE[][], samples, trials, seed) -> STRUCT(kind VARCHAR[],
    sample INTEGER[], sums DOUBLE[][])``."""
    con.create_function(
        "srlens_resample_sums",
        _udf_resample_sums,
        ["DOUBLE[][]", "BIGINT", "BIGINT", "BIGINT"],
        "STRUCT(kind VARCHAR[], sample INTEGER[], sums DOUBLE[][])",
        type="arrow",
        null_handling="special",
        side_effects=False,
    )
    con.create_function(
        "srlens_pair_tests",
        _udf_pair_tests,
        ["INTEGER[]", "INTEGER[]", "DOUBLE[][]", "DOUBLE[][][]", "DOUBLE[][]", "DOUBLE[][][]"],
        "STRUCT(" + ", ".join(f"{f} DOUBLE[]" for f in PAIR_TEST_FIELDS) + ")[]",
        type="arrow",
        null_handling="special",
        side_effects=False,
    )
