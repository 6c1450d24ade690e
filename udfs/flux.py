"""Mean flux weight: the one tree metric SQL cannot express cleanly.

The flux weight at an inter-word position is the size of a maximum matching
among the edges crossing it (the largest set of pairwise vertex-disjoint
edges). The crossing edges form a forest (a subset of a tree's edges), and on
a forest matching a leaf to its only neighbour is always part of some maximum
matching, so peeling leaves gives the exact maximum, not an approximation.
"""

import pyarrow as pa


def max_forest_matching(edges):
    """Size of a maximum matching of a forest given as (a, b) vertex pairs."""
    neighbours = {}
    for a, b in edges:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    leaves = [v for v, ns in neighbours.items() if len(ns) == 1]
    matched = 0
    while leaves:
        leaf = leaves.pop()
        if len(neighbours.get(leaf, ())) != 1:
            continue  # already matched, or isolated after its neighbour was matched
        (partner,) = neighbours.pop(leaf)
        matched += 1
        for v in neighbours.pop(partner):
            if v != leaf:
                neighbours[v].discard(partner)
                if len(neighbours[v]) == 1:
                    leaves.append(v)
    return matched


def mean_flux_weight(heads):
    """MFW of a tree given as heads[i] = head position of word i+1 (0 = root)."""
    n = len(heads)
    if n <= 1:
        return 0.0
    edges = sorted((min(d, h), max(d, h)) for d, h in enumerate(heads, start=1) if h != 0)
    total = 0
    for p in range(1, n):
        total += max_forest_matching([(a, b) for a, b in edges if a <= p < b])
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
