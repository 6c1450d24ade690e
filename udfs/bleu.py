"""Sentence and corpus BLEU as DuckDB UDFs, bit-identical to nltk.

Metric: BLEU-4, uniform weights (0.25 each), smoothing method 2 of Chen and
Cherry (2014), single reference, exactly as computed by
``nltk.translate.bleu_score.sentence_bleu([ref], hyp,
smoothing_function=SmoothingFunction().method2)`` / ``corpus_bleu``.
Tokens are compared as given; callers pass lower-cased lemmas.

nltk's ``sentence_bleu`` is literally ``corpus_bleu`` of one pair, and
``corpus_bleu`` only ever looks at per-pair sums of ten integers (hypothesis
length, closest reference length, and for n = 1..4 the clipped n-gram matches
and the n-gram totals). So we split the computation the same way:

* ``bleu_stats`` -> the ten integers of one pair (``srlens_bleu_stats`` in SQL),
* ``bleu_from_stats`` -> BLEU from one pair's or summed statistics
  (``srlens_bleu_from_stats`` in SQL, fed with ``sum()`` for corpus BLEU).

nltk quirks reproduced on purpose (see ``bleu_stats``/``bleu_from_stats``):

* the n-gram total is ``max(1, hyp_len - n + 1)``, so a hypothesis shorter
  than n (including the empty one) still contributes 1 to the corpus total
  of every order;
* zero unigram matches (empty hypothesis, empty reference, disjoint
  vocabularies) short-circuits to 0 before any smoothing;
* smoothing method 2 adds 1 to numerator and denominator of orders 2..4 only,
  so a perfect 1-token match scores 0.5 ** 0.75, not 1.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import chain

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# The nltk version whose arithmetic this module reproduces bit for bit: declared with the build var
# that records it in the marts, so that the command line reads it without pyarrow.
from srlens.build_vars import NLTK_COMPAT_VERSION

__all__ = [
    "NLTK_COMPAT_VERSION",
    "STATS_FIELDS",
    "bleu_stats",
    "bleu_from_stats",
    "bleu_from_stat_arrays",
    "sentence_bleu",
    "register",
]


MAX_N = 4

# Field order of the tuple returned by bleu_stats and of the SQL struct.
STATS_FIELDS = (
    "hyp_len", "ref_len",
    "m1", "m2", "m3", "m4",
    "t1", "t2", "t3", "t4",
)  # fmt: skip


def _ngram_counts(tokens: Sequence[str]) -> Counter:
    """Counts of all 1..4-grams of ``tokens`` as tuples (``len(gram)`` is n).

    One Counter for all orders is built in C and is faster than one per order.
    """
    t = tokens
    return Counter(chain(zip(t), zip(t, t[1:]), zip(t, t[1:], t[2:]), zip(t, t[1:], t[2:], t[3:])))


def bleu_stats(hypothesis: Sequence[str], reference: Sequence[str]) -> tuple:
    """Sufficient statistics of one (hypothesis, reference) pair.

    Returns ``(hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4)``: ``m_n`` is
    nltk's ``modified_precision(...).numerator`` (clipped n-gram matches) and
    ``t_n`` its ``.denominator``, i.e. ``max(1, hyp_len - n + 1)``. These are
    the integers nltk's ``corpus_bleu`` adds into ``p_numerators`` /
    ``p_denominators`` (its Fractions are built with ``_normalize=False``, so
    nothing is reduced before summing).  With a single reference the
    "closest reference length" is just ``len(reference)``.
    """
    hyp = hypothesis if isinstance(hypothesis, (list, tuple)) else list(hypothesis)
    ref = reference if isinstance(reference, (list, tuple)) else list(reference)
    hyp_len = len(hyp)
    matches = [0] * MAX_N
    if hyp and ref:
        hyp_counts, ref_counts = _ngram_counts(hyp), _ngram_counts(ref)
        for gram in hyp_counts.keys() & ref_counts.keys():
            h, r = hyp_counts[gram], ref_counts[gram]
            matches[len(gram) - 1] += h if h < r else r
    totals = [max(1, hyp_len - n + 1) for n in range(1, MAX_N + 1)]
    return (hyp_len, len(ref), *matches, *totals)


def bleu_from_stats(hyp_len: int, ref_len: int, matches: Sequence[int], totals: Sequence[int]) -> float:
    """BLEU-4 (Chen & Cherry method 2) from one pair's or summed statistics.

    The float operations mirror nltk 3.10.4 ``corpus_bleu`` step by step,
    which is what makes the result bit-identical (not merely close):

    * return 0 when there is no unigram match, before smoothing or logs;
    * p_1 = m1 / t1 unsmoothed, p_n = (m_n + 1) / (t_n + 1) for n >= 2, each an
      int / int true division (correctly rounded, like ``float(Fraction)``);
    * ``math.fsum`` (exact sum, not ``sum``) of ``0.25 * math.log(p_n)``, then
      ``math.exp``; use ``math`` (libm), not numpy, whose log/exp may differ in
      the last ulp;
    * brevity penalty ``math.exp(1 - ref_len / hyp_len)`` if
      ``hyp_len <= ref_len`` (0 if ``hyp_len == 0``, else 1) multiplied last.
    """
    m1 = matches[0]
    if m1 == 0:
        return 0.0
    if hyp_len > ref_len:
        bp = 1.0
    elif hyp_len == 0:
        bp = 0.0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    logs = [0.25 * math.log(m1 / totals[0])]
    for m, t in zip(matches[1:MAX_N], totals[1:MAX_N]):
        logs.append(0.25 * math.log((m + 1) / (t + 1)))
    return bp * math.exp(math.fsum(logs))


def _bleu_from_flat(stats: Sequence[int]) -> float:
    return bleu_from_stats(stats[0], stats[1], stats[2:6], stats[6:10])


def sentence_bleu(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    """nltk ``sentence_bleu([reference], hypothesis, smoothing=method2)``."""
    return _bleu_from_flat(bleu_stats(hypothesis, reference))


# --------------------------------------------------------------------------
# DuckDB arrow UDFs. Each receives whole batches as pyarrow (Chunked)Arrays,
# converts them to Python lists once and returns one pyarrow array.
# null_handling='special': the functions see NULL rows and return NULL for
# them themselves; an empty list is a valid (empty) sentence.

STATS_STRUCT = pa.struct([(name, pa.int64()) for name in STATS_FIELDS])
STATS_SQL_TYPE = "STRUCT(" + ", ".join(f"{f} BIGINT" for f in STATS_FIELDS) + ")"


def _udf_sentence_bleu(hyp: pa.Array, ref: pa.Array) -> pa.Array:
    out = [
        None if h is None or r is None else _bleu_from_flat(bleu_stats(h, r))
        for h, r in zip(hyp.to_pylist(), ref.to_pylist())
    ]
    return pa.array(out, type=pa.float64())


def _udf_bleu_stats(hyp: pa.Array, ref: pa.Array) -> pa.Array:
    hyps, refs = hyp.to_pylist(), ref.to_pylist()
    null = [h is None or r is None for h, r in zip(hyps, refs)]
    zero = (0,) * len(STATS_FIELDS)
    rows = [zero if n else bleu_stats(h, r) for h, r, n in zip(hyps, refs, null)]
    columns = zip(*rows) if rows else [()] * len(STATS_FIELDS)
    return pa.StructArray.from_arrays(
        [pa.array(col, type=pa.int64()) for col in columns],
        fields=list(STATS_STRUCT),
        mask=pa.array(null, type=pa.bool_()),
    )


def _float_column(arr) -> np.ndarray:
    """One argument column as float64 (NaN for NULL). HUGEINT arrives as decimal128(38, 0); a checked
    cast to int64 first. Whole numbers below 2^53 are exact as doubles."""
    if not pa.types.is_integer(arr.type):
        arr = pc.cast(arr, pa.int64())
    return pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)


def _udf_bleu_from_stats(hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4) -> pa.Array:
    out = bleu_from_stat_arrays(*(_float_column(a) for a in (hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4)))
    return pa.array(out, type=pa.float64(), from_pandas=True)  # NaN: NULL


def bleu_from_stat_arrays(h, r, m1, m2, m3, m4, t1, t2, t3, t4) -> np.ndarray:
    """bleu_from_stats over float64 arrays of whole numbers (NaN for NULL, giving NaN), bit for bit:
    the divisions, subtractions and products in numpy (IEEE operations on exact whole numbers, as
    Python's int / int is), and libm's log and exp and math.fsum per value through map(), as
    bleu_from_stats calls them."""
    null = np.isnan(np.stack([h, r, m1, m2, m3, m4, t1, t2, t3, t4])).any(axis=0)
    scored = ~null & (m1 != 0)  # no unigram match: 0 before any log
    h, r = h[scored], r[scored]
    quarter_logs = [
        0.25 * np.fromiter(map(math.log, (m / t).tolist()), np.float64, len(m))
        for m, t in (
            (m1[scored], t1[scored]),
            (m2[scored] + 1, t2[scored] + 1),
            (m3[scored] + 1, t3[scored] + 1),
            (m4[scored] + 1, t4[scored] + 1),
        )
    ]
    precision = np.fromiter(map(math.exp, map(math.fsum, zip(*(q.tolist() for q in quarter_logs)))), np.float64, len(h))
    bp = np.where((h <= r) & (h == 0), 0.0, 1.0)
    short = (h <= r) & (h != 0)
    bp[short] = np.fromiter(map(math.exp, (1 - r[short] / h[short]).tolist()), np.float64, int(short.sum()))
    out = np.zeros(len(null))
    out[scored] = bp * precision
    out[null] = np.nan
    return out


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Register ``srlens_bleu_from_stats(hyp_len, ref_len, m1..m4, t1..t4) -> DOUBLE``, the BLEU
    the models compute from their SQL n-gram statistics, on ``con``.

    Its parameters are declared HUGEINT, not BIGINT, because DuckDB's ``sum(BIGINT)`` returns
    HUGEINT and HUGEINT does not implicitly cast to BIGINT; BIGINT arguments widen implicitly, so
    both per-row and ``sum()``-ed statistics bind without casts. NULL when any argument is NULL.
    """
    con.create_function(
        "srlens_bleu_from_stats",
        _udf_bleu_from_stats,
        ["HUGEINT"] * len(STATS_FIELDS),
        "DOUBLE",
        type="arrow",
        null_handling="special",
    )


def register_references(con: duckdb.DuckDBPyConnection) -> None:
    """Register the per-pair functions no model calls, which tests and benchmarks compare the
    warehouse's SQL statistics with:

    * ``srlens_sentence_bleu(hyp VARCHAR[], ref VARCHAR[]) -> DOUBLE``
    * ``srlens_bleu_stats(hyp VARCHAR[], ref VARCHAR[]) -> STRUCT(hyp_len,
      ref_len, m1..m4, t1..t4 BIGINT)``

    Both return NULL when any argument is NULL.
    """
    con.create_function(
        "srlens_sentence_bleu",
        _udf_sentence_bleu,
        ["VARCHAR[]", "VARCHAR[]"],
        "DOUBLE",
        type="arrow",
        null_handling="special",
    )
    con.create_function(
        "srlens_bleu_stats",
        _udf_bleu_stats,
        ["VARCHAR[]", "VARCHAR[]"],
        STATS_SQL_TYPE,
        type="arrow",
        null_handling="special",
    )
