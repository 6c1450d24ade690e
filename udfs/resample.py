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
reference-based ones of a reference-free run, issue 17) gives NULL sums, as SQL's sum does.
"""

from functools import lru_cache

import numpy as np
import pyarrow as pa

__all__ = ["ar_weights", "bootstrap_weights", "register", "resample_sums"]


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
