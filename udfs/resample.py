"""Resampling draws of SPEC section 12 as DuckDB UDFs (numpy, exactly as sacrebleu draws them).

The draws depend only on (n, samples, seed), never on the data, so SQL asks for them once per
distinct list length n and then weights the per-sentence statistics with a join + group by
(models/intermediate/int_resample_weights.sql and the *_resample_sums models).

* ``bootstrap_counts(n, samples, seed)``: ``idx = numpy.random.default_rng(seed).choice(n,
  size=(samples, n), replace=True)`` (sacrebleu's paired_bs), returned as a multiplicity
  table: for every sample s and list position p (0-based) drawn at least once, how many times
  idx[s] holds p. Summing ``count * statistic`` over a sample's positions is summing the
  statistics of the resampled list.
* ``ar_swaps(n, trials, seed)``: ``mask = numpy.random.default_rng(seed).integers(2,
  size=(trials, n), dtype=bool)`` (approximate randomization), returned as the (trial,
  position) cells where mask is true: the sentences whose statistics swap in that trial.

In SQL each returns one STRUCT of parallel lists (sample/trial, position, count) that the
caller unnests; NULL arguments give NULL.
"""

import numpy as np
import pyarrow as pa

__all__ = ["bootstrap_counts", "ar_swaps", "register"]


def bootstrap_counts(n, samples, seed):
    """(sample, position, count) arrays of the bootstrap multiplicities, sample-major order."""
    if n <= 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    idx = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)
    cells = (idx + (np.arange(samples, dtype=np.int64) * n)[:, None]).ravel()
    counts = np.bincount(cells, minlength=samples * n)
    drawn = np.flatnonzero(counts)
    return drawn // n, drawn % n, counts[drawn]


def ar_swaps(n, trials, seed):
    """(trial, position) arrays of the swapped cells, trial-major order."""
    if n <= 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    mask = np.random.default_rng(seed).integers(2, size=(trials, n), dtype=bool)
    trial, position = np.nonzero(mask)
    return trial, position


def _lists(rows, names):
    """One StructArray of int32 lists from per-row tuples of numpy arrays (None = NULL row)."""
    columns = []
    for k, name in enumerate(names):
        values = [np.zeros(0, dtype=np.int32) if row is None else row[k].astype(np.int32) for row in rows]
        offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int32)
        flat = np.concatenate(values) if values else np.zeros(0, dtype=np.int32)
        columns.append(pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, type=pa.int32())))
    nulls = pa.array([row is None for row in rows], type=pa.bool_())
    return pa.StructArray.from_arrays(columns, names=list(names), mask=nulls)


def _arguments(n, samples, seed):
    return zip(n.to_pylist(), samples.to_pylist(), seed.to_pylist())


def _udf_bootstrap_counts(n, samples, seed):
    rows = [None if None in args else bootstrap_counts(*args) for args in _arguments(n, samples, seed)]
    return _lists(rows, ("sample", "position", "count"))


def _udf_ar_swaps(n, trials, seed):
    rows = [None if None in args else ar_swaps(*args) for args in _arguments(n, trials, seed)]
    return _lists(rows, ("trial", "position"))


def register(con):
    """``srlens_bootstrap_counts(n, samples, seed) -> STRUCT(sample INTEGER[], position INTEGER[],
    count INTEGER[])`` and ``srlens_ar_swaps(n, trials, seed) -> STRUCT(trial INTEGER[],
    position INTEGER[])``."""
    con.create_function("srlens_bootstrap_counts", _udf_bootstrap_counts, ["BIGINT", "BIGINT", "BIGINT"],
                        "STRUCT(sample INTEGER[], position INTEGER[], count INTEGER[])",
                        type="arrow", null_handling="special")
    con.create_function("srlens_ar_swaps", _udf_ar_swaps, ["BIGINT", "BIGINT", "BIGINT"],
                        "STRUCT(trial INTEGER[], position INTEGER[])",
                        type="arrow", null_handling="special")
