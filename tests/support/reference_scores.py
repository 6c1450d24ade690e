"""Straightforward pure-Python versions of the SQL scoring (SPEC sections 3 and 6), for tests."""

import unicodedata
from collections import Counter, defaultdict


def is_punctuation_token(token):
    """Every character is Unicode punctuation (category P*), like SQL's \\p{P}+."""
    return all(unicodedata.category(c).startswith("P") for c in token)


def pretokenized(text, ref_forms):
    """The tokens of an output already made of reference word forms, joined by spaces: its
    whitespace chunks, except that chunks spelling a reference form with a space inside
    ('6 20 30') are one token again."""
    chunks = text.split()
    spaced = {tuple(form.lower().split()) for form in ref_forms if len(form.split()) > 1}
    tokens, i = [], 0
    while i < len(chunks):
        n = next((len(parts) for parts in spaced if tuple(c.lower() for c in chunks[i : i + len(parts)]) == parts), 1)
        tokens.append(" ".join(chunks[i : i + n]))
        i += n
    return tokens


def aligned_lemmas(text, ref_forms, ref_lemmas, ref_is_punct):
    """The 'aligned' processor on pre-tokenized text: k-th occurrence of a form (case-insensitive)
    -> k-th reference word.

    Takes the reference word's lemma (lower-cased), else the token lower-cased; drops punctuation.
    """
    positions = defaultdict(list)
    for i, form in enumerate(ref_forms):
        positions[form.lower()].append(i)
    seen = Counter()
    lemmas = []
    for token in pretokenized(text, ref_forms):
        key = token.lower()
        k = seen[key]
        seen[key] += 1
        if k < len(positions[key]):
            i = positions[key][k]
            if not ref_is_punct[i]:
                lemmas.append(ref_lemmas[i].lower())
        elif not is_punctuation_token(token):
            lemmas.append(key)
    return lemmas


def dea(ref_lemmas, ref_heads, ref_relations, out_lemmas):
    """(matched edges, edges, {relation: [edges, matched]}) of one sentence, SPEC section 3."""
    triples = []
    for dep, head in enumerate(ref_heads, start=1):
        if head:
            triples.append((ref_lemmas[head - 1], ref_lemmas[dep - 1], dep - head, ref_relations[dep - 1]))
    in_output = Counter()
    for i, h in enumerate(out_lemmas):
        for head_lemma, dep_lemma, k, _ in set((t[0], t[1], t[2], None) for t in triples):
            if h == head_lemma and 0 <= i + k < len(out_lemmas) and out_lemmas[i + k] == dep_lemma:
                in_output[(head_lemma, dep_lemma, k)] += 1
    used = Counter()
    by_relation = defaultdict(lambda: [0, 0])
    matched = 0
    for head_lemma, dep_lemma, k, relation in triples:  # reference order: by dependent position
        key = (head_lemma, dep_lemma, k)
        hit = used[key] < in_output[key]
        used[key] += hit
        matched += hit
        by_relation[relation.split(":")[0]][0] += 1
        by_relation[relation.split(":")[0]][1] += hit
    return matched, len(triples), dict(by_relation)


def reference_words(treebank):
    """sent_id -> (forms, lemmas, is-punctuation flags) of the syntactic words of a read_conllu() result."""
    sent_ids = dict(zip(treebank.sentences["sent_idx"], treebank.sentences["sent_id"]))
    words = defaultdict(lambda: ([], [], []))
    t = treebank.tokens
    for idx, tid, form, lemma, deprel in zip(t["sent_idx"], t["id"], t["form"], t["lemma"], t["deprel"]):
        if tid.isdigit():
            forms, lemmas, punct = words[sent_ids[idx]]
            forms.append(form)
            lemmas.append(lemma)
            punct.append(deprel.split(":")[0] == "punct")
    return dict(words)
