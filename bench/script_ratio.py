"""The warehouse against the per-sentence script a researcher writes (issue 18's second ratio).

Data: UD en_ewt test (2,077 sentences) and N runs (default 40) made of its word forms, joined by
spaces, with a few adjacent words swapped per sentence (bench/cli_speed.py's `perturbed`, one seed
per run): tokenized text, so that the script's whitespace tokens are the warehouse's words.

* **Script**: what issue 18 timed, in one fresh Python process: read the treebank with `conllu`;
  per reference sentence the SPEC 1 tree metrics (tests/reference_metrics.py); per output sentence
  the model-free words and DEA (tests/reference_scores.py), nltk's sentence BLEU (method 2) and the
  simple string accuracy from nltk's `edit_distance`; per run nltk's corpus BLEU.
* **Warehouse**: `srlens load-treebank`, one `srlens load-campaign` of a CSV manifest, and
  `srlens build --processor aligned`, each a fresh process, as a user runs them.

Both are timed in one session, one after the other; wall and CPU seconds (user + system of the
processes). The script's DEA and sentence BLEU are compared with the warehouse's for every sentence.

    .venv/bin/python bench/script_ratio.py [--runs 40] [--no-doc]
"""

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
from benchmarks_doc import write_section
from cli_speed import EN_EWT_TEST, perturbed

REPO = Path(__file__).resolve().parents[1]

# The script, as a researcher writes it (run in its own process: its imports count, as srlens's do).
SCRIPT = r'''
import json, sys
import conllu
from nltk.metrics.distance import edit_distance
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
from tests.reference_metrics import analysis_tree_from_tokenlist, sentence_metrics
from tests.reference_scores import aligned_lemmas, dea

treebank, runs, out = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
smooth = SmoothingFunction().method2
refs = []
with open(treebank, encoding="utf-8") as handle:
    for index, tokens in enumerate(conllu.parse_incr(handle), start=1):
        tree = analysis_tree_from_tokenlist(tokens, index)
        words = [t for t in tokens if isinstance(t["id"], int)]
        refs.append((tree, sentence_metrics(tree), [t["form"] for t in words], [t["lemma"] for t in words],
                     [t["deprel"].split(":")[0] == "punct" for t in words]))
scores = {}
for run in runs:
    texts = open(run, encoding="utf-8").read().splitlines()
    hyps, lemma_refs = [], []
    for (tree, _metrics, forms, lemmas, punct), text in zip(refs, texts):
        ref = [lemma.lower() for lemma in tree.lemmas]
        hyp = aligned_lemmas(text, forms, lemmas, punct)
        matched, edges, _ = dea(ref, tree.heads, tree.deprels, hyp)
        scores[f"{run}\t{tree.sent_id}"] = (
            sentence_bleu([ref], hyp, smoothing_function=smooth),
            matched / edges if edges else None,
            1 - edit_distance(ref, hyp) / len(ref),
        )
        hyps.append(hyp)
        lemma_refs.append([ref])
    scores[run] = corpus_bleu(lemma_refs, hyps, smoothing_function=smooth)
json.dump(scores, open(out, "w"))
'''


def timed(command, env):
    """(wall seconds, CPU seconds) of one command in a fresh process; stops the bench if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"failed: {' '.join(map(str, command))}\n{done.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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


def make_runs(work, runs):
    texts = word_form_texts()
    lines = ["file,corpus,team,run,format"]
    for seed in range(runs):
        path = work / "runs" / f"team{seed % 10}" / f"run{seed // 10}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(perturbed(texts, seed), encoding="utf-8")
        lines.append(f"{path.relative_to(work)},en_ewt_test,team{seed % 10},run{seed // 10},text")
    (work / "manifest.csv").write_text("\n".join(lines) + "\n")
    return len(texts), [work / line.split(",")[0] for line in lines[1:]]


def check_equal(warehouse, scores, work):
    """Sentences whose DEA or sentence BLEU differ between the script and the warehouse (1e-9)."""
    con = duckdb.connect(str(warehouse), read_only=True)
    rows = con.execute(
        """select s.source_file, c.sent_id, c.bleu, c.dea from sentence_scores c
           join raw.submissions s on s.submission_id = c.submission_id"""
    ).fetchall()
    con.close()
    differ = 0
    for source, sent_id, bleu, dea in rows:
        script_bleu, script_dea, _ = scores[f"{Path(source).resolve()}\t{sent_id}"]
        same_dea = (dea is None) == (script_dea is None) and (dea is None or abs(dea - script_dea) <= 1e-9)
        differ += not (abs(bleu - script_bleu) <= 1e-9 and same_dea)
    return len(rows), differ


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md as it is")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"}
    with tempfile.TemporaryDirectory(prefix="srlens-ratio-") as tmp:
        work = Path(tmp)
        sentences, run_files = make_runs(work, args.runs)
        script = work / "script.py"
        script.write_text(SCRIPT)
        print(f"{args.runs} runs x {sentences} sentences; the script ...", file=sys.stderr)
        script_s = timed([sys.executable, script, EN_EWT_TEST, *run_files, work / "scores.json"], env)
        scores = __import__("json").loads((work / "scores.json").read_text())
        warehouse = work / "wh.duckdb"
        srlens = [sys.executable, "-m", "srlens.cli", "--warehouse", warehouse]
        steps = {}
        for name, command in (
            ("load-treebank", [*srlens, "load-treebank", EN_EWT_TEST, "--corpus", "en_ewt_test"]),
            ("load-campaign", [*srlens, "load-campaign", work / "manifest.csv", "--campaign", "bench"]),
            ("build --processor aligned", [*srlens, "build", "--processor", "aligned"]),
        ):
            print(f"srlens {name} ...", file=sys.stderr)
            steps[name] = timed(command, env)
        compared, differ = check_equal(warehouse, scores, work)
    warehouse_s = tuple(sum(s[i] for s in steps.values()) for i in (0, 1))
    load = os.getloadavg()[0]
    rows = [f"| script (one process) | {script_s[0]:.1f} | {script_s[1]:.1f} |"]
    rows += [f"| srlens {name} | {wall:.1f} | {cpu:.1f} |" for name, (wall, cpu) in steps.items()]
    rows.append(f"| **srlens, all three** | **{warehouse_s[0]:.1f}** | **{warehouse_s[1]:.1f}** |")
    body = (
        f"`python bench/script_ratio.py --runs {args.runs}`: UD en_ewt test ({sentences:,} sentences) and "
        f"{args.runs} runs of its word forms with adjacent words swapped, {args.runs * sentences:,} output "
        f"sentences. {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; 1-minute "
        f"load average {load:.1f} when done (other work shared the machine: compare the CPU column).\n\n"
        "The script does what issue 18's did (conllu + nltk: tree metrics, model-free words and DEA, sentence "
        "BLEU, simple string accuracy, corpus BLEU per run); the warehouse does all of SPEC (every mart: "
        "mining, rules, significance, buckets, correlations, data tests).\n\n"
        "| seconds | wall | CPU |\n|---|---:|---:|\n" + "\n".join(rows) + "\n\n"
        f"**Ratio script / warehouse: {script_s[0] / warehouse_s[0]:.2f} (wall), "
        f"{script_s[1] / warehouse_s[1]:.2f} (CPU)**; issue 18's target is >= 3. DEA and sentence BLEU of "
        f"the two agree on {compared - differ:,} of {compared:,} output sentences (1e-9).\n"
    )
    print(body)
    if not args.no_doc:
        write_section("Script against warehouse, 40 runs (issue 18)", body)


if __name__ == "__main__":
    sys.exit(main())
