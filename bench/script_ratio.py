'''The 40-run script ratio: the per-sentence script a researcher writes against srlens on the same data.

Data: UD en_ewt test (2,077 sentences) and 40 runs of its word forms joined by spaces, a few adjacent
words swapped per sentence (one seed per run): tokenized text, so that the script's whitespace tokens
are the warehouse's words. `--scale` multiplies the runs (at least 2).

* script: in one fresh process, read the treebank with `conllu`; per reference sentence the SPEC 1 tree
  metrics; per output sentence the model-free words and DEA (SPEC 3), nltk's sentence BLEU (method 2)
  and the simple string accuracy from nltk's `edit_distance`; per run nltk's corpus BLEU.
* srlens: `load-treebank`, one `load-campaign` of a CSV manifest, `build --processor aligned`, as a
  user runs them. The warehouse computes all of SPEC (mining, rules, significance, data tests...).

After the build, the script's DEA and sentence BLEU are compared with the warehouse's, sentence by sentence.
'''

import json
import random
from pathlib import Path

import duckdb

from bench.harness import SHARED, Step

EN_EWT_TEST = SHARED / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"
RUNS = 40

# The script, as a researcher writes it: self-contained, run in its own process (its imports count, as
# srlens's do). Tree metrics as SPEC 1 defines them (punctuation removed, words renumbered); DEA on the
# 'aligned' lemmas (the k-th occurrence of a form is the k-th reference word with that form).
SCRIPT = r"""
import json, sys, unicodedata
from collections import Counter, defaultdict
import conllu
import networkx as nx
from nltk.metrics.distance import edit_distance
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu


def analysis_tree(tokens):
    words = [t for t in tokens if isinstance(t["id"], int)]
    by_id = {t["id"]: t for t in words}
    kept = [t["id"] for t in words if t["deprel"] != "punct"]
    position = {old: new for new, old in enumerate(kept, start=1)}
    heads = []
    for old in kept:
        head = by_id[old]["head"]
        while head != 0 and head not in position:
            head = by_id[head]["head"]
        heads.append(position.get(head, 0))
    return [by_id[i]["lemma"].lower() for i in kept], heads, [by_id[i]["deprel"] for i in kept]


def tree_metrics(heads):
    n = len(heads)
    if n == 0:
        return None
    edges = [(h, d) for d, h in enumerate(heads, start=1) if h]
    def depth(w):
        k = 0
        while heads[w - 1]:
            w, k = heads[w - 1], k + 1
        return k
    def ancestor(a, w):
        w = heads[w - 1]
        while w:
            if w == a:
                return True
            w = heads[w - 1]
        return False
    fluxes = [[(min(h, d), max(h, d)) for h, d in edges if min(h, d) <= p < max(h, d)] for p in range(1, n)]
    def weight(flux):
        if not flux:
            return 0
        graph = nx.Graph()
        graph.add_edges_from(flux)
        return len(nx.max_weight_matching(graph, maxcardinality=True))
    roots = [d for d, h in enumerate(heads, start=1) if not h]
    projective = all(
        ancestor(h, b) for h, d in edges for b in range(min(h, d) + 1, max(h, d))
    ) and not any(min(h, d) < r < max(h, d) for h, d in edges for r in roots)
    return {
        "depth": max(depth(w) for w in range(1, n + 1)),
        "length": n,
        "mdd": sum(abs(d - h) for h, d in edges) / len(edges) if edges else 0.0,
        "mfs": sum(map(len, fluxes)) / len(fluxes) if fluxes else 0.0,
        "mfw": sum(map(weight, fluxes)) / len(fluxes) if fluxes else 0.0,
        "arity": len(edges) / n,
        "projective": projective,
    }


def aligned_lemmas(text, forms, lemmas, punct):
    chunks = text.split()
    spaced = {tuple(f.lower().split()) for f in forms if len(f.split()) > 1}
    tokens, i = [], 0
    while i < len(chunks):
        k = next((len(p) for p in spaced if tuple(c.lower() for c in chunks[i : i + len(p)]) == p), 1)
        tokens.append(" ".join(chunks[i : i + k]))
        i += k
    positions = defaultdict(list)
    for i, form in enumerate(forms):
        positions[form.lower()].append(i)
    seen, out = Counter(), []
    for token in tokens:
        key = token.lower()
        k = seen[key]
        seen[key] += 1
        if k < len(positions[key]):
            if not punct[positions[key][k]]:
                out.append(lemmas[positions[key][k]].lower())
        elif not all(unicodedata.category(c).startswith("P") for c in token):
            out.append(key)
    return out


def dea(ref, heads, hyp):
    triples = [(ref[h - 1], ref[d - 1], d - h) for d, h in enumerate(heads, start=1) if h]
    found = Counter()
    for i, lemma in enumerate(hyp):
        for head, dep, k in set(triples):
            if lemma == head and 0 <= i + k < len(hyp) and hyp[i + k] == dep:
                found[(head, dep, k)] += 1
    used, matched = Counter(), 0
    for triple in triples:
        hit = used[triple] < found[triple]
        used[triple] += hit
        matched += hit
    return matched / len(triples) if triples else None


treebank, runs, out = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
smooth = SmoothingFunction().method2
refs = []
with open(treebank, encoding="utf-8") as handle:
    for tokens in conllu.parse_incr(handle):
        lemmas, heads, _ = analysis_tree(tokens)
        words = [t for t in tokens if isinstance(t["id"], int)]
        refs.append((tokens.metadata["sent_id"], lemmas, heads, tree_metrics(heads), [t["form"] for t in words],
                     [t["lemma"] for t in words], [t["deprel"].split(":")[0] == "punct" for t in words]))
scores = {}
for run in runs:
    texts = open(run, encoding="utf-8").read().splitlines()
    hyps, lemma_refs = [], []
    for (sent_id, ref, heads, _metrics, forms, lemmas, punct), text in zip(refs, texts):
        hyp = aligned_lemmas(text, forms, lemmas, punct)
        scores[f"{run}\t{sent_id}"] = (
            sentence_bleu([ref], hyp, smoothing_function=smooth),
            dea(ref, heads, hyp),
            1 - edit_distance(ref, hyp) / len(ref),
        )
        hyps.append(hyp)
        lemma_refs.append([ref])
    scores[run] = corpus_bleu(lemma_refs, hyps, smoothing_function=smooth)
json.dump(scores, open(out, "w"))
"""


def runs_of(scale):
    return max(2, round(RUNS * scale))


def word_form_texts():
    """Each sentence of the treebank as its syntactic words' forms joined by spaces."""
    texts, forms = [], []
    for line in EN_EWT_TEST.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) == 10 and fields[0].isdigit():
            forms.append(fields[1])
        elif not line and forms:
            texts.append(" ".join(forms))
            forms = []
    return texts


def perturbed(texts, seed):
    """A plausible run: each sentence's words, with a few adjacent swaps (a different run per seed)."""
    rng = random.Random(seed)
    out = []
    for text in texts:
        words = text.split()
        for _ in range(len(words) // 8):
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        out.append(" ".join(words))
    return "".join(t + "\n" for t in out)


def prepare(data, scale):
    texts = word_form_texts()
    lines = ["file,corpus,team,run,format"]
    for seed in range(runs_of(scale)):
        path = data / "runs" / f"team{seed % 10}" / f"run{seed // 10}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(perturbed(texts, seed), encoding="utf-8")
        lines.append(f"{path},en_ewt_test,team{seed % 10},run{seed // 10},text")
    (data / "manifest.csv").write_text("\n".join(lines) + "\n")
    (data / "script.py").write_text(SCRIPT)


def check(ctx):
    """Sentences whose DEA or sentence BLEU differ between the script and the warehouse (1e-9)."""
    scores = {}
    for key, value in json.loads((ctx.work / "scores.json").read_text()).items():
        if "\t" in key:  # a sentence's scores, keyed by its run's file and its sent_id
            run, sent_id = key.split("\t")
            scores[(Path(run).resolve(), sent_id)] = value
    con = duckdb.connect(str(ctx.work / "srlens.duckdb"), read_only=True)
    rows = con.execute(
        """select s.source_file, c.sent_id, c.bleu, c.dea from sentence_scores c
           join raw.submissions s on s.submission_id = c.submission_id"""
    ).fetchall()
    con.close()
    differ = 0
    for source, sent_id, bleu, dea in rows:
        script_bleu, script_dea, _ = scores[(Path(source).resolve(), sent_id)]
        same_dea = (dea is None) == (script_dea is None) and (dea is None or abs(dea - script_dea) <= 1e-9)
        differ += not (abs(bleu - script_bleu) <= 1e-9 and same_dea)
    return {"output sentences compared": float(len(rows)), "of which DEA or BLEU differ": float(differ)}


def steps(ctx):
    runs = [ctx.data / line.split(",")[0] for line in (ctx.data / "manifest.csv").read_text().splitlines()[1:]]
    return [
        Step(
            f"script: {len(runs)} runs",
            [ctx.python, ctx.data / "script.py", EN_EWT_TEST, *runs, ctx.work / "scores.json"],
        ),
        Step("srlens load-treebank", ctx.srlens("load-treebank", EN_EWT_TEST, "--corpus", "en_ewt_test")),
        Step("srlens load-campaign", ctx.srlens("load-campaign", ctx.data / "manifest.csv", "--campaign", "bench")),
        Step("srlens build --processor aligned", ctx.srlens("build", "--processor", "aligned"), details=check),
    ]


def summary(medians):
    script = next(m for name, m in medians.items() if name.startswith("script"))
    srlens = [m for name, m in medians.items() if name.startswith("srlens")]
    wall, cpu = sum(m["wall"] for m in srlens), sum(m["cpu"] for m in srlens)
    return (
        f"srlens's three commands take {wall:.1f} s ({cpu:.1f} s CPU). **Ratio script / srlens: "
        f"{script['wall'] / wall:.2f} (wall), {script['cpu'] / cpu:.2f} (CPU)**; the target is >= 3."
    )
