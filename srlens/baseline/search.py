"""The search of the Hall and Nemec (2007) baseline: one tree's words in order, pure Python.

Search (`linearize_sentence`)
-----------------------------
For a head with k dependents, the dependents are ordered by the permutation
that maximizes the product of P(a before b) over all pairs a before b (the
paper's Eq. 7 scores adjacent children c_i, c_i+1; over all pairs, every
training pair's evidence counts and the score is a proper linear-ordering
objective). The exact maximum over all k! permutations is found by dynamic
programming over subsets, O(2^k k), for k <= EXACT_MAX (12; in en_ewt train
only 7 of 83,960 heads, the virtual root included, have more dependents).
Above that: sort by the sum of P(a before b) over b, then swap adjacent
dependents while a swap raises the score. Then, as in the paper's greedy
second step, the head goes into the gap that maximizes
prod P(c before head) over the dependents left of it times
prod P(head before c) over those right of it.

Determinism without leaking the reference order: word ids are the reference
positions, so they never break ties. Each word gets a rank from a seeded hash
of (seed, sent_id, word id); dependents enter the search in rank order, and
among permutations of equal score the search keeps the first one found in
that order. Equal-score gaps for the head go to the leftmost one.

`random` (reserved model name): the paper's baseline "sorts subtrees of each
node randomly": each head's domain (the head and its dependents) is shuffled
uniformly with a generator seeded by (seed, sent_id, head id); the output is
still projective.
"""

from __future__ import annotations

import hashlib
import math
import random

EXACT_MAX = 12


def _rank(seed, sent_id, word_id):
    """A pseudo-random, seeded rank of a word: the tie-breaker that knows nothing of word order."""
    digest = hashlib.blake2b(f"{seed}\x1f{sent_id}\x1f{word_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def best_order(logp):
    """Indices 0..k-1 in the order maximizing sum of logp[i][j] over i placed before j.

    Exact (dynamic programming over subsets) up to EXACT_MAX items; a greedy sort with
    adjacent-swap improvement above. Among equal scores the first found wins, items being
    tried in index order. Returns (order, exact).
    """
    k = len(logp)
    if k <= 1:
        return list(range(k)), True
    if k > EXACT_MAX:
        return _greedy_order(logp), False
    size = 1 << k
    # into[x][S] = sum of logp[y][x] for y in S: the gain of placing x right after the set S.
    into = []
    for x in range(k):
        col = [0.0] * size
        row = [logp[y][x] for y in range(k)]
        for s in range(1, size):
            low = s & -s
            col[s] = col[s ^ low] + row[low.bit_length() - 1]
        into.append(col)
    best = [-math.inf] * size
    last = [0] * size
    best[0] = 0.0
    for s in range(1, size):
        top, arg = -math.inf, -1
        rest = s
        while rest:
            low = rest & -rest
            x = low.bit_length() - 1
            rest ^= low
            score = best[s ^ low] + into[x][s ^ low]
            if score > top:
                top, arg = score, x
        best[s], last[s] = top, arg
    order, s = [], size - 1
    while s:
        x = last[s]
        order.append(x)
        s ^= 1 << x
    order.reverse()
    return order, True


def _greedy_order(logp):
    k = len(logp)
    # Sort by the total probability of preceding the others, then fix adjacent inversions.
    strength = [sum(math.exp(logp[i][j]) for j in range(k) if j != i) for i in range(k)]
    order = sorted(range(k), key=lambda i: (-strength[i], i))
    changed = True
    while changed:
        changed = False
        for i in range(k - 1):
            a, b = order[i], order[i + 1]
            if logp[b][a] > logp[a][b]:
                order[i], order[i + 1] = b, a
                changed = True
    return order


def _head_gap(side_probs):
    """Number of ordered dependents to put left of the head (leftmost of equal-score gaps).

    side_probs: per ordered dependent, (P(before the head), P(after it)).
    """
    logs_before = [math.log(p) for p, _ in side_probs]
    logs_after = [math.log(q) for _, q in side_probs]
    score = sum(logs_after)  # gap 0: every dependent after the head
    best, arg = score, 0
    for g, (lb, la) in enumerate(zip(logs_before, logs_after), start=1):
        score += lb - la
        if score > best:
            best, arg = score, g
    return arg


def linearize_sentence(sent_id, heads, seed=0, pair_prob=None, side_prob=None, stats=None):
    """Word ids of one tree in output order.

    heads: {word_id: head_id}. pair_prob(a, b) = P(a before b) for siblings, side_prob(c) =
    (P(c before its head), P(c after it)); without them the order is random (a seeded shuffle of
    each head's domain).
    """
    children = {0: []}
    for w in heads:
        children.setdefault(w, [])
    for w, h in heads.items():
        children.setdefault(h, []).append(w)
    rank = {w: _rank(seed, sent_id, w) for w in heads}
    for kids in children.values():
        kids.sort(key=rank.__getitem__)  # search order: seeded rank, never the word id
    domains = {}
    for h, kids in children.items():
        if not kids and h != 0:
            domains[h] = [h]
        elif pair_prob is None:
            items = kids + ([h] if h != 0 else [])
            random.Random(_rank(seed, sent_id, f"domain-{h}")).shuffle(items)
            domains[h] = items
        else:
            logp = [
                [0.0 if i == j else math.log(pair_prob(a, b)) for j, b in enumerate(kids)] for i, a in enumerate(kids)
            ]
            order, exact = best_order(logp)
            if stats is not None:
                stats["exact" if exact else "fallback"] += 1
            ordered = [kids[i] for i in order]
            if h != 0:
                gap = _head_gap([side_prob(c) for c in ordered])
                ordered = ordered[:gap] + [h] + ordered[gap:]
            domains[h] = ordered
    # Expand domains top-down without recursion: a dependent stands for its whole subtree.
    out, stack, seen = [], [(0, iter(domains[0]))], set()
    while stack:
        h, items = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
        elif item == h or item in seen:
            out.append(item)
        else:
            seen.add(item)
            stack.append((item, iter(domains[item])))
    if len(out) < len(heads):  # unreachable words (not a tree): keep them, in rank order
        placed = set(out)
        out += sorted((w for w in heads if w not in placed), key=rank.__getitem__)
    return out
