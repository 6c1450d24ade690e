"""String, tree and reordering accuracy of a realized sentence (SPEC sections 5 and 7).

Inputs are lemma sequences with punctuation already removed.  The reference is
the analysis tree: ``ref_lemmas`` (n words, positions 1..n) and ``ref_heads``
(``ref_heads[i]`` is the position of the head of word i+1, 0 for the root).
Lemmas are compared after ``str.lower()`` on both sides.

Documented decisions
--------------------
Alignment tie-break.  Edit distance with unit costs (insertion, deletion,
substitution = 1, so a substitution is cheaper than deletion + insertion).
Among the minimum-cost alignments the one with the most matches is chosen.
That pair (cost, matches) already fixes I, D and S, because with R reference
and H output tokens R = matches + S + D, H = matches + S + I and
cost = S + I + D, hence S = R + H - 2*matches - cost.  Needed for the SPEC
example: cost 5 is also reached with 5 matches (S=3, I=1, D=1); the paper's
alignment has 6 (S=1, I=2, D=2).  Only *which* tokens are inserted/deleted can
still differ between such alignments; the backtrace (from the end of both
strings) then prefers a diagonal step, then a deletion, then an insertion.
Moves: for each token type, M_t = min(deletions of t, insertions of t);
M = sum M_t, I' = I - M, D' = D - M.

Word identity.  Output word = k-th occurrence of a lemma is mapped to the k-th
occurrence of that lemma in the reference (SPEC 5); an output word without
such a partner is unmapped.  Inside a treelet the compared tokens are the
mapped *reference positions*, not lemmas, so two words with the same lemma are
never confused.  A treelet's output string is the treelet's positions in the
order their mapped output words occur; unmapped output words belong to no
treelet, so extra words lower the string accuracies but not the tree ones.
Tree counts are summed over all treelets and divided by R (as in Bangalore et
al. 2000, Table 1: 6 tree problems / 9 tokens = 0.33).

S in understandability/quality accuracy is the raw *count* of substitutions of
the simple tree accuracy (summed over treelets), not a rate.  Bangalore et al.
2000, section 4: Table 3 caption "S is number of substitutions"; "the simple
tree accuracy is bounded by 1, while the number of substitutions is bounded by
the length of the sentence. In practice ... S ranges between 0 and 10 with a
mean of 1.583"; and a perfect sentence (STA = 1, S = 0) scores exactly
1.3147 - 0.4458 = 0.8689 and 1.0192 - 0.3553 = 0.6639, the divisors.  (The
paper leaves open whether its regressions used string or tree S; SPEC fixes
the tree count.)

The build computes the same numbers faster (issue 18): ``srlens_accuracy_counts``
(``accuracy_counts`` below) maps the words and builds the treelets per sentence, keeping each
reference's part across runs, and aligns the units with ``pattern_edit_counts`` (through
``aligned_edit_counts``: a compiled weighted edit distance gives I, D and S; the moves come from
the token counts where nothing is substituted, else from the dynamic programme here, which
``srlens_accuracy_counts`` runs for the larger units of a batch of rows together in numpy,
``batch_edit_counts``); the
formulas are SQL (int_sentence_accuracies.sql). ``sentence_accuracies`` stays the plain-Python definition, which
tests compare the warehouse with; ``srlens_accuracies`` is it as a SQL function.

Edge values.
* out NULL (missing sentence) or ref NULL: every value NULL.
* R = 0: all accuracies NULL (division by zero); counts are still reported
  (string_ins = len(out), everything else 0).
* Empty output: every reference word is missing, i.e. deleted (SSA = GSA = 0;
  each treelet is fully deleted; no treelet is correctly ordered).
* No treelets (e.g. R = 1): tree counts are 0, so STA = GTA = 1 by the
  formula whatever the output; reorder_accuracy = NULL (0 / 0).
* Reordering (SPEC 7): a treelet is correct when all its words are mapped and
  their output order equals the reference order; other output words in
  between do not matter.
* Malformed trees (len(heads) != len(lemmas), head outside 0..n, self-loop)
  or NULL list elements raise ValueError (and so fail the SQL query) instead
  of producing silent numbers.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from itertools import chain
from typing import Any, NamedTuple

import duckdb
import numpy as np
import pyarrow as pa
from rapidfuzz.distance import Levenshtein

from .collector import collector_paused

__all__ = [
    "EditCounts",
    "accuracy_counts",
    "aligned_edit_counts",
    "batch_edit_counts",
    "pattern_edit_counts",
    "edit_counts",
    "sentence_accuracies",
    "srlens_accuracies_arrow",
    "register",
    "ACCURACY_FIELDS",
    "COUNT_FIELDS",
]

ACCURACY_FIELDS = (
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "understandability_accuracy",
    "quality_accuracy",
    "reorder_accuracy",
)
COUNT_FIELDS = (
    "string_ins",
    "string_del",
    "string_sub",
    "string_moves",
    "tree_ins",
    "tree_del",
    "tree_sub",
    "tree_moves",
    "reorder_correct",
    "reorder_total",
)


class EditCounts(NamedTuple):
    insertions: int
    deletions: int
    substitutions: int
    moves: int

    @property
    def problems(self) -> int:
        """I + D + S (simple accuracy numerator)."""
        return self.insertions + self.deletions + self.substitutions

    @property
    def generation_problems(self) -> int:
        """M + I' + D' + S (generation accuracy numerator)."""
        return self.problems - self.moves


NO_EDITS = EditCounts(0, 0, 0, 0)


def _edit_counts(ref: Sequence[Hashable], out: Sequence[Hashable], cost: int | None = None) -> EditCounts:
    """The counts of the alignment of the module docstring; ``cost``, the edit distance if known,
    limits the programme to the cells an alignment of that cost can pass (a band)."""
    if ref == out:  # the only zero-cost alignment: all diagonal (the common case, and cheap)
        return NO_EDITS
    # A common suffix changes nothing: with equal last tokens d[n][m] = d[n-1][m-1] - 1 always
    # (a neighbour cell is at most k + 1 lower), so the backtrace below, which starts at the end
    # and prefers the diagonal, would match it first anyway.
    n, m = len(ref), len(out)
    while n and m and ref[n - 1] == out[m - 1]:
        n, m = n - 1, m - 1
    # One integer per cell encodes (cost, -matches) lexicographically: K exceeds
    # any possible difference in matches, so cost always dominates.
    k = min(n, m) + 1
    # Band: a path through cell (i, j) makes at least |i - j| + |(n - i) - (m - j)| insertions and
    # deletions, so with a known cost only lo <= i - j <= hi can lie on an optimal alignment. The
    # cells outside stay "infinite"; the backtrace below only ever steps to cells of optimal
    # alignments, whose values the band leaves exact, so it takes the same steps.
    if cost is None:
        lo, hi = -m, n
    else:
        lo, hi = -((cost - n + m) // 2), (cost + n - m) // 2
    far = (n + m + 2) * (k + 1)
    d = [[far] * (m + 1) for _ in range(n + 1)]
    for i in range(min(n, hi) + 1):
        d[i][0] = i * k
    for j in range(1, min(m, -lo) + 1):
        d[0][j] = j * k
    for i in range(1, n + 1):
        r = ref[i - 1]
        row, prev = d[i], d[i - 1]
        first, last = max(1, i - hi), min(m, i - lo)
        left = row[first - 1]
        for j in range(first, last + 1):
            # min(diagonal, up, left) spelled out: this loop is most of the UDF's time, and the
            # builtin min() call costs more than the comparisons (profiled in docs/benchmarks.md)
            best = prev[j - 1] + (-1 if r == out[j - 1] else k)
            up = prev[j] + k
            if up < best:
                best = up
            left += k
            if left < best:
                best = left
            row[j] = left = best

    deleted: list[Hashable] = []
    inserted: list[Hashable] = []
    subs = 0
    i, j = n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0:
            same = ref[i - 1] == out[j - 1]
            if d[i][j] == d[i - 1][j - 1] + (-1 if same else k):
                subs += not same
                i, j = i - 1, j - 1
                continue
        if i > 0 and d[i][j] == d[i - 1][j] + k:
            deleted.append(ref[i - 1])
            i -= 1
        else:
            inserted.append(out[j - 1])
            j -= 1

    moves = 0
    if inserted and deleted:
        ins_by_token = Counter(inserted)
        moves = sum(min(c, ins_by_token[t]) for t, c in Counter(deleted).items())
    return EditCounts(len(inserted), len(deleted), subs, moves)


def edit_counts(ref: Sequence[str], out: Sequence[str]) -> EditCounts:
    """Insertions, deletions, substitutions and moves aligning ``out`` to ``ref``.

    Tokens are compared as given (callers lower-case lemmas); any hashable
    tokens work, which the tree metrics use to compare reference positions.
    """
    return _edit_counts(list(ref), list(out))


BATCH_UNITS = 64  # units per array of batch_edit_counts, similar sizes together (measured: 32 to 64 best)


def batch_edit_counts(pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> np.ndarray:
    """``edit_counts`` of many units of integer tokens at once, as a (units, 4) array of I, D, S, M:
    the same programme (every cell, no band, which the backtrace does not need: see ``_edit_counts``)
    and the same backtrace, in numpy over the units.

    Units of similar size share an array. A row of the programme is, with c the diagonal step's cost,
    d[i][j] = min(d[i-1][j-1] + c, d[i-1][j] + k, d[i][j-1] + k); unrolling the last term gives
    d[i][j] = j*k + min over j' <= j of (a[j'] - j'*k), a the minimum of the first two terms (and
    a[0] = d[i][0]), a running minimum along the row. The same integers, so the same cells. Then each
    cell's backtrace step (diagonal, deletion, insertion, in _edit_counts' order of preference) is
    computed for all cells, and the backtraces of all units follow their steps together.
    """
    units = len(pairs)
    result = np.zeros((units, 4), dtype=np.int64)
    if not units:
        return result
    n = np.fromiter(map(len, (ref for ref, _ in pairs)), np.int64, units)
    m = np.fromiter(map(len, (out for _, out in pairs)), np.int64, units)
    refs = np.fromiter(chain.from_iterable(ref for ref, _ in pairs), np.int64, int(n.sum()))
    outs = np.fromiter(chain.from_iterable(out for _, out in pairs), np.int64, int(m.sum()))
    ref_at, out_at = np.cumsum(n) - n, np.cumsum(m) - m
    # Each cell's step, all units' arrays flattened into one: 0 diagonal match, 1 substitution,
    # 2 deletion, 3 insertion, 4 the start (0, 0); unit u's cell (i, j) at base[u] + i * width[u] + j.
    steps, base, width = [], np.empty(units, np.int64), np.empty(units, np.int64)
    size = 0
    order = np.argsort(np.maximum(n, m), kind="stable")
    for start in range(0, units, BATCH_UNITS):
        group = order[start : start + BATCH_UNITS]
        gn, gm = n[group], m[group]
        rows, cols = int(gn.max()), int(gm.max())
        # padding: other tokens on both sides; cells beyond a unit's ends never reach its own cells
        ref = np.full((len(group), rows), -1, np.int64)
        out = np.full((len(group), cols), -2, np.int64)
        inside = np.arange(rows) < gn[:, None]
        ref[inside] = refs[(ref_at[group, None] + np.arange(rows))[inside]]
        inside = np.arange(cols) < gm[:, None]
        out[inside] = outs[(out_at[group, None] + np.arange(cols))[inside]]
        # int32: a cell is at most (n + m) * k, k = min(n, m) + 1
        k = (np.minimum(gn, gm) + 1).astype(np.int32)[:, None]
        # e[i][j] = d[i][j] - j*k: then e[i][j] = min(e[i-1][j-1] + c - k, e[i-1][j] + k, e[i][j-1]),
        # the running minimum of the first two terms (e[i][0] = i*k), and equal e mean equal d.
        match = ref[:, :, None] == out[:, None, :]
        diagonal_cost = np.where(match, -1 - k[:, :, None], np.int32(0))
        e = np.empty((len(group), rows + 1, cols + 1), np.int32)
        e[:, 0] = 0
        for i in range(1, rows + 1):
            prev, row = e[:, i - 1], e[:, i]
            np.minimum(prev[:, :-1] + diagonal_cost[:, i - 1], prev[:, 1:] + k, out=row[:, 1:])
            row[:, :1] = i * k
            np.minimum.accumulate(row, axis=1, out=row)
        cell = e[:, 1:, 1:]
        deletion = cell == e[:, :-1, 1:] + k[:, :, None]
        step = np.empty(e.shape, np.int8)
        np.subtract(3, deletion, out=step[:, 1:, 1:], dtype=np.int8)
        np.copyto(step[:, 1:, 1:], ~match, where=cell == e[:, :-1, :-1] + diagonal_cost)
        step[:, 0, :] = 3
        step[:, :, 0] = 2
        step[:, 0, 0] = 4
        steps.append(step.ravel())
        width[group] = cols + 1
        base[group] = size + np.arange(len(group)) * e[0].size
        size += step.size
    step = np.concatenate(steps)
    # the backtraces, all units together from their end cells; a finished one stays at (0, 0)
    back = np.stack([width + 1, width + 1, width, np.ones(units, np.int64), np.zeros(units, np.int64)])
    every = np.arange(units)
    at = base + n * width + m
    length = int((n + m).max())
    taken = np.empty((length, units), np.int8)
    cells = np.empty((length, units), np.int64)
    for t in range(length):
        taken[t] = s = step[at]
        cells[t] = at
        at = at - back[s, every]
    result[:, 0] = (taken == 3).sum(axis=0)
    result[:, 1] = (taken == 2).sum(axis=0)
    result[:, 2] = (taken == 1).sum(axis=0)
    # moves: per unit and token, min(deletions, insertions), summed over the tokens
    dt, du = np.nonzero(taken == 2)
    it, iu = np.nonzero(taken == 3)
    if du.size and iu.size:
        deleted = refs[ref_at[du] + (cells[dt, du] - base[du]) // width[du] - 1]
        inserted = outs[out_at[iu] + (cells[it, iu] - base[iu]) % width[iu] - 1]
        tokens, token = np.unique(np.concatenate([deleted, inserted]), return_inverse=True)
        keys, key = np.unique(np.concatenate([du, iu]) * len(tokens) + token.ravel(), return_inverse=True)
        key = key.ravel()
        both = np.minimum(
            np.bincount(key[: du.size], minlength=len(keys)), np.bincount(key[du.size :], minlength=len(keys))
        )
        np.add.at(result[:, 3], keys // len(tokens), both)
    return result


SMALL = 25  # cells of the dynamic programme below which aligned_edit_counts runs it directly (measured)


def aligned_edit_counts(
    ref: Sequence[Hashable], out: Sequence[Hashable], defer: list | None = None, tag: Any = None
) -> EditCounts:
    """``edit_counts`` with a compiled edit distance: the same counts, most of them without the
    Python dynamic programme.

    The tie-break (min cost, then most matches) is one weighted edit distance: with R = M + S + D
    and H = M + S + I, cost * k - M is, up to the constant (R + H) / 2, ((2k + 1) * cost + S) / 2,
    so with insertion = deletion = 2k + 1 and substitution = 2k + 2 the minimum W gives
    cost = W // (2k + 1) and S = W % (2k + 1) (S <= min(R, H) < k), hence I and D. Moves need the
    alignment itself (which tokens were deleted and inserted): zero when nothing is both deleted
    and inserted or no token occurs on both sides, from the token counts when nothing is
    substituted, else the dynamic programme of ``edit_counts``. With ``defer`` (a list) that
    programme is left to ``batch_edit_counts``: ``(tag, ref, out)`` is appended and the counts come
    back with 0 moves, for the caller to add the unit's moves from the batch.
    """
    if ref == out:
        return NO_EDITS
    n, m = len(ref), len(out)
    if n * m <= SMALL:  # most treelets: the plain programme costs less than the two calls
        return _edit_counts(ref, out)
    unit = 2 * (min(n, m) + 1) + 1
    cost, subs = divmod(Levenshtein.distance(ref, out, weights=(unit, unit, unit + 1)), unit)
    insertions = (cost - subs + m - n) // 2
    deletions = cost - subs - insertions
    if not (insertions and deletions):
        return EditCounts(insertions, deletions, subs, 0)
    if not subs:
        # Without substitutions the moves follow from the token counts, for every optimal alignment:
        # each optimal alignment has the same cost and matches, so the same S (module docstring),
        # here 0. Then every token is matched, deleted or inserted, so a token t is deleted
        # ref_t - matched_t times and inserted out_t - matched_t times, and
        # M = sum_t min(ref_t - matched_t, out_t - matched_t) = sum_t min(ref_t, out_t) - matches,
        # with matches = n - deletions: the dynamic programme's backtrace gives that very number.
        out_counts = Counter(out)
        shared = sum(min(c, out_counts[t]) for t, c in Counter(ref).items())
        return EditCounts(insertions, deletions, 0, shared - (n - deletions))
    if not set(ref).isdisjoint(out):
        if defer is None:
            return _edit_counts(ref, out, cost)
        defer.append((tag, ref, out))
    return EditCounts(insertions, deletions, subs, 0)


# Alignments of small units, by their pattern of equal tokens. The counts depend on which tokens are
# equal, never on the tokens themselves, so units with the same pattern (most treelets: a few positions
# in one of a few orders) share one entry. Larger units rarely repeat and are aligned each time.
PATTERN_CELLS = 64  # n * m up to which a unit's counts are kept (measured: 77% of the units to align)
PATTERNS_KEPT = 200_000  # then the table starts again, so its memory stays small
_patterns: dict[tuple, EditCounts] = {}


def pattern_edit_counts(
    ref: Sequence[Hashable], out: Sequence[Hashable], defer: list | None = None, tag: Any = None
) -> EditCounts:
    """``aligned_edit_counts``, looked up by the units' pattern of equal tokens where they are small;
    ``defer`` and ``tag`` are passed on for the large units (the kept counts are always complete)."""
    # A common prefix and suffix change neither I, D, S nor the tokens deleted and inserted, so
    # they can be stripped. The suffix: see _edit_counts. The prefix p: on row p every cell is the
    # stripped programme's cell minus p (d[p][j] = (j - p)k - p = d'[0][j - p] - p), and so for all
    # i, j >= p; the backtrace is the stripped one until it reaches row or column p, and from
    # (p, p + j') the optimal rest is j' insertions and p matches, which inserts out[p:p + j'] whatever
    # words are matched (also checked exhaustively in tests/test_accuracy.py). Stripped, more units
    # share a pattern and the programme is smaller.
    n, m = len(ref), len(out)
    start = 0
    while start < n and start < m and ref[start] == out[start]:
        start += 1
    if start == n == m:
        return NO_EDITS
    while n > start and m > start and ref[n - 1] == out[m - 1]:
        n, m = n - 1, m - 1
    if start == n or start == m:  # only insertions or only deletions: nothing is moved
        return EditCounts(m - start, n - start, 0, 0)
    ref, out = ref[start:n], out[start:m]
    if len(ref) * len(out) > PATTERN_CELLS:
        return aligned_edit_counts(ref, out, defer, tag)
    ids: dict[Hashable, int] = {}  # each token as the number of distinct tokens seen before it
    key = (tuple([ids.setdefault(t, len(ids)) for t in ref]), tuple([ids.setdefault(t, len(ids)) for t in out]))
    counts = _patterns.get(key)
    if counts is None:
        if len(_patterns) >= PATTERNS_KEPT:
            _patterns.clear()
        counts = _patterns[key] = aligned_edit_counts(ref, out)
    return counts


def _check_tree(lemmas: Sequence[Any], heads: Sequence[Any]) -> None:
    n = len(lemmas)
    if len(heads) != n:
        raise ValueError(f"{n} reference lemmas but {len(heads)} heads")
    for pos, h in enumerate(heads, start=1):
        if h is None or not 0 <= h <= n or h == pos:
            raise ValueError(f"invalid head {h!r} for word {pos} of {n}")
    if any(x is None for x in lemmas):
        raise ValueError("NULL lemma in reference")


def _map_output(ref: Sequence[str], out: Sequence[str]) -> list[int | None]:
    """Reference position (1-based) of each output word, k-th to k-th occurrence."""
    positions: dict[str, list[int]] = defaultdict(list)
    for pos, lemma in enumerate(ref, start=1):
        positions[lemma].append(pos)
    seen: Counter[str] = Counter()
    mapped: list[int | None] = []
    for lemma in out:
        kth = seen[lemma]
        seen[lemma] += 1
        cands = positions.get(lemma, ())
        mapped.append(cands[kth] if kth < len(cands) else None)
    return mapped


def _empty_result() -> dict[str, Any]:
    return {name: None for name in ACCURACY_FIELDS + COUNT_FIELDS}


def sentence_accuracies(
    ref_lemmas: Sequence[str] | None,
    ref_heads: Sequence[int] | None,
    out_lemmas: Sequence[str] | None,
) -> dict[str, Any]:
    """All SPEC 5/7 accuracies and their raw counts for one sentence pair.

    Returns a dict keyed by ``ACCURACY_FIELDS + COUNT_FIELDS``; every value is
    None when the reference or the output is None (see module docstring for
    the other edge values).
    """
    if ref_lemmas is None or ref_heads is None or out_lemmas is None:
        return _empty_result()
    _check_tree(ref_lemmas, ref_heads)
    if any(x is None for x in out_lemmas):
        raise ValueError("NULL lemma in output")
    ref = [x.lower() for x in ref_lemmas]
    out = [x.lower() for x in out_lemmas]
    n = len(ref)

    string = _edit_counts(ref, out)

    children: dict[int, list[int]] = defaultdict(list)
    for pos, h in enumerate(ref_heads, start=1):
        if h:
            children[h].append(pos)
    mapped = _map_output(ref, out)

    # Each treelet's output string, in one pass over the output: a mapped word belongs to the
    # treelet of its head and, if it has dependents, to its own.
    out_orders: dict[int, list[int]] = {head: [] for head in children}
    for p in mapped:
        if p is None:
            continue
        if ref_heads[p - 1]:
            out_orders[ref_heads[p - 1]].append(p)
        if p in out_orders:
            out_orders[p].append(p)

    tree_ins = tree_del = tree_sub = tree_moves = 0
    correct = 0
    for head in sorted(children):
        members = sorted([head, *children[head]])
        out_order = out_orders[head]
        c = _edit_counts(members, out_order)
        tree_ins += c.insertions
        tree_del += c.deletions
        tree_sub += c.substitutions
        tree_moves += c.moves
        # Positions are distinct, so equal sequences <=> all present, same order.
        correct += out_order == members
    total = len(children)

    res = _empty_result()
    res.update(
        string_ins=string.insertions,
        string_del=string.deletions,
        string_sub=string.substitutions,
        string_moves=string.moves,
        tree_ins=tree_ins,
        tree_del=tree_del,
        tree_sub=tree_sub,
        tree_moves=tree_moves,
        reorder_correct=correct,
        reorder_total=total,
    )
    if total:
        res["reorder_accuracy"] = correct / total
    if n == 0:
        return res

    sta = 1 - (tree_ins + tree_del + tree_sub) / n
    res.update(
        simple_string_accuracy=1 - string.problems / n,
        generation_string_accuracy=1 - string.generation_problems / n,
        simple_tree_accuracy=sta,
        generation_tree_accuracy=1 - (tree_ins + tree_del + tree_sub - tree_moves) / n,
        # Bangalore et al. 2000, eq. (4) and (5); S is the tree substitution count.
        understandability_accuracy=(1.3147 * sta - 0.1039 * tree_sub - 0.4458) / 0.8689,
        quality_accuracy=(1.0192 * sta - 0.0869 * tree_sub - 0.3553) / 0.6639,
    )
    return res


class _Reference(NamedTuple):
    """What the alignments need of one reference tree, kept for the outputs of all runs."""

    tokens: list[int]  # each word's lemma as the 0-based position of the lemma's first word
    positions: dict[Hashable, list[int]]  # lemma -> its words' positions (1-based), for the k-th to k-th mapping
    heads: Sequence[int]
    treelets: dict[int, list[int]]  # head position -> the treelet's positions in reference order


REFERENCES_KEPT = 50_000  # then the table starts again, so its memory stays small
_references: dict[tuple, _Reference] = {}


def _reference(lemmas: Sequence[Hashable], heads: Sequence[int]) -> _Reference:
    key = (tuple(lemmas), tuple(heads))
    reference = _references.get(key)
    if reference is None:
        _check_tree(lemmas, heads)
        positions: dict[Hashable, list[int]] = {}
        for pos, lemma in enumerate(lemmas, start=1):
            positions.setdefault(lemma, []).append(pos)
        treelets: dict[int, list[int]] = {}
        for pos, head in enumerate(heads, start=1):
            if head:
                treelets.setdefault(head, []).append(pos)
        for head, members in treelets.items():
            members.append(head)
            members.sort()
        tokens = [positions[lemma][0] - 1 for lemma in lemmas]
        if len(_references) >= REFERENCES_KEPT:
            _references.clear()
        reference = _references[key] = _Reference(tokens, positions, heads, treelets)
    return reference


def accuracy_counts(
    ref_lemmas: Sequence[Hashable],
    ref_heads: Sequence[int],
    out_lemmas: Sequence[Hashable],
    defer: list | None = None,
    row: int = 0,
) -> tuple[int, ...]:
    """``sentence_accuracies``' COUNT_FIELDS for lemmas already lower-cased, as the build computes
    them: the same units (the sentence's lemmas; each treelet's positions against its mapped output
    words), aligned by ``pattern_edit_counts``, and the reference's part kept across runs. With
    ``defer``, the moves of the units that need the dynamic programme are left out and
    ``((row, field), ref, out)`` appended for them (field: the index of string_moves or tree_moves
    in COUNT_FIELDS), as ``srlens_accuracy_counts_arrow`` batches them."""
    if None in out_lemmas:
        raise ValueError("NULL lemma in output")
    reference = _reference(ref_lemmas, ref_heads)
    positions, heads, treelets = reference.positions, reference.heads, reference.treelets
    if out_lemmas == ref_lemmas:  # the reference itself (a fifth of the campaign): no edits, all in order
        return (0,) * 8 + (len(treelets), len(treelets))
    # A lemma the reference lacks gets a token no reference lemma has (negative), equal for all its
    # occurrences: the alignments only ever compare tokens for equality.
    new_tokens: dict[Hashable, int] = {}
    out_tokens = []
    out_orders: defaultdict[int, list[int]] = defaultdict(list)  # treelets without mapped words: none
    seen: dict[Hashable, int] = {}
    for lemma in out_lemmas:
        candidates = positions.get(lemma)
        if candidates is None:
            out_tokens.append(new_tokens.setdefault(lemma, -1 - len(new_tokens)))
            continue
        out_tokens.append(candidates[0] - 1)
        kth = seen.get(lemma, 0)
        seen[lemma] = kth + 1
        if kth < len(candidates):  # the k-th occurrence maps to the reference's k-th
            # a mapped word belongs to the treelet of its head and, if it has dependents, to its own
            pos = candidates[kth]
            if heads[pos - 1]:
                out_orders[heads[pos - 1]].append(pos)
            if pos in treelets:
                out_orders[pos].append(pos)
    string = pattern_edit_counts(reference.tokens, out_tokens, defer, (row, 3))
    tree_ins = tree_del = tree_sub = tree_moves = correct = 0
    for head, members in treelets.items():
        out_order = out_orders.get(head, [])
        if out_order == members:  # positions are distinct: all present, in order
            correct += 1
            continue
        edits = pattern_edit_counts(members, out_order, defer, (row, 7))
        tree_ins += edits.insertions
        tree_del += edits.deletions
        tree_sub += edits.substitutions
        tree_moves += edits.moves
    return (*string, tree_ins, tree_del, tree_sub, tree_moves, correct, len(treelets))


COUNTS_TYPE = pa.struct([(name, pa.int32()) for name in COUNT_FIELDS])


def srlens_accuracy_counts_arrow(ref_lemmas, ref_heads, out_lemmas) -> pa.Array:
    """Arrow-vectorized body of ``srlens_accuracy_counts``: one struct of counts (or NULL) per row."""
    # The objects made here hold no reference cycles (lists, dicts, tuples of ints and strings).
    # With the collector on, their number makes it rescan the kept references and patterns and
    # the process's heap again and again: about 2 s of the model's 11.5 s CPU at campaign scale
    # (docs/benchmarks.md, session 30).
    with collector_paused():
        return _accuracy_counts_batch(ref_lemmas, ref_heads, out_lemmas)


def _accuracy_counts_batch(ref_lemmas, ref_heads, out_lemmas) -> pa.Array:
    rows = zip(ref_lemmas.to_pylist(), ref_heads.to_pylist(), out_lemmas.to_pylist())
    defer: list = []  # the units whose moves need the dynamic programme: all of the batch's at once
    results = [
        None if r is None or h is None or o is None else accuracy_counts(r, h, o, defer, row)
        for row, (r, h, o) in enumerate(rows)
    ]
    nulls = np.array([c is None for c in results], dtype=bool)
    counts = np.array([(0,) * len(COUNT_FIELDS) if c is None else c for c in results], dtype=np.int32)
    counts = counts.reshape(len(results), len(COUNT_FIELDS))
    if defer:
        moves = batch_edit_counts([(ref, out) for _, ref, out in defer])[:, 3]
        np.add.at(counts, tuple(np.array([tag for tag, _, _ in defer]).T), moves.astype(np.int32))
    return pa.StructArray.from_arrays(
        [pa.array(counts[:, i]) for i in range(len(COUNT_FIELDS))],
        fields=list(COUNTS_TYPE),
        mask=pa.array(nulls),
    )


ARROW_TYPE = pa.struct(
    [(name, pa.float64()) for name in ACCURACY_FIELDS] + [(name, pa.int32()) for name in COUNT_FIELDS]
)
SQL_RETURN_TYPE = (
    "STRUCT("
    + ", ".join([f"{name} DOUBLE" for name in ACCURACY_FIELDS] + [f"{name} INTEGER" for name in COUNT_FIELDS])
    + ")"
)


def srlens_accuracies_arrow(ref_lemmas, ref_heads, out_lemmas) -> pa.Array:
    """Arrow-vectorized body of ``srlens_accuracies``: one struct (or NULL) per row."""
    rows = zip(ref_lemmas.to_pylist(), ref_heads.to_pylist(), out_lemmas.to_pylist())
    results = [None if r is None or h is None or o is None else sentence_accuracies(r, h, o) for r, h, o in rows]
    return pa.array(results, type=ARROW_TYPE)


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Register ``srlens_accuracies(VARCHAR[], INTEGER[], VARCHAR[]) -> STRUCT`` and
    ``srlens_accuracy_counts(VARCHAR[], INTEGER[], VARCHAR[]) -> STRUCT(COUNT_FIELDS)`` on ``con``."""
    con.create_function(
        "srlens_accuracy_counts",
        srlens_accuracy_counts_arrow,
        ["VARCHAR[]", "INTEGER[]", "VARCHAR[]"],
        "STRUCT(" + ", ".join(f"{name} INTEGER" for name in COUNT_FIELDS) + ")",
        type="arrow",
        null_handling="special",
        side_effects=False,
    )
    con.create_function(
        "srlens_accuracies",
        srlens_accuracies_arrow,
        ["VARCHAR[]", "INTEGER[]", "VARCHAR[]"],
        SQL_RETURN_TYPE,
        type="arrow",
        # NULLs are handled in Python explicitly rather than relying on the
        # engine's default, which for arrow UDFs passes them through anyway.
        null_handling="special",
        side_effects=False,
    )
