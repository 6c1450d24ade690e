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

The build computes the same numbers faster: ``srlens_accuracy_counts``
(``srlens_accuracy_counts_arrow`` below) maps the words and builds the treelets of a whole batch of
rows at once in numpy, on the lemmas as integers (dictionary-encoded per batch), and aligns all the
units together (``_units_edit_counts``: a compiled weighted edit distance gives I, D and S; the
moves come from the token counts where nothing is substituted, else from the dynamic programme
here, run for many units together in numpy, ``batch_edit_counts``); the formulas are SQL
(int_sentence_accuracies.sql). ``sentence_accuracies`` stays the plain-Python definition, which
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
import pyarrow.compute as pc
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist

from .collector import collector_paused

__all__ = [
    "EditCounts",
    "batch_edit_counts",
    "edit_counts",
    "sentence_accuracies",
    "srlens_accuracies_arrow",
    "srlens_accuracy_counts_arrow",
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


def _edit_counts(ref: Sequence[Hashable], out: Sequence[Hashable]) -> EditCounts:
    """The counts of the alignment of the module docstring."""
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
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i * k
    d[0] = [j * k for j in range(m + 1)]
    for i in range(1, n + 1):
        r = ref[i - 1]
        row, prev = d[i], d[i - 1]
        left = row[0]
        for j in range(1, m + 1):
            # min(diagonal, up, left) spelled out: the builtin min() call costs more than the
            # comparisons (profiled in docs/performance.md, "Scoring")
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
    n = np.fromiter(map(len, (ref for ref, _ in pairs)), np.int64, units)
    m = np.fromiter(map(len, (out for _, out in pairs)), np.int64, units)
    refs = np.fromiter(chain.from_iterable(ref for ref, _ in pairs), np.int64, int(n.sum()))
    outs = np.fromiter(chain.from_iterable(out for _, out in pairs), np.int64, int(m.sum()))
    return _batch_edit_counts(refs, n, outs, m)


def _batch_edit_counts(refs: np.ndarray, n: np.ndarray, outs: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``batch_edit_counts`` of units given flat: unit u's tokens are the next n[u] of ``refs`` and
    the next m[u] of ``outs``."""
    units = len(n)
    result = np.zeros((units, 4), dtype=np.int64)
    if not units:
        return result
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


COUNTS_TYPE = pa.struct([(name, pa.int32()) for name in COUNT_FIELDS])


def srlens_accuracy_counts_arrow(ref_lemmas, ref_heads, out_lemmas) -> pa.Array:
    """Arrow-vectorized body of ``srlens_accuracy_counts``: one struct of counts (or NULL) per row,
    ``sentence_accuracies``' COUNT_FIELDS for lemmas already lower-cased."""
    # The objects made here (strings and bytes keys, the kept patterns) hold no reference cycles;
    # the collector would only rescan the process's heap for them (docs/performance.md, "Scoring").
    with collector_paused():
        columns = [
            c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in (ref_lemmas, ref_heads, out_lemmas)
        ]
        valid = np.ones(len(columns[0]), bool)
        for column in columns:
            valid &= column.is_valid().to_numpy(zero_copy_only=False)
        counts = np.zeros((len(valid), len(COUNT_FIELDS)), np.int32)
        if not valid.all():
            columns = [column.filter(pa.array(valid)) for column in columns]
        counts[valid] = _batch_counts(*columns)
    return pa.StructArray.from_arrays(
        [pa.array(counts[:, i]) for i in range(len(COUNT_FIELDS))], fields=list(COUNTS_TYPE), mask=pa.array(~valid)
    )


# The batch in numpy. Lists laid end to end ("flat") with their lengths; a unit (two token
# sequences to align) is given by its two flat arrays, each side's starts and lengths.


def _flat(lists: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The values of a list array without NULL lists, and each list's length."""
    return pc.list_flatten(lists), pc.list_value_length(lists).to_numpy(zero_copy_only=False).astype(np.int64)


def _segments(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For lists of these lengths laid end to end: each element's list, each list's start, and each
    element's index in its list."""
    starts = np.cumsum(lengths) - lengths
    owner = np.repeat(np.arange(len(lengths)), lengths)
    return owner, starts, np.arange(len(owner)) - starts[owner]


def _first_of_runs(keys: np.ndarray) -> np.ndarray:
    first = np.ones(len(keys), bool)
    first[1:] = keys[1:] != keys[:-1]
    return first


def _occurrence(keys: np.ndarray) -> np.ndarray:
    """For each key, how many equal keys come before it (0 at its first occurrence)."""
    order = np.argsort(keys, kind="stable")
    at = np.arange(len(keys))
    rank = np.empty(len(keys), np.int64)
    rank[order] = at - np.maximum.accumulate(np.where(_first_of_runs(keys[order]), at, 0))
    return rank


def _common_ends(a, a_start, n, b, b_start, m) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's common prefix length, and the common suffix length of what the prefix leaves."""
    ends = []
    common = np.minimum(n, m)
    for from_end in (False, True):
        unit, _, j = _segments(common)
        if from_end:
            equal = a[a_start[unit] + n[unit] - 1 - j] == b[b_start[unit] + m[unit] - 1 - j]
        else:
            equal = a[a_start[unit] + j] == b[b_start[unit] + j]
        length = common.copy()
        unequal = unit[~equal]
        first = _first_of_runs(unequal)
        length[unequal[first]] = j[~equal][first]
        ends.append(length)
        common = common - length
    return ends[0], ends[1]


def _texts(tokens: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list:
    """Units' sides of non-negative tokens as strings of one character per token, for rapidfuzz."""
    if tokens.size and tokens.max() >= 0x10F800:  # more tokens than code points: lists, slower
        text = tokens.tolist()
    else:  # code points, skipping the surrogates
        text = (tokens + (tokens >= 0xD800) * 0x800).astype("<u4").tobytes().decode("utf-32-le")
    return [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())]


def _units_edit_counts(a, a_start, n, b, b_start, m, shared) -> np.ndarray:
    """``edit_counts`` (I, D, S, M as a (units, 4) array) of units of non-negative tokens; ``shared``
    is each unit's sum over tokens t of min(count of t in a, count in b)."""
    # A common prefix and suffix change neither I, D, S nor the tokens deleted and inserted, so
    # they are stripped. The suffix: see _edit_counts. The prefix p: on row p every cell is the
    # stripped programme's cell minus p (d[p][j] = (j - p)k - p = d'[0][j - p] - p), and so for all
    # i, j >= p; the backtrace is the stripped one until it reaches row or column p, and from
    # (p, p + j') the optimal rest is j' insertions and p matches, which inserts out[p:p + j'] whatever
    # words are matched (also checked exhaustively in tests/metrics/test_accuracy.py). Each stripped pair
    # adds 1 to min(count in a, count in b) of its token.
    prefix, suffix = _common_ends(a, a_start, n, b, b_start, m)
    n, m, shared = n - prefix - suffix, m - prefix - suffix, shared - prefix - suffix
    a_start, b_start = a_start + prefix, b_start + prefix
    result = np.zeros((len(n), 4), np.int64)
    result[:, 0], result[:, 1] = m, n  # one side empty: only insertions or only deletions
    both = np.nonzero((n > 0) & (m > 0))[0]
    if not both.size:
        return result
    n, m, shared, a_start, b_start = n[both], m[both], shared[both], a_start[both], b_start[both]
    # The tie-break (min cost, then most matches) is one weighted edit distance: with R = M + S + D
    # and H = M + S + I, cost * k - M is, up to the constant (R + H) / 2, ((2k + 1) * cost + S) / 2,
    # so with insertion = deletion = 2k + 1 and substitution = 2k + 2 the minimum W gives
    # cost = W // (2k + 1) and S = W % (2k + 1) for any k above every unit's S (S <= min(R, H)).
    unit = 2 * (int(np.minimum(n, m).max()) + 1) + 1
    weighted = cpdist(
        _texts(a, a_start, a_start + n),
        _texts(b, b_start, b_start + m),
        scorer=Levenshtein.distance,
        scorer_kwargs={"weights": (unit, unit, unit + 1)},
        dtype=np.int64,
        workers=1,
    )
    cost, subs = np.divmod(weighted, unit)
    insertions = (cost - subs + m - n) // 2
    deletions = cost - subs - insertions
    # Moves need the alignment itself (which tokens were deleted and inserted): zero when nothing is
    # both deleted and inserted or no token is on both sides. Without substitutions they follow from
    # the token counts, for every optimal alignment: each has the same cost and matches, so the same
    # S (module docstring), here 0. Then every token is matched, deleted or inserted, so a token t is
    # deleted a_t - matched_t times and inserted b_t - matched_t times, and
    # M = sum_t min(a_t - matched_t, b_t - matched_t) = shared - matches, with matches = n - deletions:
    # the dynamic programme's backtrace gives that very number. Else the dynamic programme.
    moved = (insertions > 0) & (deletions > 0)
    moves = np.where(moved & (subs == 0), shared - (n - deletions), 0)
    programme = np.nonzero(moved & (subs > 0) & (shared > 0))[0]
    if programme.size:
        moves[programme] = _programme_moves(a, a_start[programme], n[programme], b, b_start[programme], m[programme])
    result[both] = np.stack([insertions, deletions, subs, moves], axis=1)
    return result


def _moves(a, a_start, n, b, b_start, m) -> np.ndarray:
    """Units' moves from ``_batch_edit_counts``."""
    unit_a, _, at_a = _segments(n)
    unit_b, _, at_b = _segments(m)
    return _batch_edit_counts(a[a_start[unit_a] + at_a], n, b[b_start[unit_b] + at_b], m)[:, 3]


# Moves of small units, by their pattern of equal tokens. The counts depend on which tokens are equal,
# never on the tokens themselves, so units with the same pattern (most treelets: a few positions in
# one of a few orders) share one entry. Larger units rarely repeat and are aligned each time.
PATTERN_CELLS = 64  # n * m up to which a unit's moves are kept (measured: docs/performance.md, "Scoring")
PATTERN_WIDTH = PATTERN_CELLS + 2  # a pattern: n, then the n + m <= PATTERN_CELLS + 1 tokens
PATTERNS_KEPT = 200_000  # then the table starts again, so its memory stays small
_pattern_moves: dict[bytes, int] = {}


def _pattern_rows(a, a_start, n, b, b_start, m) -> np.ndarray:
    """Small units' patterns, one row each: n, then the unit's tokens (a's, then b's) each numbered
    by the first appearance of its token in the unit, then -1s."""
    unit, _, at = _segments(n + m)
    in_a = at < n[unit]
    token = np.empty(len(unit), np.int64)
    token[in_a] = a[(a_start[unit] + at)[in_a]]
    token[~in_a] = b[(b_start[unit] + at - n[unit])[~in_a]]
    key = unit * (int(token.max()) + 1) + token
    order = np.argsort(key, kind="stable")
    first = _first_of_runs(key[order])  # each distinct token of a unit, at its first appearance
    token_unit, token_at = unit[order][first], at[order][first]
    by_appearance = np.argsort(token_unit * PATTERN_WIDTH + token_at)
    count = np.arange(len(by_appearance))
    number = np.empty(len(by_appearance), np.int64)
    number[by_appearance] = count - np.maximum.accumulate(np.where(_first_of_runs(token_unit[by_appearance]), count, 0))
    rows = np.full((len(n), PATTERN_WIDTH), -1, np.int64)
    rows[:, 0] = n
    numbered = np.empty(len(token), np.int64)
    numbered[order] = number[np.cumsum(first) - 1]
    rows[unit, 1 + at] = numbered
    return rows


def _programme_moves(a, a_start, n, b, b_start, m) -> np.ndarray:
    """``_moves``, small units' looked up by pattern (the new patterns aligned and kept)."""
    moves = np.empty(len(n), np.int64)
    small = n * m <= PATTERN_CELLS
    large = np.nonzero(~small)[0]
    moves[large] = _moves(a, a_start[large], n[large], b, b_start[large], m[large])
    small = np.nonzero(small)[0]
    if not small.size:
        return moves
    rows = _pattern_rows(a, a_start[small], n[small], b, b_start[small], m[small])
    data = rows.astype(np.int8).tobytes()
    keys = [data[i : i + PATTERN_WIDTH] for i in range(0, len(data), PATTERN_WIDTH)]
    known = [_pattern_moves.get(key) for key in keys]
    new: dict[bytes, int] = {}
    for i, (key, count) in enumerate(zip(keys, known)):
        if count is None:
            new.setdefault(key, i)
    if new:
        first = np.fromiter(new.values(), np.int64, len(new))
        tokens, start, sn = rows[first].ravel(), np.arange(len(first)) * PATTERN_WIDTH + 1, n[small][first]
        new = dict(zip(new, _moves(tokens, start, sn, tokens, start + sn, m[small][first]).tolist()))
        known = [new[key] if count is None else count for key, count in zip(keys, known)]
        if len(_pattern_moves) >= PATTERNS_KEPT:
            _pattern_moves.clear()
        _pattern_moves.update(new)
    moves[small] = known
    return moves


def _batch_counts(ref_lemmas: pa.Array, ref_heads: pa.Array, out_lemmas: pa.Array) -> np.ndarray:
    """COUNT_FIELDS of rows without NULL lists, as a (rows, 10) array: ``sentence_accuracies``' units
    (each sentence's lemmas; each treelet's positions against its mapped output words), found for
    the whole batch at once and aligned by ``_units_edit_counts``."""
    rows = len(ref_lemmas)
    ref_words, n = _flat(ref_lemmas)
    head_values, heads_n = _flat(ref_heads)
    out_words, m = _flat(out_lemmas)
    if out_words.null_count:
        raise ValueError("NULL lemma in output")
    wrong = np.nonzero(heads_n != n)[0]
    if wrong.size:
        raise ValueError(f"{n[wrong[0]]} reference lemmas but {heads_n[wrong[0]]} heads")
    if head_values.null_count:
        raise ValueError("invalid head None in the reference")
    head = head_values.to_numpy(zero_copy_only=False).astype(np.int64)
    ref_row, ref_start, ref_pos = _segments(n)
    wrong = np.nonzero((head < 0) | (head > n[ref_row]) | (head == ref_pos + 1))[0]
    if wrong.size:
        i = wrong[0]
        raise ValueError(f"invalid head {head[i]} for word {ref_pos[i] + 1} of {n[ref_row[i]]}")
    if ref_words.null_count:
        raise ValueError("NULL lemma in reference")
    words = len(ref_words)
    # Each lemma as an integer, equal for equal lemmas: the alignments only compare tokens
    encoded = pc.dictionary_encode(pa.concat_arrays([ref_words, out_words.cast(ref_words.type)]))
    lemma = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    vocabulary = len(encoded.dictionary)
    ref_lemma, out_lemma = lemma[:words], lemma[words:]
    out_row, out_start, _ = _segments(m)

    # The k-th occurrence of a lemma in the output is mapped to its k-th in the reference: the word
    # whose (row, lemma, occurrence) is the same.
    longest = int(max(n.max(initial=0), m.max(initial=0))) + 1
    key = ref_row * vocabulary + ref_lemma
    ref_key = key * longest + _occurrence(key)
    key = out_row * vocabulary + out_lemma
    out_key = key * longest + _occurrence(key)
    mapped = np.full(len(out_key), -1, np.int64)  # the reference word's index in ref_lemma
    if words:
        order = np.argsort(ref_key)
        at = np.minimum(np.searchsorted(ref_key[order], out_key), words - 1)
        mapped = np.where(ref_key[order[at]] == out_key, order[at], -1)
    is_mapped = mapped >= 0
    shared = np.bincount(out_row[is_mapped], minlength=rows)

    string = _units_edit_counts(ref_lemma, ref_start, n, out_lemma, out_start, m, shared)

    # Treelets, by their head word (index in ref_lemma): members in reference order, and the
    # output's mapped words that belong to them in output order, as ranks among the members.
    has_head = head > 0
    head_at = np.where(has_head, ref_start[ref_row] + head - 1, -1)
    is_head = np.zeros(words, bool)
    is_head[head_at[has_head]] = True
    treelet_of = np.cumsum(is_head) - 1  # of a head word
    head_words = np.nonzero(is_head)[0]
    dependents = np.nonzero(has_head)[0]
    treelets = len(head_words)
    member_treelet = np.concatenate([treelet_of[head_at[dependents]], treelet_of[head_words]])
    member_key = np.sort(member_treelet * words + np.concatenate([dependents, head_words]))
    size = np.bincount(member_treelet, minlength=treelets)
    treelet_start = np.cumsum(size) - size
    # a mapped word belongs to the treelet of its head and, if it has dependents, to its own
    out_index = np.nonzero(is_mapped)[0]
    word = mapped[out_index]
    dependent, own = has_head[word], is_head[word]
    entry_treelet = np.concatenate([treelet_of[head_at[word[dependent]]], treelet_of[word[own]]])
    entry_word = np.concatenate([word[dependent], word[own]])
    order = np.argsort(entry_treelet * len(out_lemma) + np.concatenate([out_index[dependent], out_index[own]]))
    entry_treelet, entry_word = entry_treelet[order], entry_word[order]
    rank = np.searchsorted(member_key, entry_treelet * words + entry_word) - treelet_start[entry_treelet]
    found = np.bincount(entry_treelet, minlength=treelets)
    # positions are distinct: a treelet whose words come in reference order lost only deletions,
    # and is correct if none is missing
    disorder = np.zeros(len(rank), bool)
    disorder[1:] = (rank[1:] < rank[:-1]) & (entry_treelet[1:] == entry_treelet[:-1])
    disordered = np.zeros(treelets, bool)
    disordered[entry_treelet[disorder]] = True
    tree = np.zeros((treelets, 4), np.int64)
    tree[:, 1] = size - found
    hard = np.nonzero(disordered)[0]
    if hard.size:  # their members' ranks against the found words' ranks, all of which are members
        hard_size, hard_found = size[hard], found[hard]
        _, hard_start, members = _segments(hard_size)
        found_start = np.cumsum(hard_found) - hard_found
        tree[hard] = _units_edit_counts(
            members, hard_start, hard_size, rank[disordered[entry_treelet]], found_start, hard_found, hard_found
        )
    treelet_row = ref_row[head_words]
    counts = np.zeros((rows, len(COUNT_FIELDS)), np.int64)
    counts[:, :4] = string
    for field in range(4):
        counts[:, 4 + field] = np.bincount(treelet_row, weights=tree[:, field], minlength=rows)
    counts[:, 8] = np.bincount(treelet_row, weights=~disordered & (found == size), minlength=rows)
    counts[:, 9] = np.bincount(treelet_row, minlength=rows)
    return counts


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
    """Register ``srlens_accuracy_counts(VARCHAR[], INTEGER[], VARCHAR[]) -> STRUCT(COUNT_FIELDS)``,
    what int_sentence_accuracies calls, on ``con``."""
    con.create_function(
        "srlens_accuracy_counts",
        srlens_accuracy_counts_arrow,
        ["VARCHAR[]", "INTEGER[]", "VARCHAR[]"],
        "STRUCT(" + ", ".join(f"{name} INTEGER" for name in COUNT_FIELDS) + ")",
        type="arrow",
        null_handling="special",
        side_effects=False,
    )


def register_references(con: duckdb.DuckDBPyConnection) -> None:
    """Register ``srlens_accuracies(VARCHAR[], INTEGER[], VARCHAR[]) -> STRUCT``, the plain-Python
    definition as SQL, on ``con``: no model calls it, tests and benchmarks compare with it."""
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
