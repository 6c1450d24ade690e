"""srlens.metrics: the warehouse's sentence-level figures as pure Python functions over one sentence.

Each function gives what `srlens build` stores for the same sentence (tests/metrics/test_metrics.py checks
them against the marts of the demo), without a warehouse:

* `tree_metrics(reference)`: SPEC section 1 (sentence_complexity);
* `dea(reference, output)` and `dea_details(reference, output)`: SPEC section 3 (sentence_scores.dea,
  dea_by_relation);
* `sentence_bleu(reference_lemmas, output_lemmas)`: SPEC section 4 (sentence_scores.bleu);
* `accuracies(reference, output)`, `reorder_accuracy(reference, output)`: SPEC sections 5 and 7;
* `lambre_checks(parsed, rules)`, `lambre_score(parsed, rules)`: SPEC section 9 (rule_score).

`reference` is one sentence of a UD treebank: a `conllu.TokenList` or a CoNLL-U string. It is
turned into its analysis tree (punctuation dropped, words renumbered; `analysis_tree`). (The
conllu package reads columns split by a tab or by two or more spaces, as in the examples below.) `output`
is the output's lemma sequence with punctuation removed, as the build's processor gives it (a list,
or one string split at spaces); lemmas are compared lower-cased. The definitions are the ones the
UDFs run (srlens.udfs.accuracy, srlens.udfs.bleu, srlens.udfs.flux): this module only calls them.

Figure 1 of SPEC (fixtures/figure1.conllu):

>>> figure1 = '''# sent_id = figure1
... 1  I  I  PRON  PRP  _  2  nsubj  _  _
... 2  enjoyed  enjoy  VERB  VBD  _  0  root  _  _
... 3  my  my  PRON  PRP$  _  4  nmod:poss  _  _
... 4  time  time  NOUN  NN  _  2  obj  _  _
... 5  at  at  ADP  IN  _  8  case  _  _
... 6  Franklin  franklin  PROPN  NNP  _  8  compound  _  _
... 7  High  high  PROPN  NNP  _  8  compound  _  _
... 8  School  school  PROPN  NNP  _  4  nmod  _  _
... 9  .  .  PUNCT  .  _  2  punct  _  _
... '''
>>> dea(figure1, "I enjoy my time at high franklin school")  # misses (school, high, -1), (school, franklin, -2)
0.7142857142857143
>>> dea(figure1, "I enjoy my time at franklin high school")
1.0
>>> tree_metrics(figure1)
{'tree_depth': 3, 'tree_length': 8, 'mean_dependency_distance': 2.0, 'mean_flux_size': 2.0, \
'mean_flux_weight': 1.0, 'mean_arity': 0.875, 'is_projective': True}
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import conllu

from srlens.udfs import accuracy as _accuracy
from srlens.udfs import bleu as _bleu
from srlens.udfs.flux import mean_flux_weight as _mean_flux_weight

__all__ = [
    "ACCURACY_NAMES",
    "AnalysisTree",
    "DEADetails",
    "RuleCheck",
    "accuracies",
    "analysis_tree",
    "dea",
    "dea_details",
    "lambre_checks",
    "lambre_score",
    "reorder_accuracy",
    "rule",
    "sentence_bleu",
    "tree_metrics",
]

ACCURACY_NAMES = _accuracy.ACCURACY_FIELDS


def base_relation(deprel: str) -> str:
    """``nmod:poss`` -> ``nmod``."""
    return deprel.split(":", 1)[0]


# ----------------------------------------------------------------------------- the analysis tree


@dataclass(frozen=True)
class AnalysisTree:
    """A reference sentence without punctuation, words renumbered 1..n (SPEC, conventions).

    Lists are indexed by position - 1. ``heads`` holds analysis positions, 0 for a root word (a
    punctuation root leaves its dependents as roots, as in the warehouse).
    """

    lemmas: tuple
    upos: tuple
    deprels: tuple
    heads: tuple

    @property
    def n(self) -> int:
        return len(self.heads)

    def edges(self) -> list[tuple[int, int]]:
        """Non-root edges as (head, dependent) positions, in dependent order."""
        return [(h, d) for d, h in enumerate(self.heads, start=1) if h]


def _sentence(reference) -> conllu.TokenList:
    if isinstance(reference, AnalysisTree):
        return reference
    if isinstance(reference, str):
        sentences = conllu.parse(reference)
        if len(sentences) != 1:
            raise ValueError(f"expected one CoNLL-U sentence, got {len(sentences)}")
        return sentences[0]
    if isinstance(reference, conllu.TokenList):
        return reference
    raise TypeError(f"reference must be a conllu.TokenList or a CoNLL-U string, not {type(reference).__name__}")


def analysis_tree(reference) -> AnalysisTree:
    """The analysis tree of one reference sentence (a conllu.TokenList or a CoNLL-U string).

    Syntactic words only (no multiword ranges, no empty nodes); a word whose base deprel is
    ``punct`` is dropped and its dependents attach to the nearest kept ancestor.
    """
    sentence = _sentence(reference)
    if isinstance(sentence, AnalysisTree):
        return sentence
    words = {t["id"]: t for t in sentence if isinstance(t["id"], int)}
    kept = [i for i, t in words.items() if base_relation(t["deprel"] or "_") != "punct"]
    position = {word_id: pos for pos, word_id in enumerate(kept, start=1)}

    def kept_head(word_id):
        head, seen = words[word_id]["head"], set()
        while head and head not in position:
            if head in seen or head not in words:
                raise ValueError(f"word {word_id}: its heads do not lead to the root")
            seen.add(head)
            head = words[head]["head"]
        return position.get(head, 0)

    return AnalysisTree(
        lemmas=tuple(words[i]["lemma"] for i in kept),
        upos=tuple(words[i]["upos"] for i in kept),
        deprels=tuple(words[i]["deprel"] for i in kept),
        heads=tuple(kept_head(i) for i in kept),
    )


def _lemmas(output) -> list[str]:
    words = output.split() if isinstance(output, str) else list(output)
    return [w.lower() for w in words]


# ----------------------------------------------------------------------------- SPEC section 1


def tree_metrics(reference) -> dict:
    """SPEC section 1 of one reference sentence, as in the mart sentence_complexity.

    Every value is None for a sentence without words (all punctuation). On a forest (punctuation
    root) depth counts from each word's own root, MDD and arity count the edges that exist.
    """
    tree = analysis_tree(reference)
    n, edges = tree.n, tree.edges()
    names = (
        "tree_depth",
        "tree_length",
        "mean_dependency_distance",
        "mean_flux_size",
        "mean_flux_weight",
        "mean_arity",
        "is_projective",
    )
    if n == 0:
        return dict.fromkeys(names)

    def ancestors(pos):
        found = []
        while tree.heads[pos - 1]:
            pos = tree.heads[pos - 1]
            found.append(pos)
        return found

    above = {pos: ancestors(pos) for pos in range(1, n + 1)}
    spans = [(min(h, d), max(h, d), h) for h, d in edges]
    flux_sizes = [sum(a <= p < b for a, b, _ in spans) for p in range(1, n)]
    return {
        "tree_depth": max(len(a) for a in above.values()),
        "tree_length": n,
        "mean_dependency_distance": sum(b - a for a, b, _ in spans) / len(spans) if spans else 0.0,
        "mean_flux_size": sum(flux_sizes) / len(flux_sizes) if flux_sizes else 0.0,
        "mean_flux_weight": _mean_flux_weight(list(tree.heads)),
        "mean_arity": len(edges) / n,
        # Every word strictly inside an edge descends from its head.
        "is_projective": all(h in above[w] for a, b, h in spans for w in range(a + 1, b)),
    }


# ----------------------------------------------------------------------------- SPEC section 3


class DEADetails(NamedTuple):
    """DEA of one sentence with its parts: the figures of sentence_scores and dea_by_relation."""

    dea: float | None  # matched / (n - 1); None when n = 1 (or 0)
    matched: int  # sentence_scores.dea_matched
    edges: int  # sentence_scores.dea_edges: non-root edges
    by_relation: dict  # base relation -> (edges, matched)
    matched_edges: tuple  # per edge, in reference order: (head_lemma, dep_lemma, distance, deprel, matched)


def dea_details(reference, output) -> DEADetails:
    """DEA of one sentence, per edge and per base relation (SPEC section 3).

    An edge is the triple (head lemma, dependent lemma, signed distance); the output holds it once
    per position i with lemma[i] = head and lemma[i + distance] = dependent; the triple's edges
    take its occurrences in reference order (multiset clipping).

    >>> d = dea_details('''1	a	a	DET	_	_	2	det	_	_
    ... 2  dog  dog  NOUN  _  _  3  nsubj  _  _
    ... 3  barks  bark  VERB  _  _  0  root  _  _
    ... ''', ["dog", "bark", "a"])
    >>> d.dea, d.by_relation
    (0.5, {'det': (1, 0), 'nsubj': (1, 1)})
    """
    tree = analysis_tree(reference)
    out = _lemmas(output)
    ref = [str(x).lower() for x in tree.lemmas]
    triples = [(ref[h - 1], ref[d - 1], d - h, tree.deprels[d - 1]) for h, d in tree.edges()]
    at = defaultdict(list)
    for i, lemma in enumerate(out):
        at[lemma].append(i)
    in_output = {}
    for head, dep, k, _ in triples:
        if (head, dep, k) not in in_output:
            in_output[head, dep, k] = sum(0 <= i + k < len(out) and out[i + k] == dep for i in at.get(head, ()))
    used = Counter()
    by_relation = defaultdict(lambda: [0, 0])
    per_edge = []
    for head, dep, k, deprel in triples:
        hit = used[head, dep, k] < in_output[head, dep, k]
        used[head, dep, k] += hit
        counts = by_relation[base_relation(deprel)]
        counts[0] += 1
        counts[1] += hit
        per_edge.append((head, dep, k, deprel, hit))
    matched = sum(e[-1] for e in per_edge)
    return DEADetails(
        dea=matched / (tree.n - 1) if tree.n > 1 else None,
        matched=matched,
        edges=len(per_edge),
        by_relation={rel: tuple(c) for rel, c in sorted(by_relation.items())},
        matched_edges=tuple(per_edge),
    )


def dea(reference, output) -> float | None:
    """Dependency edge accuracy of one output sentence (SPEC section 3); None when n = 1."""
    return dea_details(reference, output).dea


# ----------------------------------------------------------------------------- SPEC section 4


def sentence_bleu(reference_lemmas, output_lemmas) -> float:
    """Sentence BLEU-4 on the lower-cased lemmas: nltk's sentence_bleu, smoothing method 2.

    >>> sentence_bleu("the dog barks loudly", "the dog barks loudly")
    1.0
    >>> round(sentence_bleu("the dog barks loudly", "the dog barks"), 4)
    0.6025
    """
    return _bleu.sentence_bleu(_lemmas(output_lemmas), _lemmas(reference_lemmas))


# ----------------------------------------------------------------------------- SPEC sections 5, 7


def accuracies(reference, output) -> dict:
    """String, tree and reordering accuracies (SPEC 5 and 7) with their edit counts.

    Keys: ACCURACY_NAMES (simple_string_accuracy, ..., reorder_accuracy) and the counts
    (string_ins, ..., reorder_total) of udfs/accuracy.py, which runs the same function in the build.
    The SPEC 5 example (Bangalore et al. 2000):

    >>> words = "There was no cost estimate for the second phase".split()
    >>> heads = [2, 0, 5, 5, 2, 9, 9, 9, 5]
    >>> ref = "".join(f"{i}\\t{w}\\t{w}\\tX\\t_\\t_\\t{h}\\t{'root' if h == 0 else 'dep'}\\t_\\t_\\n"
    ...               for i, (w, h) in enumerate(zip(words, heads), start=1))
    >>> a = accuracies(ref, "There was estimate for phase the second no cost")
    >>> round(a["simple_string_accuracy"], 2), round(a["generation_string_accuracy"], 2)
    (0.44, 0.56)
    """
    tree = analysis_tree(reference)
    return _accuracy.sentence_accuracies(list(tree.lemmas), list(tree.heads), _lemmas(output))


def reorder_accuracy(reference, output) -> float | None:
    """Share of reference words with dependents whose treelet keeps the reference order (SPEC 7)."""
    return accuracies(reference, output)["reorder_accuracy"]


# ----------------------------------------------------------------------------- SPEC section 9


class RuleCheck(NamedTuple):
    """One check of a rule on one word of a parsed output (a row of the build's int_lambre_checks)."""

    rule_id: str
    word: int  # the dependent's CoNLL-U id
    head: int
    passed: bool


def rule(rule_id: str, allowed_values: Iterable[str] | None = None, enabled: bool = True) -> dict:
    """A rule as a row of lambre_rules, from its rule_id (language|kind|deprel|DEP>HEAD|feature[|side]).

    allowed_values (argstruct): the allowed value sets, e.g. ["Acc", "Nom"].
    """
    from srlens.loaders.rules import parse_rule_id

    definition = parse_rule_id(rule_id)
    if definition is None:
        raise ValueError(f"{rule_id!r} is not language|kind|deprel|DEP>HEAD|feature[|side]")
    return {"rule_id": rule_id, **definition, "allowed_values": list(allowed_values or []) or None, "enabled": enabled}


def _rule_id(r: Mapping) -> str:
    from srlens.loaders.rules import rule_id

    return r.get("rule_id") or rule_id(
        *(r.get(c) for c in ("language", "kind", "deprel", "dep_upos", "head_upos", "feature", "side"))
    )


def _features(token) -> dict:
    """feature -> set of values of one conllu token (``PronType=Int,Rel`` -> {Int, Rel})."""
    feats = token.get("feats") or {}
    if isinstance(feats, str):
        feats = dict(item.split("=", 1) for item in feats.split("|") if "=" in item.strip("="))
    return {name: set(str(value).split(",")) for name, value in feats.items() if value}


def lambre_checks(parsed, rules: Iterable[Mapping]) -> list[RuleCheck]:
    """Every check of the enabled rules on one parsed output sentence (SPEC section 9).

    parsed: a conllu.TokenList or CoNLL-U string with UPOS, FEATS, HEAD and DEPREL. rules: rows of
    the mart lambre_rules (mappings with kind, deprel, dep_upos, head_upos, feature, side,
    allowed_values, enabled), or `rule(...)`; pass the rules of the sentence's language.
    An agreement rule fires on every instance of its link and fails only when both words carry the
    feature with disjoint value sets; an argstruct rule fires when the word on its side carries the
    feature and fails when a value is outside the allowed ones.
    """
    sentence = _sentence(parsed)
    words = {t["id"]: t for t in sentence if isinstance(t["id"], int)}
    active = [r for r in rules if r.get("enabled", True)]
    checks = []
    for word_id, word in words.items():
        head = words.get(word["head"]) if word["head"] else None
        if head is None:
            continue
        for r in active:
            if (r["deprel"], r["dep_upos"], r["head_upos"]) != (word["deprel"], word["upos"], head["upos"]):
                continue
            dep_values = _features(word).get(r["feature"])
            head_values = _features(head).get(r["feature"])
            if r["kind"] == "agreement":
                passed = dep_values is None or head_values is None or bool(dep_values & head_values)
            else:
                values = dep_values if r["side"] == "dep" else head_values
                if values is None:
                    continue  # the word lacks the feature: skipped
                allowed = {v for value_set in r["allowed_values"] or () for v in value_set.split(",")}
                passed = values <= allowed
            checks.append(RuleCheck(_rule_id(r), word_id, word["head"], passed))
    return checks


def lambre_score(parsed, rules: Iterable[Mapping]) -> float:
    """sentence_scores.rule_score of one parsed output: the mean over the rules that fired of
    matches / (matches + failures); 1.0 when none fired.

    Figure 1 of Pratapa et al. (2021), sentence S.2, with the figure's seven rules: the mod Case
    and subj Number agreements fail, Gender fires and holds (neither word has it).

    >>> s2 = '''1	Ich	ich	PRON	_	Case=Nom|Number=Sing|Person=1	2	subj	_	_
    ... 2  werden  werden  AUX  _  Number=Plur|Person=1  0  root  _  _
    ... 3  langen  lang  ADJ  _  Case=Dat|Number=Plur  4  mod  _  _
    ... 4  Bücher  Buch  NOUN  _  Case=Acc|Number=Plur  5  comp:obj  _  _
    ... 5  lesen  lesen  VERB  _  VerbForm=Part  2  comp:aux  _  _
    ... '''
    >>> rules = [rule(f"de|agreement|mod|ADJ>NOUN|{f}") for f in ("Case", "Gender", "Number")]
    >>> rules += [rule(f"de|agreement|subj|PRON>AUX|{f}") for f in ("Number", "Person")]
    >>> rules += [rule("de|argstruct|subj|PRON>AUX|Case|dep", ["Nom"]),
    ...           rule("de|argstruct|comp:obj|NOUN>VERB|Case|dep", ["Acc", "Nom"])]
    >>> lambre_score(s2, rules) == 5 / 7
    True
    """
    per_rule = defaultdict(list)
    for check in lambre_checks(parsed, rules):
        per_rule[check.rule_id].append(check.passed)
    if not per_rule:
        return 1.0
    return sum(sum(p) / len(p) for p in per_rule.values()) / len(per_rule)
