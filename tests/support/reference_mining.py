"""Independent pure-Python reference of error mining (SPEC section 8), for the tests.

Written from SPEC, not from the SQL, and deliberately generic: a subtree is any connected set
of 2 or 3 words of the analysis tree, found by brute force over word sets; its canonical string
is built recursively with the children of every word sorted, so the shapes (one dependent, two
dependents, chain) are never special-cased.

Conventions shared with the warehouse (docs: dbt_project/models/intermediate/mining/int_subtrees.sql):
* every word carries its own label, the top word included (its relation, `root` for the root);
* labels: dep = base deprel, pos = UPOS, pos_dep = UPOS~base deprel, lemma = lower-cased lemma;
  a missing value is written `_`;
* a word is written `label`, or `label (child child ...)` when it has children in the
  subtree; the subtree is `(` + top word + `)`;
* positions of an occurrence: the words in the order they are written (pre-order, children
  sorted by their string, then by position).

Mining: FAIL = score <= the q-quantile of the submission's scores, linear interpolation
between order statistics (numpy's default, written out here); C(f) etc. as in SPEC;
S(f) = 1/2 (C(f|F)/C(f) ln C(f) + C(!f|P)/C(!f) ln C(!f)), zero-denominator terms 0; suspicious
when C(f) >= min_support and C(f|F)/C(f) > |FAIL|/|sentences| (compared as fractions).
"""

import math
from collections import defaultdict
from fractions import Fraction

from tests.support.reference_metrics import base_relation

VIEWS = ("dep", "pos", "pos_dep", "lemma")


def labels(tree, view):
    """One label per analysis position (index 0 = position 1)."""
    out = []
    for lemma, upos, deprel in zip(tree.lemmas, tree.upos, tree.deprels):
        dep = base_relation(deprel) if deprel else "_"
        tag = upos or "_"
        out.append({"dep": dep, "pos": tag, "pos_dep": f"{tag}~{dep}", "lemma": lemma.lower() if lemma else "_"}[view])
    return out


def connected_subsets(tree):
    """Every set of 2 or 3 positions connected by tree edges, with its top word: the edges'
    word pairs, then each pair grown by one word adjacent to either of its words."""
    heads = tree.heads
    neighbours = defaultdict(set)
    for d, h in enumerate(heads, start=1):
        if h:
            neighbours[h].add(d)
            neighbours[d].add(h)
    pairs = {frozenset((h, d)) for h in neighbours for d in neighbours[h]}
    triples = {pair | {w} for pair in pairs for v in pair for w in neighbours[v] if w not in pair}
    for words in pairs | triples:
        tops = [w for w in words if heads[w - 1] not in words]
        assert len(tops) == 1  # a connected set of tree words has one top
        yield words, tops[0]


def canonical(tree, words, top, label):
    """(string, positions in written order) of the subtree on `words` rooted at `top`."""

    def write(word):
        children = [write(c) for c in words if tree.heads[c - 1] == word]
        children.sort(key=lambda cp: (cp[0], cp[1][0]))
        if not children:
            return label[word - 1], [word]
        text = label[word - 1] + " (" + " ".join(c[0] for c in children) + ")"
        return text, [word] + [p for c in children for p in c[1]]

    text, positions = write(top)
    return "(" + text + ")", positions


def sentence_subtrees(tree):
    """{(view, subtree): sorted list of occurrence positions} of one analysis tree."""
    found = defaultdict(list)
    for view in VIEWS:
        label = labels(tree, view)
        for words, top in connected_subsets(tree):
            text, positions = canonical(tree, words, top, label)
            found[(view, text)].append(positions)
    return {key: sorted(occ) for key, occ in found.items()}


def quantile_linear(values, q):
    """numpy.quantile(values, q) with the default 'linear' method, written out."""
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def suspicion(c_f, c_f_fail, c_not_f, c_not_f_pass):
    first = c_f_fail / c_f * math.log(c_f) if c_f else 0.0
    second = c_not_f_pass / c_not_f * math.log(c_not_f) if c_not_f else 0.0
    return 0.5 * (first + second)


def mine_submission(scores, forms_of, q=0.25, min_support=2):
    """scores: {sentence key: score} of the sentences taking part; forms_of: {sentence key: set of
    (view, subtree)}. Returns (threshold, failures, {(view, subtree): row}) for every f with
    C(f) >= 1; row = dict(c_f, c_f_fail, c_not_f, c_not_f_pass, suspicion, is_suspicious)."""
    threshold = quantile_linear(scores.values(), q)
    fail = {s for s, v in scores.items() if v <= threshold}
    n, n_fail = len(scores), len(fail)
    c_f, c_f_fail, c_f_pass = defaultdict(int), defaultdict(int), defaultdict(int)
    for sentence in scores:
        for form in forms_of.get(sentence, ()):
            c_f[form] += 1
            if sentence in fail:
                c_f_fail[form] += 1
            else:
                c_f_pass[form] += 1
    rows = {}
    for form, count in c_f.items():
        c_not_f = n - count
        c_not_f_pass = (n - n_fail) - c_f_pass[form]  # the PASS sentences, less those with f
        rows[form] = {
            "c_f": count,
            "c_f_fail": c_f_fail[form],
            "c_not_f": c_not_f,
            "c_not_f_pass": c_not_f_pass,
            "suspicion": suspicion(count, c_f_fail[form], c_not_f, c_not_f_pass),
            "is_suspicious": count >= min_support and Fraction(c_f_fail[form], count) > Fraction(n_fail, n),
        }
    return threshold, n_fail, rows


def summarize(mined, submissions, min_support=2):
    """mined: {submission_id: rows of mine_submission}; submissions: {submission_id: dict(corpus,
    team, campaign)} of every submission taking part. Returns {(scope, scope_value, view, subtree):
    dict(submissions, suspicious_in, submissions_in_scope, coverage_pct, mean_suspicion)} for
    the subtrees with C(f) >= min_support in at least one submission of the scope."""

    def scopes(sub):
        info = submissions[sub]
        return [("all", "all"), ("corpus", info["corpus"]), ("team", info["team"]), ("campaign", info["campaign"])]

    in_scope = defaultdict(int)
    for sub in submissions:
        for scope in scopes(sub):
            in_scope[scope] += 1
    acc = defaultdict(lambda: {"submissions": 0, "suspicion": []})
    for sub, rows in mined.items():
        for form, row in rows.items():
            if row["c_f"] < min_support:
                continue
            for scope in scopes(sub):
                entry = acc[scope + form]
                entry["submissions"] += 1
                if row["is_suspicious"]:
                    entry["suspicion"].append(row["suspicion"])
    out = {}
    for key, entry in acc.items():
        suspicious = entry["suspicion"]
        out[key] = {
            "submissions": entry["submissions"],
            "suspicious_in": len(suspicious),
            "submissions_in_scope": in_scope[key[:2]],
            "coverage_pct": 100.0 * len(suspicious) / in_scope[key[:2]],
            "mean_suspicion": sum(suspicious) / len(suspicious) if suspicious else None,
        }
    return out
