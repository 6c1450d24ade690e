"""Independent pure-Python reference implementation of the srlens tree metrics.

This module exists only so that the tests can compare the SQL implementation
(DuckDB + dbt) against something written separately and kept deliberately
simple.  It follows the shared SPEC.md, "Conventions" and sections 1 and 2.
Clarity is preferred over speed throughout; every metric is computed directly
from its definition, never through an identity (MDD == MFS, arity ==
(n-1)/n) so that the tests can use those identities as checks.

It reads CoNLL-U with the third-party ``conllu`` package (``conllu.parse_incr``),
a parser different from the project's own loader, and uses ``networkx`` for the
exact maximum matching needed by the mean flux weight.

Analysis tree (SPEC "Conventions")
----------------------------------
* Only syntactic words (integer IDs) are tree nodes; multiword-token ranges
  (``3-4``) and empty nodes (``8.1``) are skipped.
* Every word whose DEPREL is exactly ``punct`` is dropped (the full label is
  compared; UD has no ``punct:*`` subtypes, but a hypothetical ``punct:x``
  would *not* be dropped).  A kept word whose head is dropped is re-attached to
  its nearest non-dropped ancestor; the kept words are renumbered 1..n in their
  original order.  Each kept word keeps its own DEPREL.
* If the nearest non-dropped "ancestor" is the artificial root 0 (which only
  happens when the root word itself is ``punct``), the word becomes a root
  (analysis head 0).  Such an analysis tree can have several roots, i.e. it is
  a forest.  The metrics below are then defined as follows (documented choice,
  the spec is silent):
    - tree_depth: largest distance from *any* root word to a word;
    - MDD: mean over the edges that actually exist (words with head != 0);
      0 when there is no such edge;
    - MFS / MFW: the definitions are applied unchanged (positions 1..n-1,
      non-root edges only);
    - mean_arity: counted directly (so it is (n - #roots) / n);
    - is_projective: the definition is applied with "no edge spans a root word"
      for every root word.
  No sentence of the shared treebanks (ud/*: en_ewt, de_gsd,
  fr_gsd, ru_gsd) has a punct root word, so this case never occurs there; it
  is exercised only by a hand-made test.
* The rule is on DEPREL, not UPOS: a word with UPOS PUNCT whose DEPREL is not
  ``punct`` (en_ewt test has 31, all DEPREL ``root``, e.g. a sentence that is
  just an emoticon) is kept as a word.
* A sentence whose words are all ``punct`` has n = 0: every metric is None.

Relation entropy (SPEC section 2)
---------------------------------
Counted over the non-root edges of the analysis trees (the ``root`` relation
has no head position and is therefore left out), grouped by base relation
(the part of the DEPREL before the first ``:``).  ``left`` counts dependents
that precede their head, ``right`` those that follow it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import conllu
import networkx as nx

PUNCT = "punct"


@dataclass(frozen=True)
class AnalysisTree:
    """One sentence as an analysis tree (punctuation removed, renumbered).

    Lists are indexed by analysis position - 1 (position i lives at [i - 1]).
    ``heads`` holds analysis positions, 0 for a root word.
    """

    sent_id: str
    sentence_index: int  # 1-based index of the sentence in the file
    lemmas: tuple
    upos: tuple
    deprels: tuple  # full labels, e.g. "nmod:poss"
    heads: tuple  # analysis positions, 0 = root

    @property
    def n(self) -> int:
        return len(self.heads)


def base_relation(deprel: str) -> str:
    """``nmod:poss`` -> ``nmod``."""
    return deprel.split(":", 1)[0]


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


def analysis_tree_from_tokenlist(tokenlist, sentence_index: int) -> AnalysisTree:
    """Build the analysis tree of one ``conllu.TokenList``."""
    # 1. Syntactic words only (integer ids).
    words = [tok for tok in tokenlist if isinstance(tok["id"], int)]
    by_id = {tok["id"]: tok for tok in words}

    # 2. Which words are kept (not punct)?
    kept_ids = [tok["id"] for tok in words if tok["deprel"] != PUNCT]
    new_position = {old_id: pos for pos, old_id in enumerate(kept_ids, start=1)}

    # 3. Nearest non-dropped ancestor of each kept word.
    def kept_ancestor(old_id: int) -> int:
        head = by_id[old_id]["head"]
        seen = set()
        while head != 0 and head not in new_position:
            if head in seen:  # defensive: a cycle would be malformed input
                raise ValueError(f"cycle in sentence {sentence_index}")
            seen.add(head)
            head = by_id[head]["head"]
        return head

    heads = []
    for old_id in kept_ids:
        anc = kept_ancestor(old_id)
        heads.append(0 if anc == 0 else new_position[anc])

    sent_id = tokenlist.metadata.get("sent_id")
    if sent_id is None:
        sent_id = str(sentence_index)

    return AnalysisTree(
        sent_id=sent_id,
        sentence_index=sentence_index,
        lemmas=tuple(by_id[i]["lemma"] for i in kept_ids),
        upos=tuple(by_id[i]["upos"] for i in kept_ids),
        deprels=tuple(by_id[i]["deprel"] for i in kept_ids),
        heads=tuple(heads),
    )


def read_analysis_trees(path) -> list[AnalysisTree]:
    """Read a CoNLL-U file with ``conllu.parse_incr`` into analysis trees."""
    trees = []
    with open(path, encoding="utf-8") as handle:
        for index, tokenlist in enumerate(conllu.parse_incr(handle), start=1):
            trees.append(analysis_tree_from_tokenlist(tokenlist, index))
    return trees


def parse_analysis_trees(text: str) -> list[AnalysisTree]:
    """Same as :func:`read_analysis_trees`, from a CoNLL-U string (for tests)."""
    return [
        analysis_tree_from_tokenlist(tokenlist, index) for index, tokenlist in enumerate(conllu.parse(text), start=1)
    ]


# ---------------------------------------------------------------------------
# Per-sentence metrics
# ---------------------------------------------------------------------------


def edges(tree: AnalysisTree) -> list[tuple[int, int]]:
    """Non-root edges as (head, dependent) analysis positions."""
    return [(head, dep) for dep, head in enumerate(tree.heads, start=1) if head != 0]


def roots(tree: AnalysisTree) -> list[int]:
    return [dep for dep, head in enumerate(tree.heads, start=1) if head == 0]


def depth_of(tree: AnalysisTree, word: int) -> int:
    """Number of edges from ``word`` up to its root word."""
    depth = 0
    while tree.heads[word - 1] != 0:
        word = tree.heads[word - 1]
        depth += 1
        if depth > tree.n:
            raise ValueError(f"cycle in sentence {tree.sent_id}")
    return depth


def is_ancestor(tree: AnalysisTree, ancestor: int, word: int) -> bool:
    """True iff ``ancestor`` is a proper ancestor of ``word``."""
    current = tree.heads[word - 1]
    while current != 0:
        if current == ancestor:
            return True
        current = tree.heads[current - 1]
    return False


def flux(tree: AnalysisTree, p: int) -> list[tuple[int, int]]:
    """Non-root edges (a, b), a < b, with a <= p < b (as (a, b) pairs)."""
    result = []
    for head, dep in edges(tree):
        a, b = min(head, dep), max(head, dep)
        if a <= p < b:
            result.append((a, b))
    return result


def max_disjoint_edges(edge_list: list[tuple[int, int]]) -> int:
    """Largest number of pairwise vertex-disjoint edges (exact maximum matching)."""
    if not edge_list:
        return 0
    graph = nx.Graph()
    graph.add_edges_from(edge_list)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    return len(matching)


def sentence_metrics(tree: AnalysisTree) -> dict:
    """The SPEC section-1 metrics of one analysis tree."""
    n = tree.n
    keys = (
        "tree_depth",
        "tree_length",
        "mean_dependency_distance",
        "mean_flux_size",
        "mean_flux_weight",
        "mean_arity",
        "is_projective",
    )
    if n == 0:
        return {key: None for key in keys}

    edge_list = edges(tree)
    root_words = roots(tree)

    # tree_depth: largest number of edges from the root word to a word.
    tree_depth = max(depth_of(tree, w) for w in range(1, n + 1))

    # MDD: mean |pos(dep) - pos(head)| over non-root edges.
    if edge_list:
        mdd = sum(abs(dep - head) for head, dep in edge_list) / len(edge_list)
    else:
        mdd = 0.0

    # MFS and MFW: over inter-word positions p = 1..n-1.
    if n == 1:
        mfs = 0.0
        mfw = 0.0
    else:
        positions = range(1, n)
        fluxes = [flux(tree, p) for p in positions]
        mfs = sum(len(f) for f in fluxes) / len(fluxes)
        mfw = sum(max_disjoint_edges(f) for f in fluxes) / len(fluxes)

    # Mean arity: count the dependents of every word.
    dependents = {w: 0 for w in range(1, n + 1)}
    for head, _dep in edge_list:
        dependents[head] += 1
    mean_arity = sum(dependents.values()) / n

    # Projectivity.
    projective = True
    for head, dep in edge_list:
        a, b = min(head, dep), max(head, dep)
        for between in range(a + 1, b):
            if not is_ancestor(tree, head, between):
                projective = False
        for r in root_words:
            if a < r < b:
                projective = False

    return {
        "tree_depth": tree_depth,
        "tree_length": n,
        "mean_dependency_distance": mdd,
        "mean_flux_size": mfs,
        "mean_flux_weight": mfw,
        "mean_arity": mean_arity,
        "is_projective": projective,
    }


# ---------------------------------------------------------------------------
# Relation entropy
# ---------------------------------------------------------------------------


def binary_entropy(left: int, right: int) -> float:
    """-p(L) log2 p(L) - p(R) log2 p(R), with 0 log 0 = 0."""
    total = left + right
    h = 0.0
    for count in (left, right):
        if count > 0:
            p = count / total
            h -= p * math.log2(p)
    return h


def relation_entropy(trees: Iterable[AnalysisTree]) -> dict[str, tuple[int, int, float]]:
    """base relation -> (left_count, right_count, entropy) over non-root edges."""
    counts: dict[str, list[int]] = {}
    for tree in trees:
        for dep, head in enumerate(tree.heads, start=1):
            if head == 0:
                continue
            rel = base_relation(tree.deprels[dep - 1])
            left_right = counts.setdefault(rel, [0, 0])
            if dep < head:
                left_right[0] += 1
            else:
                left_right[1] += 1
    return {rel: (left, right, binary_entropy(left, right)) for rel, (left, right) in sorted(counts.items())}


def summarize(trees: list[AnalysisTree]) -> dict:
    """Corpus summary used in reports (not part of the SPEC interface)."""
    metrics = [sentence_metrics(t) for t in trees]
    defined = [m for m in metrics if m["tree_length"] is not None]
    summary = {
        "sentences": len(trees),
        "n0": sum(1 for t in trees if t.n == 0),
        "n1": sum(1 for t in trees if t.n == 1),
        "non_projective": sum(1 for m in defined if not m["is_projective"]),
        "multi_root": sum(1 for t in trees if len(roots(t)) > 1),
    }
    for key in (
        "tree_depth",
        "tree_length",
        "mean_dependency_distance",
        "mean_flux_size",
        "mean_flux_weight",
        "mean_arity",
    ):
        summary["mean_" + key] = sum(m[key] for m in defined) / len(defined)
    return summary


def punct_root_sentences(path) -> list[str]:
    """sent_ids (or indexes) of sentences whose root word has DEPREL punct."""
    found = []
    with open(path, encoding="utf-8") as handle:
        for index, tokenlist in enumerate(conllu.parse_incr(handle), start=1):
            for tok in tokenlist:
                if isinstance(tok["id"], int) and tok["head"] == 0 and tok["deprel"] == PUNCT:
                    found.append(tokenlist.metadata.get("sent_id", str(index)))
    return found


if __name__ == "__main__":  # pragma: no cover - manual summary
    import sys
    import time

    from tests.conftest import EN_EWT_TEST

    path = sys.argv[1] if len(sys.argv) > 1 else EN_EWT_TEST
    start = time.perf_counter()
    trees = read_analysis_trees(path)
    summary = summarize(trees)
    elapsed = time.perf_counter() - start
    for key, value in summary.items():
        print(f"{key}: {value}")
    print("punct root sentences:", punct_root_sentences(path))
    print(f"elapsed: {elapsed:.2f}s")
