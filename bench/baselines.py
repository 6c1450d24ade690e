"""Baseline realizers on UD English-EWT: train on train, realize test, score, write docs/baselines.md.

Loads en_ewt train (corpus en_ewt_train) and test (en_ewt_test) into a fresh warehouse, trains
the Hall and Nemec (2007) model and its three ablations (srlens/baseline/), realizes the test
trees with each of them and with the random-order baseline, builds the marts with the
'aligned' processor, and reports reordering accuracy (SPEC 7), DEA and corpus BLEU per run,
with train and generate times.

    python -m bench.baselines [--ud-dir ../shared/ud/en_ewt] [--warehouse DIR] [--out docs/baselines.md]
"""

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import duckdb

from srlens import baseline
from srlens.build import build
from srlens.loaders.load import load_treebank

REPO = Path(__file__).resolve().parents[1]
TRAIN, TEST = "en_ewt_train", "en_ewt_test"

# (run name, model features or 'random', input, what it is)
RUNS = [
    ("hall_nemec", baseline.FEATURES, "lemma", "full model"),
    ("hall_nemec_form", baseline.FEATURES, "form", "full model, gold forms as input"),
    ("no_head", ("child_pos", "child_rel"), "lemma", "without head features (UPOS, relation)"),
    ("no_child_pos", ("head", "child_rel"), "lemma", "without the dependents' UPOS"),
    ("no_child_rel", ("head", "child_pos"), "lemma", "without the dependents' relations"),
    ("random_order", baseline.RANDOM_MODEL, "lemma", "random order of each head's domain (paper's baseline)"),
]

SCORES_SQL = """
    select s.run, s.sentences, u.correct, u.total, u.correct / u.total as reorder_micro,
           s.reorder_accuracy_mean, s.dea, s.corpus_bleu, s.bleu_mean
    from submission_scores s
    join (select submission_id, sum(acc.reorder_correct) as correct, sum(acc.reorder_total) as total
          from intermediate.int_sentence_accuracies group by all) u using (submission_id)
    where s.corpus = ? and s.team = 'baseline'
"""


def run(ud_dir, work_dir, out):
    wh = Path(work_dir) / "baselines.duckdb"
    for leftover in (wh, Path(f"{wh}.wal")):
        leftover.unlink(missing_ok=True)
    times = {}
    t = time.perf_counter()
    load_treebank(wh, Path(ud_dir) / "en_ewt-ud-train.conllu", TRAIN)
    load_treebank(wh, Path(ud_dir) / "en_ewt-ud-test.conllu", TEST)
    times["load both treebanks"] = time.perf_counter() - t

    models = {}
    for _name, features, _, _ in RUNS:
        if features == baseline.RANDOM_MODEL or features in models:
            continue
        t = time.perf_counter()
        models[features] = baseline.train(wh, TRAIN, features=features)
        times[f"train {models[features]}"] = time.perf_counter() - t

    for name, features, inp, _ in RUNS:
        model = features if features == baseline.RANDOM_MODEL else models[features]
        t = time.perf_counter()
        baseline.generate(wh, TEST, name, model_name=model, input=inp)
        times[f"generate {name}"] = time.perf_counter() - t

    t = time.perf_counter()
    build(wh, echo=False, processor="aligned")
    times["build (aligned, both corpora)"] = time.perf_counter() - t

    con = duckdb.connect(str(wh), read_only=True)
    try:
        scores = {r[0]: r for r in con.execute(SCORES_SQL, [TEST]).fetchall()}
        model_rows = con.execute("select model, sentences, words, pairs from baseline.models order by model").fetchall()
        counts = dict(con.execute("select model, count(*) from baseline.precedence_counts group by 1").fetchall())
        heads = con.execute(
            "select sum(exact_heads), sum(fallback_heads) from baseline.runs "
            "where model <> 'random' and submission_id like '%/hall_nemec'"
        ).fetchone()
        test_size = con.execute("select sentences, words from raw.treebank_files where corpus = ?", [TEST]).fetchone()
        train_sentences = con.execute("select sentences from raw.treebank_files where corpus = ?", [TRAIN]).fetchone()[
            0
        ]
        nonprojective = con.execute(
            "select count(*) filter (where not is_projective) from sentence_complexity where corpus = ?", [TEST]
        ).fetchone()[0]
    finally:
        con.close()

    sizes = {"test": test_size, "train": train_sentences, "nonprojective": nonprojective}
    text = render(scores, model_rows, counts, heads, sizes, times)
    Path(out).write_text(text)
    print(text)


def timing_table(times, sizes):
    test = sizes["test"]
    lines = [
        f"`bench/baselines.py` on {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"en_ewt train ({sizes['train']:,} sentences) -> en_ewt test ({test[0]:,} sentences, "
        f"{test[1]:,} words). Generate includes writing and loading the run.",
        "",
        "| step | seconds |",
        "|---|---:|",
    ]
    lines += [f"| {step} | {seconds:.2f} |" for step, seconds in times.items()]
    return "\n".join(lines) + "\n"


def render(scores, model_rows, counts, heads, sizes, times):
    rows = []
    for name, _features, inp, what in RUNS:
        s = scores[name]
        rows.append(
            f"| `{name}` | {what} | {inp} | {s[4]:.4f} ({s[2]:,}/{s[3]:,}) | {s[5]:.4f} | {s[6]:.4f} | {s[7]:.4f} |"
        )
    models = "\n".join(
        f"| `{m}` | {sent:,} | {words:,} | {pairs:,} | {counts.get(m, 0):,} |" for m, sent, words, pairs in model_rows
    )
    acc = {name: scores[name][4] for name in scores}
    body = TEMPLATE.format(
        full=acc["hall_nemec"],
        no_rel=acc["no_child_rel"],
        no_pos=acc["no_child_pos"],
        no_head=acc["no_head"],
        random=acc["random_order"],
        results="\n".join(rows),
        models=models,
        timing=timing_table(times, sizes),
        exact=heads[0],
        fallback=heads[1],
        exact_max=baseline.EXACT_MAX,
        nonprojective=sizes["nonprojective"],
        test_sentences=sizes["test"][0],
    )
    return body


TEMPLATE = """\
# Baseline realizers

`srlens/baseline/` implements the linearization model of Hall and Nemec
(2007, "Generation in Machine Translation from Deep Syntactic Trees"; the
project's copy is in `papers/`) on UD trees, plus a random-order baseline.
A realizer gets each reference tree without its word order (every word's
lemma or form, UPOS, relation and head) and must put the words in order. The
runs are ordinary submissions (team `baseline`), so every mart covers them.
This page is written by `bench/baselines.py` (`python -m bench.baselines`); rerun it to refresh the figures.

## Results: en_ewt train -> en_ewt test

Trained on UD English-EWT train (corpus `en_ewt_train`), realizing EWT test
(`en_ewt_test`), built with the `aligned` processor (output tokens are mapped
to reference words by form; a lemma token that matches no form keeps itself
as lemma, which is the reference lemma). Scores as in SPEC: punctuation is
removed, lemmas are compared.

| run | model | input | reorder acc. (pooled) | reorder acc. (sentence mean) | DEA (micro) | corpus BLEU |
|---|---|---|---:|---:|---:|---:|
{results}

* Reorder accuracy (SPEC 7): a word with dependents is correct when it and its
  dependents come out in the reference order. "Pooled" is correct words /
  words with dependents over the corpus (the paper's figure);
  `submission_scores.reorder_accuracy_mean` is the mean of the per-sentence
  ratios.
* The output contains exactly the reference words, so DEA and BLEU measure
  word order only. `hall_nemec_form` differs from `hall_nemec` only through
  the aligned processor: a lemma token that equals another word's form is
  mapped to that word (the infinitive marker "to" takes the lemma "too" of a
  misspelt "to" earlier in the same sentence), which costs a few words.
  Written forms give the cleaner word-order figure; lemmas are what a
  shallow-track realizer receives.
* Every output is projective, so the {nonprojective} test sentences (of {test_sentences:,})
  whose analysis tree is non-projective cannot be reproduced exactly.

## Next to Hall and Nemec (2007)

What the paper reports (section 5, "Reordering Results"; Table 2, "Reordering
accuracy for TR trees on development data from PCEDT 1.0 ... The baseline
model sorts subtrees of each node randomly"):

* Reordering accuracy is "the percentage of nodes for which all children are
  correctly ordered (i.e., no credit for partially correct orderings)",
  reported over all nodes and, for the manually annotated data, over interior
  nodes only. SPEC 7 counts interior nodes only (words with at least one
  dependent), so our figure corresponds to their interior-node column.
* Ablations: "The child node tags are critical for the reordering model,
  followed by the child functors." A variant that keeps the deep order of
  coordinated phrases gives "a significant increase in performance".
* Complete system (insertion of function words, reordering, morphology), BLEU
  against four retranslations, development data (Table 5): TR with rules .4614
  (manual) / .4777 (synthetic), TR without rules .4532 / .4657, via AR trees
  .2337 / .2451; on the evaluation data .4633 (manual) and .4750 (synthetic).

The cells of their Table 2 (the reordering accuracies themselves) did not
survive the text extraction of the paper kept in `papers/`: the table's entry
there holds the caption only, with another table's content. We therefore do
not quote its numbers; look them up in the original PDF (ACL Anthology
W07-0408) before comparing magnitudes.

How the settings differ:

| | Hall and Nemec (2007) | here |
|---|---|---|
| data | PCEDT 1.0 (WSJ), about 49,000 sentences of which 4,200 held out; 248 dev / 249 eval sentences with manual TR, plus synthetic TR | UD English-EWT 2.16 (web text: blogs, email, reviews, answers), 12,544 train / 2,077 test sentences |
| input trees | tectogrammatical (deep) trees: content words only, function words inserted by their insertion model (reordering evaluated on trees with the correct auxiliaries inserted) | surface UD trees: every word, function words and punctuation included |
| labels | deep functors (ACT, PAT, LOC...) and Penn tags | UD relations (full, e.g. `nmod:poss`) and UPOS |
| smoothing | Jelinek-Mercer, weights by EM on 4,200 held-out sentences | Witten-Bell interpolation (no held-out data) |
| head position | triple model P(c_i < g < c_i+1) | P(dependent before head), product over the dependents |
| evaluation | reordering accuracy on all and interior nodes; BLEU of the full system against 4 retranslations | SPEC 7 reorder accuracy (interior nodes of the analysis tree, punctuation removed), DEA, BLEU-4 on lemmas against the single reference |

Ablations. Here the dependents' relations carry most of the model: without
them reorder accuracy falls from {full:.3f} to {no_rel:.3f}, while dropping the
dependents' UPOS ({no_pos:.3f}) or the head's features ({no_head:.3f}) costs
less than a point each; random order gives {random:.3f}. Hall and Nemec found the
opposite ranking for TR trees (tags first, then functors). A likely reason: UD
relations are surface-syntactic and mostly imply the dependent's category
(`det`, `amod`, `case`, `aux`), so UPOS adds little once the relation is known,
whereas TR functors are deep roles (ACT, PAT, LOC...) that leave the surface
position open, and their tags were Penn tags, which are richer than UPOS.

Because UD trees keep every word, a head has more dependents to order than in
TR (determiners, auxiliaries, case markers are dependents of their head here),
which makes "all children in the right order" harder; on the other hand those
function words have nearly fixed positions, which the model learns well.

## The model (details and choices)

* **Statistics** (`srlens.baseline.train`), counted in SQL in one
  `grouping sets` pass per table from `raw.tokens` (so a model can be trained
  right after `load-treebank`, without a build), stored in schema `baseline`:
  * `baseline.precedence_counts(model, level, head_pos, head_rel, a_pos, a_rel,
    b_pos, b_rel, before, after)`: every ordered pair of siblings (a
    self-join on the head) adds to `before` when a precedes b in the reference;
    both orders of each pair are stored.
  * `baseline.head_counts(model, level, head_pos, head_rel, c_pos, c_rel,
    before, after)`: whether each dependent precedes its head.
  * `baseline.models` (features, back-off chain, sizes) and `baseline.runs`
    (which model, input, seed and time produced a submission).
  * A model is replaced in one transaction when trained again under its name.
* **Features**: relation (full label) and UPOS of both dependents, UPOS and
  relation of the head (`<root>` under the virtual root). Punctuation takes
  part, so the text has it; its UPOS feature is `PUNCT:` plus the mark
  (brackets and quotes have fixed orders that plain `PUNCT` would hide).
* **Back-off** (the paper deletes the rightmost conditioning variable): head
  relation, then head UPOS, then the dependents' UPOS, then the dependents'
  relations, then the uniform 0.5. Ablated features are left out of the chain.
* **Interpolation**: Witten-Bell, P_l = (c_l + u_l P_l+1) / (n_l + u_l), u_l
  the number of distinct outcomes seen in the context (1 or 2); unseen
  contexts pass the lower level through. Both directions are interpolated
  separately (P(after) is not computed as 1 - P(before), which loses all its
  digits near 1).
* **Search**: dependents are ordered by the permutation maximizing the product
  of P(a before b) over all ordered pairs; exact by dynamic programming over
  subsets (O(2^k k)) up to k = {exact_max} dependents, otherwise sorted by their
  summed precedence probability and improved by adjacent swaps. On en_ewt test
  the full model ordered {exact:,} heads exactly and {fallback:,} greedily. The
  head then goes into the gap maximizing the product of the side
  probabilities (the paper's greedy two-step order), and subtrees are
  concatenated (projective output).
* **Ties** never fall back on word ids (they are the reference positions):
  every word has a rank from a seeded hash of (seed, sent_id, word id), the
  search tries dependents in that order and keeps the first of equal-score
  permutations; equal-score head gaps take the leftmost.
* **Random baseline** (`--model random`): each head's domain (head and
  dependents) is shuffled uniformly, seeded by (seed, sent_id, head): the
  paper's "sorts subtrees of each node randomly", projective like the model.

Models trained:

| model | sentences | words | ordered sibling pairs | precedence rows (all levels) |
|---|---:|---:|---:|---:|
{models}

## Usage

```python
from srlens import baseline
baseline.train(wh, "en_ewt_train")                                   # -> model "en_ewt_train"
baseline.train(wh, "en_ewt_train", features=("head", "child_pos"))   # -> "en_ewt_train-no_child_rel"
baseline.generate(wh, "en_ewt_test", "hall_nemec", model_name="en_ewt_train", input="lemma")
baseline.generate(wh, "en_ewt_test", "random_order", model_name="random")
```

On the command line: `srlens baseline train --treebank CORPUS [--model NAME]`
and `srlens baseline generate --corpus CORPUS --run NAME [--model NAME]
[--input lemma|form]`. A run is written to
`<warehouse folder>/baselines/<campaign>/<corpus>/<team>/<run>.sr` and loaded
as team `baseline`, campaign `default` unless told otherwise; run
`srlens build` afterwards to score it.

## Timings

{timing}
## The demo

`srlens.baseline.demo_baselines(warehouse)` trains one model per demo treebank
(`en_ewt_demo`, `fr_gsd_demo`) on that treebank itself and realizes it: runs
`hall_nemec` and `random_order`, team `baseline`, campaign `demo`, input gold
forms. The demo has no train split, so this is an in-sample baseline: its
scores are an optimistic ceiling for the model, not a held-out result.
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ud-dir", default=str(REPO.parent / "shared" / "ud" / "en_ewt"))
    ap.add_argument("--warehouse", default=None, help="folder for the warehouse (default: a temporary one)")
    ap.add_argument("--out", default=str(REPO / "docs" / "baselines.md"))
    args = ap.parse_args(argv)
    if args.warehouse:
        Path(args.warehouse).mkdir(parents=True, exist_ok=True)
        run(args.ud_dir, args.warehouse, args.out)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            run(args.ud_dir, tmp, args.out)


if __name__ == "__main__":
    main()
