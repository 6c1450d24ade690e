"""Mean flux weight: the one tree metric SQL cannot express cleanly.

The flux weight at an inter-word position p is the size of a maximum matching
among the edges crossing p (the largest set of pairwise vertex-disjoint edges).
The crossing edges are a subset of the tree's edges, a forest, and on a forest
the greedy from the leaves up is exact (a leaf matched to its parent is part of
some maximum matching): taking words children first, a word is matched to one
of its children iff one of its crossing child edges leads to a child that is
still unmatched.

All positions at once: `down[w]` is a bit set over positions, bit p set iff w
is matched to one of its children at p. An edge (a, b), a < b, crosses the
positions a..b-1, so for every word w

    down[w] = OR over children c of (bits a..b-1 of the edge c-w) AND NOT down[c]

and the sum over p of the matching sizes is the sum of the bit counts of
`down`: one matched edge per word matched downward. That is O(n) integer
operations per tree where a matching per position cost O(n^2).
"""

import pyarrow as pa


def mean_flux_weight(heads):
    """MFW of a tree given as heads[i] = head position of word i+1 (0 = root; several roots allowed)."""
    n = len(heads)
    if n <= 1:
        return 0.0
    children = [[] for _ in range(n + 1)]
    for word, head in enumerate(heads, start=1):
        children[head].append(word)
    parents_first = list(children[0])  # breadth-first from the roots (0 itself is no word)
    for word in parents_first:  # the list grows while it is read
        parents_first.extend(children[word])
    down = [0] * (n + 1)
    total = 0
    for word in reversed(parents_first):
        bits = 0
        for child in children[word]:
            low, high = (child, word) if child < word else (word, child)
            bits |= ((1 << high) - (1 << low)) & ~down[child]
        down[word] = bits
        total += bits.bit_count()
    return total / (n - 1)


def mean_flux_weight_arrow(heads):
    """Arrow batch form: a list<int> column of head lists -> double column."""
    return pa.array([None if h is None else mean_flux_weight(h) for h in heads.to_pylist()], type=pa.float64())


def register(con):
    con.create_function(
        "srlens_mean_flux_weight",
        mean_flux_weight_arrow,
        ["INTEGER[]"],
        "DOUBLE",
        type="arrow",
        null_handling="special",
    )
