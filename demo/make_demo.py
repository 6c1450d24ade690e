#!/usr/bin/env python3
"""Build the bundled srlens demo data set (standard library only).

Reads two UD test sets (UD_English-EWT, UD_French-GSD), copies the first
200 sentences with 3..40 syntactic words of each byte-for-byte into
demo/data/treebanks/, and writes six synthetic "system runs" per corpus in
the shared-task output format (``# sent_id = ..`` / ``# text = ..`` / blank
line) into demo/data/outputs/<corpus>/<run>.sr.txt, plus manifest.csv and
LICENSE.txt.  All randomness comes from random.Random seeded per
corpus+run, so reruns produce byte-identical files.

Usage:  python3 demo/make_demo.py [--ud-dir DIR] [--out DIR]

Runs (see demo/README.md):
  gold          reference word order
  random        every sentence's words shuffled
  swaps         adjacent pairs swapped with probability 0.15 (non-overlapping)
  advmod_moved  every advmod dependent (with its subtree, made contiguous)
                moved to the other side of its head, adjacent to the head
                word: left -> immediately after the head word,
                right -> immediately before the head word
  head_final    projective linearisation, every head after all its
                dependents' subtrees (dependents in reference order)
  drops         every 40th sentence empty; otherwise each word dropped with
                probability 0.10 (at least one word kept)
"""

import argparse
import csv
import hashlib
import io
import os
import random
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CORPORA = [
    # (corpus name, UD folder, test file, UD repository name)
    ("en_ewt_demo", "en_ewt", "en_ewt-ud-test.conllu", "UD_English-EWT"),
    ("fr_gsd_demo", "fr_gsd", "fr_gsd-ud-test.conllu", "UD_French-GSD"),
]
N_SENTENCES = 200
MIN_WORDS, MAX_WORDS = 3, 40

RUNS = ["gold", "random", "swaps", "advmod_moved", "head_final", "drops"]
TEAM = {"gold": "baseline", "head_final": "baseline"}  # others: "perturb"
CAMPAIGN = "demo"

SWAP_P = 0.15
DROP_P = 0.10
EMPTY_EVERY = 40


# --------------------------------------------------------------------------
# CoNLL-U reading (minimal, byte-faithful)
# --------------------------------------------------------------------------


class Sentence:
    def __init__(self, lines):
        self.lines = lines  # raw lines, no newline
        self.sent_id = None
        self.ids = []  # syntactic word ids (int)
        self.form = {}
        self.head = {}
        self.deprel = {}
        for line in lines:
            if line.startswith("#"):
                if self.sent_id is None and line.startswith("# sent_id"):
                    key, sep, val = line.partition("=")
                    if sep and key.strip() == "# sent_id":
                        self.sent_id = val.strip()
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise ValueError("bad CoNLL-U line: %r" % line)
            if not cols[0].isdigit():  # multiword range or empty node
                continue
            i = int(cols[0])
            self.ids.append(i)
            self.form[i] = cols[1]
            self.head[i] = int(cols[6])
            self.deprel[i] = cols[7]
        if self.sent_id is None:
            raise ValueError("sentence without sent_id: %r" % lines[:3])
        self.children = {i: [] for i in [0] + self.ids}
        for i in self.ids:  # ids ascending -> children sorted
            self.children[self.head[i]].append(i)

    def subtree(self, i):
        out, stack = set(), [i]
        while stack:
            n = stack.pop()
            out.add(n)
            stack.extend(self.children[n])
        return out


def read_conllu(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    block = []
    for line in text.split("\n"):
        if line.strip() == "":
            if block:
                yield Sentence(block)
                block = []
        else:
            block.append(line)
    if block:
        yield Sentence(block)


# --------------------------------------------------------------------------
# Perturbations: each takes (sentence, rng, index) and returns a list of ids
# --------------------------------------------------------------------------


def run_gold(s, rng, k):
    return list(s.ids)


def run_random(s, rng, k):
    order = list(s.ids)
    rng.shuffle(order)
    return order


def run_swaps(s, rng, k):
    order = list(s.ids)
    i = 0
    while i < len(order) - 1:
        if rng.random() < SWAP_P:
            order[i], order[i + 1] = order[i + 1], order[i]
            i += 2  # swaps never overlap
        else:
            i += 1
    return order


def run_advmod_moved(s, rng, k):
    """Each advmod dependent d (ids ascending) is moved with its subtree.

    The block = d's subtree words in their current order (made contiguous).
    If d is currently left of its head h, the block is re-inserted
    immediately after h; if right, immediately before h.  Nothing else
    moves, so all other words keep reference order.  Only d's own move
    changes the d/h order, so every advmod ends on the opposite side.
    """
    order = list(s.ids)
    for d in s.ids:
        if s.deprel[d].split(":")[0] != "advmod" or s.head[d] == 0:
            continue
        h = s.head[d]
        sub = s.subtree(d)
        left = order.index(d) < order.index(h)
        block = [w for w in order if w in sub]
        rest = [w for w in order if w not in sub]
        p = rest.index(h)
        at = p + 1 if left else p
        order = rest[:at] + block + rest[at:]
    return order


def run_head_final(s, rng, k):
    out = []

    def lin(n):
        for c in s.children[n]:
            lin(c)
        out.append(n)

    for r in s.children[0]:
        lin(r)
    return out


def run_drops(s, rng, k):
    if (k + 1) % EMPTY_EVERY == 0:
        return []
    keep = [w for w in s.ids if rng.random() >= DROP_P]
    if not keep:
        keep = [s.ids[rng.randrange(len(s.ids))]]
    return keep


RUN_FUNCS = {
    "gold": run_gold,
    "random": run_random,
    "swaps": run_swaps,
    "advmod_moved": run_advmod_moved,
    "head_final": run_head_final,
    "drops": run_drops,
}


def seed_for(corpus, run):
    return int(hashlib.sha256(("srlens-demo/%s/%s" % (corpus, run)).encode("utf-8")).hexdigest()[:16], 16)


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def write_bytes(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode("utf-8"))


def find_test_file(ud_dir, folder, name):
    for p in (os.path.join(ud_dir, folder, name), os.path.join(ud_dir, name)):
        if os.path.isfile(p):
            return p
    sys.exit("cannot find %s under %s" % (name, ud_dir))


def read_small(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8").strip("\n")
    except OSError:
        return None


def licence_text(ud_dir):
    parts = [
        "srlens demo data: licence and provenance",
        "========================================",
        "",
        "Everything under demo/data/ is derived from Universal Dependencies",
        "treebanks and is distributed under the same licence, Creative Commons",
        "Attribution-ShareAlike 4.0 International (CC BY-SA 4.0),",
        "https://creativecommons.org/licenses/by-sa/4.0/legalcode",
        "",
        "treebanks/*.conllu are unmodified sentences (first %d with %d-%d" % (N_SENTENCES, MIN_WORDS, MAX_WORDS),
        "syntactic words) of the test sets; outputs/*/*.sr.txt are synthetic",
        "reorderings / deletions of their word forms made by demo/make_demo.py.",
        "",
    ]
    for corpus, folder, test, repo in CORPORA:
        src = os.path.dirname(find_test_file(ud_dir, folder, test))
        version = read_small(os.path.join(src, "VERSION")) or "(unknown)"
        lic = read_small(os.path.join(src, "LICENSE.txt")) or ""
        lic_lines = lic.split("\n")
        if len(lic_lines) > 20:  # full legal code: quote its title
            lic_lines = [lic_lines[0].strip(), "(full legal code in the treebank's LICENSE.txt)"]
        parts += (
            [
                "%s  (%s, file %s)" % (corpus, repo, test),
                "  source: https://github.com/UniversalDependencies/%s" % repo,
                "  VERSION (commit, date): %s" % version,
                "  LICENSE.txt:",
            ]
            + ["    " + line if line.strip() else "" for line in lic_lines]
            + [""]
        )
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ud-dir", default=os.path.normpath(os.path.join(REPO, "..", "shared", "ud")))
    ap.add_argument("--out", default=os.path.join(REPO, "demo", "data"))
    args = ap.parse_args(argv)

    manifest = []
    for corpus, folder, test, _repo in CORPORA:
        path = find_test_file(args.ud_dir, folder, test)
        sents = []
        for s in read_conllu(path):
            if MIN_WORDS <= len(s.ids) <= MAX_WORDS:
                sents.append(s)
                if len(sents) == N_SENTENCES:
                    break
        if len(sents) < N_SENTENCES:
            sys.exit("%s: only %d eligible sentences" % (path, len(sents)))
        ids = [s.sent_id for s in sents]
        if len(set(ids)) != len(ids):
            sys.exit("%s: duplicate sent_id in selection" % path)

        tb_rel = "treebanks/%s.conllu" % corpus
        write_bytes(os.path.join(args.out, tb_rel), "".join("\n".join(s.lines) + "\n\n" for s in sents))
        manifest.append(["treebank", tb_rel, corpus, "demo", "", CAMPAIGN])

        for run in RUNS:
            rng = random.Random(seed_for(corpus, run))
            buf = io.StringIO()
            for k, s in enumerate(sents):
                order = RUN_FUNCS[run](s, rng, k)
                text = " ".join(s.form[i] for i in order)
                buf.write("# sent_id = %s\n# text = %s\n\n" % (s.sent_id, text))
            rel = "outputs/%s/%s.sr.txt" % (corpus, run)
            write_bytes(os.path.join(args.out, rel), buf.getvalue())
            manifest.append(["outputs", rel, corpus, TEAM.get(run, "perturb"), run, CAMPAIGN])
        print("%s: %d sentences, %d words" % (corpus, len(sents), sum(len(s.ids) for s in sents)))

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kind", "file", "corpus", "team", "run", "campaign"])
    w.writerows(manifest)
    write_bytes(os.path.join(args.out, "manifest.csv"), buf.getvalue())
    write_bytes(os.path.join(args.out, "LICENSE.txt"), licence_text(args.ud_dir))
    print("wrote %d files to %s" % (len(manifest) + 2, args.out))


if __name__ == "__main__":
    main()
