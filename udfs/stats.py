"""Significance tests of SPEC section 10 as DuckDB UDFs, computed by scipy.

SQL does the joins and aggregations and hands each test its two samples as
lists (``list(x order by sent_idx) filter (...)``); these functions only run
the test. One call per (submission, pair) row, so the Python overhead is per
test, not per sentence.

* ``srlens_spearman(xs DOUBLE[], ys DOUBLE[]) -> STRUCT(n, rho, p_value)``:
  ``scipy.stats.spearmanr(xs, ys)`` (average ranks for ties, two-sided p from
  the t distribution with n - 2 degrees of freedom). xs[i] and ys[i] are one
  observation; the caller has already dropped incomplete pairs. rho and p are
  NULL when n < 3 (with two points rho is +-1 by construction and scipy's p is
  NaN) or when either sample is constant (rho undefined; scipy returns NaN and
  warns). We decide those cases ourselves instead of calling scipy, so no
  warning is raised inside DuckDB's worker threads.
* ``srlens_mannwhitney(xs DOUBLE[], ys DOUBLE[]) -> STRUCT(n1, n2, u, p_value)``:
  ``scipy.stats.mannwhitneyu(xs, ys, alternative='two-sided')`` with scipy's
  defaults (method 'auto': exact when one sample has at most 8 values and
  there are no ties, else the normal approximation with tie and continuity
  correction). u is the U statistic of the FIRST sample, xs. u and p are NULL
  when a sample is empty (scipy returns NaN).

A NULL list gives a NULL struct.
"""

import math

import numpy as np
import pyarrow as pa
from scipy import stats

SPEARMAN_STRUCT = pa.struct([("n", pa.int64()), ("rho", pa.float64()), ("p_value", pa.float64())])
SPEARMAN_SQL_TYPE = "STRUCT(n BIGINT, rho DOUBLE, p_value DOUBLE)"
MANNWHITNEY_STRUCT = pa.struct([("n1", pa.int64()), ("n2", pa.int64()), ("u", pa.float64()),
                                ("p_value", pa.float64())])
MANNWHITNEY_SQL_TYPE = "STRUCT(n1 BIGINT, n2 BIGINT, u DOUBLE, p_value DOUBLE)"


def _finite_or_none(value):
    value = float(value)
    return value if math.isfinite(value) else None


def spearman(xs, ys):
    """(n, rho, p_value) of paired samples; rho, p None when undefined (see module doc)."""
    if len(xs) != len(ys):
        raise ValueError(f"spearman: samples of different lengths ({len(xs)} and {len(ys)})")
    n = len(xs)
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if n < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return n, None, None
    result = stats.spearmanr(x, y)
    return n, _finite_or_none(result.statistic), _finite_or_none(result.pvalue)


def mannwhitney(xs, ys):
    """(n1, n2, u, p_value), two-sided, u of the first sample; u, p None when a sample is empty."""
    n1, n2 = len(xs), len(ys)
    if n1 == 0 or n2 == 0:
        return n1, n2, None, None
    result = stats.mannwhitneyu(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float),
                                alternative="two-sided")
    return n1, n2, _finite_or_none(result.statistic), _finite_or_none(result.pvalue)


def _struct(rows, struct_type, nulls):
    columns = list(zip(*rows)) if rows else [()] * struct_type.num_fields
    return pa.StructArray.from_arrays(
        [pa.array(col, type=struct_type.field(i).type) for i, col in enumerate(columns)],
        fields=list(struct_type), mask=pa.array(nulls, type=pa.bool_()))


def _apply(function, struct_type, xs_column, ys_column):
    xs_rows, ys_rows = xs_column.to_pylist(), ys_column.to_pylist()
    nulls = [x is None or y is None for x, y in zip(xs_rows, ys_rows)]
    # A NULL element inside a list would be a missing value the caller forgot to filter out.
    for x, y, null in zip(xs_rows, ys_rows, nulls):
        if not null and (None in x or None in y):
            raise ValueError(f"{function.__name__}: NULL inside a sample; filter missing values in SQL")
    placeholder = (None,) * struct_type.num_fields  # under the NULL mask
    rows = [placeholder if null else function(x, y) for x, y, null in zip(xs_rows, ys_rows, nulls)]
    return _struct(rows, struct_type, nulls)


def spearman_arrow(xs, ys):
    return _apply(spearman, SPEARMAN_STRUCT, xs, ys)


def mannwhitney_arrow(xs, ys):
    return _apply(mannwhitney, MANNWHITNEY_STRUCT, xs, ys)


def register(con):
    con.create_function("srlens_spearman", spearman_arrow, ["DOUBLE[]", "DOUBLE[]"], SPEARMAN_SQL_TYPE,
                        type="arrow", null_handling="special")
    con.create_function("srlens_mannwhitney", mannwhitney_arrow, ["DOUBLE[]", "DOUBLE[]"],
                        MANNWHITNEY_SQL_TYPE, type="arrow", null_handling="special")
