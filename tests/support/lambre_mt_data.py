"""Test data of tests/lambre/test_lambre_mt*.py: copies of a real UD test split with agreement
errors injected at a known rate, as runs of a machine-translation system would carry them."""

import random

# Flipping one value of a feature: a value the head does not have afterwards.
FLIPS = {"Number": {"Sing": "Plur", "Plur": "Sing"}, "Gender": {"Masc": "Fem", "Fem": "Masc", "Neut": "Masc"}}
# Links whose dependent must agree with its head: deprel -> head UPOS. In fr, de and ru, determiners and
# adjectives with their noun; English adjectives carry no Number and few determiners do (this/these), so
# subjects with their verb as well.
NOMINAL = {"det": {"NOUN", "PROPN"}, "amod": {"NOUN", "PROPN"}}
AGREEING = {"fr": NOMINAL, "de": NOMINAL, "ru": NOMINAL, "en": {**NOMINAL, "nsubj": {"VERB", "AUX"}}}


def _feats(text):
    return dict(item.split("=", 1) for item in text.split("|")) if text != "_" else {}


def first_sentences(path, n):
    """The first n sentence blocks of a CoNLL-U file, as text."""
    blocks = [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()][:n]
    return "\n\n".join(blocks) + "\n\n"


def agreement_candidates(blocks, language):
    """(block, line) of every word whose link of AGREEING[language] agrees in Number or Gender."""
    links = AGREEING[language]
    found = []
    for b, block in enumerate(blocks):
        rows = [line.split("\t") for line in block.split("\n") if line and not line.startswith("#")]
        words = {r[0]: r for r in rows if r[0].isdigit()}
        for k, row in enumerate(block.split("\n")):
            cols = row.split("\t")
            if len(cols) != 10 or not cols[0].isdigit() or cols[7].split(":")[0] not in links:
                continue
            head = words.get(cols[6])
            if head is None or head[3] not in links[cols[7].split(":")[0]]:
                continue
            mine, theirs = _feats(cols[5]), _feats(head[5])
            if any(f in mine and mine[f] == theirs.get(f) and mine[f] in FLIPS[f] for f in FLIPS):
                found.append((b, k))
    return found


def inject_agreement_errors(text, rate, seed, language):
    """text with round(rate * candidates) agreeing dependents (chosen with random.Random(seed))
    given another Number (else Gender) than their head; returns (text, words flipped)."""
    blocks = text.strip("\n").split("\n\n")
    candidates = agreement_candidates(blocks, language)
    chosen = random.Random(seed).sample(candidates, round(rate * len(candidates)))
    lines = [block.split("\n") for block in blocks]
    for b, k in chosen:
        cols = lines[b][k].split("\t")
        feats = _feats(cols[5])
        feature = "Number" if feats.get("Number") in FLIPS["Number"] else "Gender"
        feats[feature] = FLIPS[feature][feats[feature]]
        cols[5] = "|".join(f"{name}={value}" for name, value in sorted(feats.items()))
        lines[b][k] = "\t".join(cols)
    return "\n\n".join("\n".join(block) for block in lines) + "\n\n", len(chosen)


def reverse_words(texts, rate, seed):
    """texts with the word order of round(rate * len(texts)) sentences (random.Random(seed)) reversed:
    word-order errors, which the reference-based metrics see and the rules of agreement do not."""
    chosen = set(random.Random(seed).sample(range(len(texts)), round(rate * len(texts))))
    return [" ".join(reversed(t.split())) if k in chosen else t for k, t in enumerate(texts)]
