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

* ``srlens_spearman_pairs(samples DOUBLE[][]) -> STRUCT(a, b, n, rho, p_value)[]``: for every pair
  a < b of a row's samples (1-based positions; lists of one length, NULL where a sentence has no
  value), the values of ``srlens_spearman`` on the sentences where both have a value, bit for bit
  (metric_correlations: one row per run, its variables' lists, so each list crosses into Python
  once and is ranked once per row). Each pair's ranks are ``scipy.stats.rankdata`` of its
  pairwise complete values and its rho scipy's own step (``np.corrcoef`` of the ranks); the t
  statistic and two-sided p-value of the whole batch come from one vectorized call of the function
  scipy uses (``special.stdtr``), with scipy's formula. Same NULL rules as ``srlens_spearman``.

* ``srlens_system_correlation(systems STRUCT(x DOUBLE, y DOUBLE, outlier BOOLEAN)[]) -> STRUCT(...)``:
  system-level correlation of a metric x with a human score y, one element per system
  (order does not matter): n and ``scipy.stats.pearsonr``, ``spearmanr`` and ``kendalltau`` (tau-b,
  method 'auto') on all systems, then n and ``pearsonr`` on the systems whose ``outlier`` is false
  (the Mathur et al. 2020 rule, decided in SQL). A coefficient and its p are NULL when n < 3 or either
  side is constant (scipy would return NaN and warn).

A NULL list gives a NULL struct.
"""

import math

import numpy as np
import pyarrow as pa

# scipy is imported in the functions that use it: importing scipy.stats takes about a second, and every
# dbt process imports this module before its first node (udfs/plugin.py), whether it calls them or not.

SPEARMAN_STRUCT = pa.struct([("n", pa.int64()), ("rho", pa.float64()), ("p_value", pa.float64())])
SPEARMAN_SQL_TYPE = "STRUCT(n BIGINT, rho DOUBLE, p_value DOUBLE)"
MANNWHITNEY_STRUCT = pa.struct([("n1", pa.int64()), ("n2", pa.int64()), ("u", pa.float64()), ("p_value", pa.float64())])
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
    from scipy import stats

    result = stats.spearmanr(x, y)
    return n, _finite_or_none(result.statistic), _finite_or_none(result.pvalue)


def _spearman_p(n, rho):
    """Two-sided p-values of Spearman's rho over arrays of n and rho (NaN where rho is NaN): scipy's
    t statistic and ``special.stdtr``, one vectorized call."""
    from scipy import special

    dof = (n - 2).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = rho * np.sqrt((dof / ((rho + 1.0) * (1.0 - rho))).clip(0))
        return 2 * special.stdtr(dof, -np.abs(t))


def mannwhitney(xs, ys):
    """(n1, n2, u, p_value), two-sided, u of the first sample; u, p None when a sample is empty."""
    n1, n2 = len(xs), len(ys)
    if n1 == 0 or n2 == 0:
        return n1, n2, None, None
    from scipy import stats

    result = stats.mannwhitneyu(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), alternative="two-sided")
    return n1, n2, _finite_or_none(result.statistic), _finite_or_none(result.pvalue)


SYSTEM_CORRELATION_FIELDS = (
    "systems",
    "pearson_r",
    "pearson_p",
    "spearman_rho",
    "spearman_p",
    "kendall_tau",
    "kendall_p",
    "systems_no_outliers",
    "pearson_r_no_outliers",
    "pearson_p_no_outliers",
)
SYSTEM_CORRELATION_STRUCT = pa.struct(
    [(name, pa.int64() if name.startswith("systems") else pa.float64()) for name in SYSTEM_CORRELATION_FIELDS]
)
SYSTEM_CORRELATION_SQL_TYPE = (
    "STRUCT("
    + ", ".join(f"{name} {'BIGINT' if name.startswith('systems') else 'DOUBLE'}" for name in SYSTEM_CORRELATION_FIELDS)
    + ")"
)


def _defined(x, y):
    """A correlation of these samples exists: 3 points or more, neither side constant."""
    return len(x) >= 3 and not np.all(x == x[0]) and not np.all(y == y[0])


def system_correlation(xs, ys, outliers):
    """The SYSTEM_CORRELATION_FIELDS of one (campaign, corpus, metric, criterion); see the module doc."""
    from scipy import stats

    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    keep = ~np.asarray(outliers, dtype=bool)
    row = {"systems": len(x), "systems_no_outliers": int(keep.sum())}
    if _defined(x, y):
        for name, test in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
            result = test(x, y)
            statistic = {"pearson": "pearson_r", "spearman": "spearman_rho", "kendall": "kendall_tau"}[name]
            row[statistic], row[f"{name}_p"] = _finite_or_none(result.statistic), _finite_or_none(result.pvalue)
    if _defined(x[keep], y[keep]):
        result = stats.pearsonr(x[keep], y[keep])
        row["pearson_r_no_outliers"] = _finite_or_none(result.statistic)
        row["pearson_p_no_outliers"] = _finite_or_none(result.pvalue)
    return tuple(row.get(name) for name in SYSTEM_CORRELATION_FIELDS)


def system_correlation_arrow(systems):
    rows = systems.to_pylist()
    nulls = [r is None for r in rows]
    placeholder = (None,) * len(SYSTEM_CORRELATION_FIELDS)
    result = []
    for r in rows:
        if r is None:
            result.append(placeholder)
            continue
        if any(s is None or s["x"] is None or s["y"] is None or s["outlier"] is None for s in r):
            raise ValueError("srlens_system_correlation: NULL inside a sample; filter missing values in SQL")
        result.append(system_correlation([s["x"] for s in r], [s["y"] for s in r], [s["outlier"] for s in r]))
    return _struct(result, SYSTEM_CORRELATION_STRUCT, nulls)


def _struct(rows, struct_type, nulls):
    columns = list(zip(*rows)) if rows else [()] * struct_type.num_fields
    return pa.StructArray.from_arrays(
        [pa.array(col, type=struct_type.field(i).type) for i, col in enumerate(columns)],
        fields=list(struct_type),
        mask=pa.array(nulls, type=pa.bool_()),
    )


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


def _list_values(column):
    """A list column as (values with NULL -> NaN, offsets): numpy views of the arrow buffers."""
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if column.null_count:
        raise ValueError("spearman: NULL list; pass [] for an empty sample")
    values = column.values.to_numpy(zero_copy_only=False)  # a NULL becomes NaN
    return values, column.offsets.to_numpy()


def _average_ranks(values):
    """``scipy.stats.rankdata(values)`` (ties get the mean of their ranks) without its checks: an
    average rank is a whole number or a half, exact in a double, so this gives the same values."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    counts = np.diff(np.r_[starts, len(values)])
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(starts + (counts + 1) / 2, counts)
    return ranks


def _corrcoef_1_0(x_centred, y_centred):
    """``np.corrcoef(np.vstack((x, y)))[1, 0]`` (scipy.stats.spearmanr's step on the ranks) given x and
    y less their means (numpy's row means are the same sums): numpy's own 2 x n product, then its
    scaling, division by the standard deviations and clipping of that one element in its order (the
    same IEEE operations on the same doubles, so the same bits), without its argument handling."""
    rows = np.empty((2, len(x_centred)))
    rows[0], rows[1] = x_centred, y_centred
    c = np.dot(rows, rows.T.conj())
    scale = np.true_divide(1, rows.shape[1] - 1)
    rho = c[1, 0] * scale / math.sqrt(c[1, 1] * scale) / math.sqrt(c[0, 0] * scale)
    return min(max(rho, -1.0), 1.0)


SPEARMAN_PAIRS_STRUCT = pa.struct([("a", pa.int32()), ("b", pa.int32()), *SPEARMAN_STRUCT])
SPEARMAN_PAIRS_SQL_TYPE = "STRUCT(a INTEGER, b INTEGER, n BIGINT, rho DOUBLE, p_value DOUBLE)[]"


def spearman_pairs_arrow(samples_column):
    """Per row, a list of k samples (lists of one length, NULL: no value): for each pair a < b of them
    (1-based, in the order a, b), (a, b, n, rho, p_value) on the sentences where both have a value."""
    samples_column = samples_column.combine_chunks() if isinstance(samples_column, pa.ChunkedArray) else samples_column
    if samples_column.null_count:
        raise ValueError("spearman: NULL list of samples")
    values, offsets = _list_values(samples_column.values)
    samples = samples_column.offsets.to_numpy()
    pairs, a, b, n, rho = [], [], [], [], []
    for first, last in zip(samples[:-1], samples[1:]):
        lists = [values[offsets[k] : offsets[k + 1]] for k in range(first, last)]
        if len({len(x) for x in lists}) > 1:
            raise ValueError("spearman: samples of different lengths in one row")
        # Each sample meets every other one of its row, mostly with the same values (no NULLs on
        # either side): its centred ranks are computed once per row and values, not once per pair.
        centred = {}
        for i in range(len(lists)):
            for j in range(i + 1, len(lists)):
                a.append(i + 1)
                b.append(j + 1)
                n_ij, rho_ij = _spearman_rho(lists[i], lists[j], centred)
                n.append(n_ij)
                rho.append(rho_ij)
        pairs.append(len(lists) * (len(lists) - 1) // 2)
    n, rho = np.array(n, dtype=np.int64), np.array(rho, dtype=np.float64)
    p = _spearman_p(n, rho)
    results = pa.StructArray.from_arrays(
        [
            pa.array(a, type=pa.int32()),
            pa.array(b, type=pa.int32()),
            pa.array(n),
            pa.array(rho, mask=~np.isfinite(rho)),
            pa.array(p, mask=~np.isfinite(p)),
        ],
        fields=list(SPEARMAN_PAIRS_STRUCT),
    )
    return pa.ListArray.from_arrays(pa.array(np.r_[0, np.cumsum(pairs)].astype(np.int32)), results)


def _spearman_rho(xs, ys, centred):
    """(n, rho) of the pairs of xs[i], ys[i] where neither is NaN; rho NaN when undefined (module doc).
    ``centred`` keeps the centred ranks of the samples seen, by their values."""

    def centred_ranks(values):
        key = values.tobytes()
        if key not in centred:
            ranks = _average_ranks(values)
            centred[key] = ranks - ranks.mean()
        return centred[key]

    both = ~(np.isnan(xs) | np.isnan(ys))
    x, y = (xs, ys) if both.all() else (xs[both], ys[both])
    if len(x) >= 3 and (x != x[0]).any() and (y != y[0]).any():
        return len(x), _corrcoef_1_0(centred_ranks(x), centred_ranks(y))
    return len(x), np.nan


def register(con):
    con.create_function(
        "srlens_spearman",
        spearman_arrow,
        ["DOUBLE[]", "DOUBLE[]"],
        SPEARMAN_SQL_TYPE,
        type="arrow",
        null_handling="special",
    )
    con.create_function(
        "srlens_spearman_pairs",
        spearman_pairs_arrow,
        ["DOUBLE[][]"],
        SPEARMAN_PAIRS_SQL_TYPE,
        type="arrow",
        null_handling="special",
    )
    con.create_function(
        "srlens_system_correlation",
        system_correlation_arrow,
        ["STRUCT(x DOUBLE, y DOUBLE, outlier BOOLEAN)[]"],
        SYSTEM_CORRELATION_SQL_TYPE,
        type="arrow",
        null_handling="special",
    )
    con.create_function(
        "srlens_mannwhitney",
        mannwhitney_arrow,
        ["DOUBLE[]", "DOUBLE[]"],
        MANNWHITNEY_SQL_TYPE,
        type="arrow",
        null_handling="special",
    )
