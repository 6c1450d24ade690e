"""sacreBLEU's BLEU and chrF (SPEC 13) as DuckDB UDFs: the scores machine translation users know.

``srlens_sacrebleu_stats(hyp, ref)`` gives each pair's sufficient statistics on the detokenized
texts with sacrebleu's defaults (tokenizer 13a, mixed case; chrF with 6 character orders, no word
orders, beta 2, spaces removed), the integers ``sacrebleu.corpus_bleu`` / ``corpus_chrf`` collect
(``Metric._extract_corpus_statistics``), by a faster extraction held equal to sacrebleu's by the
tests. A score is a function of statistics summed over sentences, as sacrebleu's
``_compute_score_from_stats`` computes it: one sentence's for the sentence scores, a run's (or a
bootstrap sample's) sum for the corpus scores.
``srlens_sacrebleu_bleu_from_stats`` and ``srlens_chrf_from_stats`` are those formulas in numpy
over a whole batch; tests/metrics/test_mt_scores.py holds them equal to sacrebleu's own API.

* BLEU: ``[hyp_len, ref_len, correct_1..4, total_1..4]``; smoothing ``exp`` (mteval's). Sentence
  BLEU uses the effective order (sacrebleu's ``sentence_bleu`` default), corpus BLEU does not.
* chrF: ``[hyp_n, ref_n, match_n]`` for n = 1..6, in sacrebleu's order.
"""

import re
from functools import lru_cache

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from srlens.definitions import CHRF_STATS, SACREBLEU_BLEU_STATS

__all__ = [
    "BLEU_FIELDS",
    "CHRF_FIELDS",
    "bleu_from_stat_arrays",
    "chrf_from_stat_arrays",
    "register",
    "sacrebleu_stats",
    "signatures",
]

MAX_ORDER = 4  # sacrebleu's BLEU n-gram order
CHAR_ORDER = 6  # sacrebleu's chrF character order (no word order: chrF, not chrF++)
BETA = 2

BLEU_FIELDS = SACREBLEU_BLEU_STATS  # srlens/definitions.py: the SQL columns of the same names
CHRF_FIELDS = CHRF_STATS
STATS_SQL_TYPE = "STRUCT(" + ", ".join(f"{f} BIGINT" for f in BLEU_FIELDS + CHRF_FIELDS) + ")"


def signatures():
    """sacrebleu's signature strings of the three scores, from sacrebleu itself:
    {'corpus_bleu': ..., 'sentence_bleu': ..., 'chrf': ...}. They differ only in BLEU's `eff`."""
    from sacrebleu.metrics import BLEU, CHRF

    out = {}
    for name, metric in (("corpus_bleu", BLEU()), ("sentence_bleu", BLEU(effective_order=True)), ("chrf", CHRF())):
        metric.num_refs = 1  # what scoring sets: srlens compares with one reference
        out[name] = str(metric.get_signature())
    return out


@lru_cache(maxsize=1)
def _tokenizer():
    """sacrebleu's 13a tokenizer (``Tokenizer13a``) with its own regular expressions, for a list of
    lines at once: f(lines) -> their token lists. Its first rule puts spaces around every character
    of an ASCII class (spaces included), which ``re.sub`` does by expanding the template ' \\1 ' in
    Python for each character: here ``str.translate``, with the table read off sacrebleu's pattern.
    The other rules run once on the lines joined by newlines: 13a has turned a line's own newlines
    into spaces and pads each line with spaces; a rule's match is two characters, one of them '.',
    ',' or '-', so none takes a joining newline and the matches are those of each line alone."""
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    (first, template), *rest = TokenizerRegexp()._re
    if template != r" \1 " or first.flags & re.IGNORECASE:
        raise RuntimeError(f"sacrebleu's 13a tokenizer changed: {first.pattern!r} -> {template!r}")
    # The class is of ASCII ranges, so it matches no other character.
    table = {c: f" {chr(c)} " for c in range(128) if first.fullmatch(chr(c))}

    def prepared(line):
        line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
        if "&" in line:
            line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
        return f" {line} "

    def tokenize(lines):
        text = "\n".join(map(prepared, lines)).translate(table)
        for pattern, repl in rest:
            text = pattern.sub(repl, text)
        return [line.split() for line in text.split("\n")] if lines else []

    return tokenize


def _clipped_matches(symbols, lengths, hypotheses, reference_of, orders):
    """[hypotheses x orders] int64: for each order n, the n-grams of hypothesis k that its reference
    has too, each counted at most as often as there (sacrebleu's clipped matches), for the whole batch
    at once in numpy.

    `symbols` holds the segments' symbols (characters or word ids) one after another, the
    `hypotheses` hypotheses first (segment k), then the references; `lengths` each segment's count;
    `reference_of[k]` hypothesis k's reference segment. An n-gram is a number: its n symbols' ranks
    in base `width`, re-ranked by np.unique only when the key (segment, n-gram) would pass 2^62.
    Then per order: the counts of each (segment, n-gram) by sorting, each hypothesis key looked up
    among its reference's keys, the smaller count summed per hypothesis."""
    out = np.zeros((hypotheses, orders), dtype=np.int64)
    total = len(symbols)
    if total == 0:
        return out
    segment = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    room = np.repeat(np.cumsum(lengths), lengths) - np.arange(total)  # symbols left in the segment
    _, first = np.unique(symbols, return_inverse=True)
    first = first.astype(np.int64)
    width = int(first.max()) + 1
    gram, space = first, width
    for n in range(1, orders + 1):
        if n > 1:
            size = total - n + 1
            if size <= 0:
                break
            if space * width * len(lengths) >= 2**62:  # re-rank first, so that no key passes int64
                _, gram = np.unique(gram, return_inverse=True)
                gram = gram.astype(np.int64)
                space = int(gram.max()) + 1
            gram = gram[:size] * width + first[n - 1 :]
            space *= width
        keep = room[: len(gram)] >= n  # n-grams inside one segment
        keys = segment[: len(gram)][keep] * space + gram[keep]
        of_hypothesis = keys < hypotheses * space
        hyp_keys, hyp_counts = np.unique(keys[of_hypothesis], return_counts=True)
        ref_keys, ref_counts = np.unique(keys[~of_hypothesis], return_counts=True)
        if not len(hyp_keys) or not len(ref_keys):
            continue
        pair = hyp_keys // space
        wanted = reference_of[pair] * space + hyp_keys % space
        at = np.minimum(np.searchsorted(ref_keys, wanted), len(ref_keys) - 1)
        found = ref_keys[at] == wanted
        clipped = np.minimum(hyp_counts[found], ref_counts[at[found]])
        out[:, n - 1] = np.bincount(pair[found], weights=clipped, minlength=hypotheses).astype(np.int64)
    return out


def sacrebleu_stats(hypotheses, references):
    """[pairs x (BLEU_FIELDS + CHRF_FIELDS)] int64: per (hypothesis, reference) pair what sacrebleu's
    ``_extract_corpus_statistics(hypotheses, [references])`` gives for each metric (one reference, so
    sacrebleu's best-reference choice is that reference). sacrebleu counts n-grams in Python dicts
    pair by pair; here the matches of a whole batch come from numpy (`_clipped_matches`), an order's
    total is a length difference, and a reference shared by several runs is tokenized once.
    tests/metrics/test_mt_scores.py holds the figures equal to sacrebleu's."""
    tokenize = _tokenizer()
    count = len(hypotheses)
    distinct = {}
    reference_of = np.array([distinct.setdefault(r, len(distinct)) for r in references], dtype=np.int64) + count
    texts = [*hypotheses, *distinct]
    # BLEU: 13a tokens (the text right-stripped first, as BLEU._preprocess_segment), as word ids
    tokens = tokenize([t.rstrip() for t in texts])
    vocabulary = {}
    words = np.array([vocabulary.setdefault(w, len(vocabulary)) for ts in tokens for w in ts], dtype=np.int64)
    word_lengths = np.array([len(ts) for ts in tokens], dtype=np.int64)
    bleu_matches = _clipped_matches(words, word_lengths, count, reference_of, MAX_ORDER)
    # chrF: the characters with whitespace removed, as extract_all_char_ngrams
    lines = ["".join(t.split()) for t in texts]
    characters = np.frombuffer("".join(lines).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    char_lengths = np.array([len(line) for line in lines], dtype=np.int64)
    chrf_matches = _clipped_matches(characters.astype(np.int64), char_lengths, count, reference_of, CHAR_ORDER)

    hyp_len, ref_len = word_lengths[:count], word_lengths[reference_of]
    bleu_totals = np.maximum(hyp_len[:, None] - np.arange(MAX_ORDER), 0)
    hyp_chars, ref_chars = char_lengths[:count, None], char_lengths[reference_of, None]
    ref_ngrams = np.maximum(ref_chars - np.arange(CHAR_ORDER), 0)
    # sacrebleu counts no hypothesis n-gram of an order the reference has none of
    hyp_ngrams = np.where(ref_ngrams > 0, np.maximum(hyp_chars - np.arange(CHAR_ORDER), 0), 0)
    chrf = np.stack([hyp_ngrams, ref_ngrams, chrf_matches], axis=2).reshape(count, 3 * CHAR_ORDER)
    return np.column_stack([hyp_len, ref_len, bleu_matches, bleu_totals, chrf]).astype(np.int64)


def bleu_from_stat_arrays(stats, effective_order):
    """sacrebleu's ``BLEU.compute_bleu`` (smoothing exp) over a [rows x 10] float array of
    (summed) statistics BLEU_FIELDS, step by step:

    * brevity penalty exp(1 - ref_len / hyp_len) when hyp_len < ref_len (0 for an empty hypothesis);
    * 0 when no n-gram of any order matches;
    * orders are used up to the first with no hypothesis n-gram (sacrebleu's `break`); precision
      100 * correct / total, and for an order with no match 100 / (2^k * total), k counting such
      orders so far (exp smoothing);
    * the mean of the logs is over the orders used with the effective order, else over all 4, an
      unused order's log being sacrebleu's floor -9999999999 (so the score is 0).
    """
    stats = np.asarray(stats, dtype=np.float64).reshape(-1, 2 + 2 * MAX_ORDER)
    hyp_len, ref_len = stats[:, 0], stats[:, 1]
    correct, total = stats[:, 2 : 2 + MAX_ORDER], stats[:, 2 + MAX_ORDER :]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(hyp_len < ref_len, np.where(hyp_len > 0, np.exp(1 - ref_len / hyp_len), 0.0), 1.0)
        used = np.cumprod(total > 0, axis=1).astype(bool)
        unmatched = used & (correct == 0)
        smooth = 2.0 ** np.cumsum(unmatched, axis=1)
        precision = np.where(unmatched, 100.0 / (smooth * total), 100.0 * correct / total)
        logs = np.where(used, np.log(np.where(used, precision, 1.0)), -9999999999.0)
    if effective_order:
        orders = used.sum(axis=1)
        logs = np.where(used, logs, 0.0)
    else:
        orders = np.full(len(stats), MAX_ORDER)
    score = bp * np.exp(logs.sum(axis=1) / np.maximum(orders, 1))
    return np.where((correct > 0).any(axis=1), score, 0.0)


def chrf_from_stat_arrays(stats):
    """sacrebleu's ``CHRF._compute_f_score`` (beta 2, effective-order averaging, its default) over a
    [rows x 18] float array of (summed) statistics CHRF_FIELDS: precision and recall averaged over
    the orders where both the hypothesis and the reference have n-grams, then F-beta, times 100
    (0 when no order counts or both averages are 0)."""
    stats = np.asarray(stats, dtype=np.float64).reshape(-1, CHAR_ORDER, 3)
    hyp, ref, match = stats[:, :, 0], stats[:, :, 1], stats[:, :, 2]
    counted = (hyp > 0) & (ref > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(counted, match / hyp, 0.0).sum(axis=1)
        recall = np.where(counted, match / ref, 0.0).sum(axis=1)
        orders = counted.sum(axis=1)
        precision = np.where(orders > 0, precision / orders, 0.0)
        recall = np.where(orders > 0, recall / orders, 0.0)
        factor = BETA**2
        score = 100 * ((1 + factor) * precision * recall / (factor * precision + recall))
    return np.where(precision + recall > 0, score, 0.0)


# --------------------------------------------------------------------------
# DuckDB arrow UDFs: whole batches in, one array out. NULL in, NULL out (null_handling='special').


def _udf_stats(hyp: pa.Array, ref: pa.Array) -> pa.Array:
    hyps, refs = hyp.to_pylist(), ref.to_pylist()
    null = [h is None or r is None for h, r in zip(hyps, refs)]
    scored = sacrebleu_stats([h for h, n in zip(hyps, null) if not n], [r for r, n in zip(refs, null) if not n])
    width = len(BLEU_FIELDS) + len(CHRF_FIELDS)
    matrix = np.zeros((len(null), width), dtype=np.int64)
    matrix[~np.array(null, dtype=bool)] = scored
    return pa.StructArray.from_arrays(
        [pa.array(matrix[:, k]) for k in range(width)],
        names=list(BLEU_FIELDS + CHRF_FIELDS),
        mask=pa.array(null, type=pa.bool_()),
    )


def _matrix(columns):
    """The argument columns as a [rows x columns] float64 matrix (NaN for NULL); HUGEINT sums arrive
    as decimal128(38, 0): a checked cast to int64 first."""
    out = []
    for arr in columns:
        if not pa.types.is_integer(arr.type):
            arr = pc.cast(arr, pa.int64())
        out.append(pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False))
    return np.column_stack(out) if out else np.zeros((0, 0))


def _scores(matrix, compute):
    null = np.isnan(matrix).any(axis=1)
    out = np.full(len(matrix), np.nan)
    if (~null).any():
        out[~null] = compute(matrix[~null])
    return pa.array(out, type=pa.float64(), from_pandas=True)  # NaN: NULL


# DuckDB reads a UDF's parameters from its signature: each statistic is a named parameter.
def _udf_sentence_bleu(hyp_len, ref_len, c1, c2, c3, c4, t1, t2, t3, t4):
    matrix = _matrix((hyp_len, ref_len, c1, c2, c3, c4, t1, t2, t3, t4))
    return _scores(matrix, lambda m: bleu_from_stat_arrays(m, effective_order=True))


def _udf_corpus_bleu(hyp_len, ref_len, c1, c2, c3, c4, t1, t2, t3, t4):
    matrix = _matrix((hyp_len, ref_len, c1, c2, c3, c4, t1, t2, t3, t4))
    return _scores(matrix, lambda m: bleu_from_stat_arrays(m, effective_order=False))


def _udf_chrf(h1, r1, m1, h2, r2, m2, h3, r3, m3, h4, r4, m4, h5, r5, m5, h6, r6, m6):
    matrix = _matrix((h1, r1, m1, h2, r2, m2, h3, r3, m3, h4, r4, m4, h5, r5, m5, h6, r6, m6))
    return _scores(matrix, chrf_from_stat_arrays)


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Register on ``con``:

    * ``srlens_sacrebleu_stats(hyp VARCHAR, ref VARCHAR) -> STRUCT(sb_hyp_len, sb_ref_len, sb_c1..4,
      sb_t1..4, chrf_h1, chrf_r1, chrf_m1, ..., chrf_m6 BIGINT)``;
    * ``srlens_sacrebleu_sentence_bleu(<10 BLEU statistics>)`` (effective order) and
      ``srlens_sacrebleu_corpus_bleu(<10 BLEU statistics>)`` -> DOUBLE, 0-100;
    * ``srlens_chrf_from_stats(<18 chrF statistics>) -> DOUBLE``, 0-100.

    The statistics are declared HUGEINT so that ``sum()``-ed BIGINTs bind without casts (as
    udfs/bleu.py's). NULL when any argument is NULL.
    """
    con.create_function(
        "srlens_sacrebleu_stats",
        _udf_stats,
        ["VARCHAR", "VARCHAR"],
        STATS_SQL_TYPE,
        type="arrow",
        null_handling="special",
    )
    for name, function in (
        ("srlens_sacrebleu_sentence_bleu", _udf_sentence_bleu),
        ("srlens_sacrebleu_corpus_bleu", _udf_corpus_bleu),
    ):
        con.create_function(
            name, function, ["HUGEINT"] * len(BLEU_FIELDS), "DOUBLE", type="arrow", null_handling="special"
        )
    con.create_function(
        "srlens_chrf_from_stats",
        _udf_chrf,
        ["HUGEINT"] * len(CHRF_FIELDS),
        "DOUBLE",
        type="arrow",
        null_handling="special",
    )
