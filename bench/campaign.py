"""Campaign benchmark (issue 8): a whole shared-task campaign through srlens on this machine.

Generates, deterministically, an SR'18 + SR'19-sized campaign from the UD treebanks of the shared
folder ($SRLENS_SHARED_DIR, default ../shared): about 30 reference corpora (slices and seeded
samples of en_ewt train and of the dev/test files of en_ewt, fr_gsd, de_gsd and ru_gsd, each
written as its own .conllu; sentences repeated where a file is too small, with unique sent_ids)
and 170 system runs spread over them (teams of campaigns sr18 and sr19; plain-text outputs made
by deterministic perturbations of the reference words: adjacent swaps, span moves, drops,
duplications, lemma-for-form replacements and fully random orders, at rates that vary by team
and run, so that scores vary).

Then it times, each stage in a fresh subprocess whose process tree (dbt included) is sampled
for memory:

  load        every treebank and run, through loaders.load (into a new warehouse)
  build       srlens.build.build, processor 'aligned' (model-free), from scratch; per dbt model
              group (staging / intermediate / marts / tests) from dbt's run_results.json
  report      srlens.report.write_report (skipped with a note when it is not importable)
  add one run load one more run, then build again (whatever `srlens build` does: full or
              incremental)
  researcher  a per-sentence Python script computing the same metrics on the same data
              (bench/campaign_researcher.py) on a fixed sample of corpora, extrapolated linearly
  scaling     load + build of a smaller campaign (default 20 runs x 1,000 sentences), of the
              same with twice the runs, and of the same with sentences twice as long (pairs of
              reference trees joined into one: the second root attached to the first with
              'parataxis')
  stanza      stanza parsing of 1,000 output sentences (srlens.processing), apart from the
              model-free build

and writes the section "Campaign" of docs/benchmarks.md. Progress goes to stderr.

    .venv/bin/python bench/campaign.py                 # the issue's shape: 170 runs x 2,000 sentences
    .venv/bin/python bench/campaign.py --scale 0.05 --no-doc   # a quick small version
    .venv/bin/python bench/campaign.py --generate-only --double-length --work /tmp/c  # data only
    .venv/bin/python bench/campaign.py --render-only    # rewrite the section from WORK/results.json

Generated data is reused when the parameters match (WORK/<experiment>/manifest.json). The researcher
script alone: .venv/bin/python bench/campaign_researcher.py .bench/campaign/main/manifest.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
for _path in (str(REPO), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
UD = SHARED / "ud"
DEFAULT_WORK = REPO / ".bench" / "campaign"

# Source treebanks: name -> (language, path under ud/).
SOURCES = {
    "en_ewt_train": ("en", "en_ewt/en_ewt-ud-train.conllu"),
    "en_ewt_dev": ("en", "en_ewt/en_ewt-ud-dev.conllu"),
    "en_ewt_test": ("en", "en_ewt/en_ewt-ud-test.conllu"),
    "fr_gsd_dev": ("fr", "fr_gsd/fr_gsd-ud-dev.conllu"),
    "fr_gsd_test": ("fr", "fr_gsd/fr_gsd-ud-test.conllu"),
    "de_gsd_dev": ("de", "de_gsd/de_gsd-ud-dev.conllu"),
    "de_gsd_test": ("de", "de_gsd/de_gsd-ud-test.conllu"),
    "ru_gsd_dev": ("ru", "ru_gsd/ru_gsd-ud-dev.conllu"),
    "ru_gsd_test": ("ru", "ru_gsd/ru_gsd-ud-test.conllu"),
}
# The 15 corpora of one campaign, in an order whose prefixes cover the four languages.
CAMPAIGN_CORPORA = [
    ("en_ewt_train", 0),
    ("fr_gsd_dev", 0),
    ("de_gsd_test", 0),
    ("ru_gsd_dev", 0),
    ("en_ewt_test", 0),
    ("en_ewt_train", 1),
    ("fr_gsd_test", 0),
    ("de_gsd_dev", 0),
    ("ru_gsd_test", 0),
    ("en_ewt_dev", 0),
    ("en_ewt_train", 2),
    ("en_ewt_train", 3),
    ("en_ewt_train", 4),
    ("en_ewt_train", 5),
    ("en_ewt_train", 6),
]
CAMPAIGNS = {"sr18": 8, "sr19": 12}  # campaign -> number of teams
# --mixed-sizes: corpus sizes (for --sentences 2000) cycle through these; mean 2,000, 500 to 10,000.
MIXED_SIZES = (500, 500, 1000, 1000, 1000, 1000, 1500, 1500, 2000, 10000)
GENERATOR_VERSION = 1  # bump when the generated data changes, so old work folders are regenerated


def log(message):
    print(f"[campaign {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Generation


class Sentence:
    __slots__ = ("sent_id", "comments", "lines", "forms", "lemmas")

    def __init__(self, sent_id, comments, lines):
        self.sent_id, self.comments, self.lines = sent_id, comments, lines
        self.forms, self.lemmas = [], []
        for line in lines:
            cols = line.split("\t", 3)
            if cols[0].isdigit():
                self.forms.append(cols[1])
                self.lemmas.append(cols[2])

    @property
    def text(self):
        for line in self.comments:
            if line.startswith("# text = "):
                return line[len("# text = ") :]
        return " ".join(self.forms)


_source_cache = {}


def read_source(name):
    """The sentences of one shared UD file, as text lines (parsed only as far as generation needs)."""
    if name not in _source_cache:
        path = UD / SOURCES[name][1]
        sentences = []
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            lines = [line for line in block.split("\n") if line]
            if not lines:
                continue
            comments = [line for line in lines if line.startswith("#")]
            sent_id = next(line.split("=", 1)[1].strip() for line in comments if line.startswith("# sent_id"))
            sentences.append(Sentence(sent_id, comments, [line for line in lines if not line.startswith("#")]))
        _source_cache[name] = sentences
    return _source_cache[name]


def _shift_id(token_id, offset):
    if "-" in token_id:
        a, b = token_id.split("-")
        return f"{int(a) + offset}-{int(b) + offset}"
    if "." in token_id:
        a, b = token_id.split(".")
        return f"{int(a) + offset}.{b}"
    return str(int(token_id) + offset)


def join_trees(a, b, sent_id):
    """One tree from two: b's words follow a's, b's root becomes a 'parataxis' dependent of a's root.

    Ids, heads, multiword ranges, empty nodes and enhanced dependencies of b are renumbered.
    """
    offset = len(a.forms)
    root_a = next(
        line.split("\t")[0] for line in a.lines if line.split("\t")[0].isdigit() and line.split("\t")[6] == "0"
    )
    lines = list(a.lines)
    for line in b.lines:
        cols = line.split("\t")
        cols[0] = _shift_id(cols[0], offset)
        if cols[6] == "0":
            cols[6], cols[7] = root_a, "parataxis"
        elif cols[6] != "_":
            cols[6] = str(int(cols[6]) + offset)
        if cols[8] != "_":
            items = []
            for item in cols[8].split("|"):
                head, relation = item.split(":", 1)
                items.append(f"{root_a}:parataxis" if head == "0" else f"{_shift_id(head, offset)}:{relation}")
            cols[8] = "|".join(items)
        lines.append("\t".join(cols))
    joined = Sentence(sent_id, [f"# sent_id = {sent_id}", f"# text = {a.text} {b.text}"], lines)
    return joined


def select(source_len, count, mode, offset, rng):
    """Indexes into a source file: a contiguous slice from `offset` (wrapping), or seeded permutations."""
    if mode == "slice":
        return [(offset + j) % source_len for j in range(count)]
    order = []
    while len(order) < count:
        perm = list(range(source_len))
        rng.shuffle(perm)
        order += perm
    return order[:count]


def corpus_plan(n_corpora, sentences, mixed_sizes):
    """[(name, language, campaign, source, mode, offset, size)] interleaving the two campaigns."""
    plan = []
    per_campaign = {"sr18": CAMPAIGN_CORPORA, "sr19": CAMPAIGN_CORPORA[2:] + CAMPAIGN_CORPORA[:2]}
    for i in range(len(CAMPAIGN_CORPORA)):
        for campaign in CAMPAIGNS:
            source, part = per_campaign[campaign][i]
            language = SOURCES[source][0]
            name = f"{source}{part if source.endswith('train') else ''}_{campaign}"
            # sr18 corpora are contiguous slices, sr19 corpora seeded samples of their file.
            mode = "slice" if campaign == "sr18" else "sample"
            size = sentences
            if mixed_sizes:
                size = max(1, round(MIXED_SIZES[len(plan) % len(MIXED_SIZES)] * sentences / 2000))
            plan.append((name, language, campaign, source, mode, part * size, size))
    if n_corpora > len(plan):
        raise SystemExit(f"at most {len(plan)} corpora can be generated")
    return plan[:n_corpora]


def team_profiles(seed):
    """campaign -> [(team, profile)]: teams from good (few swaps) to poor (many random orders)."""
    teams = {}
    number = 0
    for campaign, count in CAMPAIGNS.items():
        rng = random.Random(f"{seed}/teams/{campaign}")
        qualities = sorted(rng.random() for _ in range(count))
        teams[campaign] = []
        for q in qualities:
            number += 1
            teams[campaign].append(
                (
                    f"team{number:02d}",
                    {
                        "shuffle": 0.01 + 0.35 * q * q,  # share of sentences in fully random order
                        "swap": 0.02 + 0.25 * q,  # per adjacent pair
                        "move": 0.05 + 0.5 * q,  # per sentence: move a span of 1-3 words
                        "drop": 0.003 + 0.05 * q,  # per word
                        "dup": 0.002 + 0.02 * q,  # per word: repeat it
                        "lemma": 0.01 + 0.1 * q,  # per word: the lemma instead of the form
                    },
                )
            )
    return teams


def perturb(forms, lemmas, profile, rng):
    words = list(zip(forms, lemmas))
    if rng.random() < profile["shuffle"]:
        rng.shuffle(words)
    else:
        for i in range(len(words) - 1):
            if rng.random() < profile["swap"]:
                words[i], words[i + 1] = words[i + 1], words[i]
        if len(words) > 2 and rng.random() < profile["move"]:
            length = rng.randint(1, min(3, len(words) - 1))
            start = rng.randrange(len(words) - length + 1)
            span = words[start : start + length]
            del words[start : start + length]
            at = rng.randrange(len(words) + 1)
            words[at:at] = span
    out = []
    for form, lemma in words:
        if rng.random() < profile["drop"]:
            continue
        if lemma != "_" and rng.random() < profile["lemma"]:
            form = lemma
        out.append(form)
        if rng.random() < profile["dup"]:
            out.append(form)
    return out or [words[0][0]]


def generate(work, runs, sentences, n_corpora, seed=8, double_length=False, mixed_sizes=False, extra_runs=1):
    """Write corpora/*.conllu, runs/*.txt and manifest.json into `work`; reuse them if already there."""
    work = Path(work)
    params = {
        "version": GENERATOR_VERSION,
        "runs": runs,
        "sentences": sentences,
        "corpora": n_corpora,
        "seed": seed,
        "double_length": double_length,
        "mixed_sizes": mixed_sizes,
        "extra_runs": extra_runs,
    }
    manifest_path = work / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("params") == params and all(
            (work / item["path"]).exists() for item in manifest["corpora"] + manifest["runs"] + manifest["extra_runs"]
        ):
            log(f"reusing generated data in {work}")
            return manifest
    if work.exists():
        shutil.rmtree(work)
    (work / "corpora").mkdir(parents=True)
    (work / "runs").mkdir()
    started = time.perf_counter()

    corpora, references = [], {}
    for name, language, campaign, source, mode, offset, size in corpus_plan(n_corpora, sentences, mixed_sizes):
        src = read_source(source)
        rng = random.Random(f"{seed}/corpus/{name}")
        picks = select(len(src), size * (2 if double_length else 1), mode, offset, rng)
        copies = defaultdict(int)
        chosen = []
        for i in picks:
            copies[i] += 1  # a sentence repeated within a corpus gets a new sent_id
            sent_id = src[i].sent_id if copies[i] == 1 else f"{src[i].sent_id}~{copies[i]}"
            chosen.append((src[i], sent_id))
        if double_length:
            items = [join_trees(a, b, f"{ia}+{ib}") for (a, ia), (b, ib) in zip(chosen[0::2], chosen[1::2])]
        else:
            items = []
            for sentence, sent_id in chosen:
                comments = [f"# sent_id = {sent_id}" if c.startswith("# sent_id") else c for c in sentence.comments]
                item = Sentence(sent_id, comments, sentence.lines)
                items.append(item)
        path = Path("corpora") / f"{name}.conllu"
        with open(work / path, "w", encoding="utf-8") as handle:
            for item in items:
                handle.write("\n".join(item.comments + item.lines) + "\n\n")
        references[name] = items
        corpora.append(
            {
                "name": name,
                "language": language,
                "campaign": campaign,
                "source": SOURCES[source][1],
                "selection": mode,
                "path": str(path),
                "sentences": len(items),
                "words": sum(len(item.forms) for item in items),
            }
        )
        log(f"corpus {name}: {len(items)} sentences")

    teams = team_profiles(seed)
    run_list, extra_list = [], []
    nc = len(corpora)
    for r in range(runs + extra_runs):
        corpus = corpora[r % nc]
        k = r // nc
        if r < runs:
            campaign_teams = teams[corpus["campaign"]]
            team, profile = campaign_teams[(r % nc + k) % len(campaign_teams)]
            run = f"r{k + 1}"
        else:  # the runs added after the campaign build
            team, profile = "late", teams["sr19"][len(teams["sr19"]) // 2][1]
            run = f"r{r - runs + 1}"
        sub_id = f"{corpus['campaign']}/{corpus['name']}/{team}/{run}"
        rng = random.Random(f"{seed}/run/{sub_id}")
        factor = 0.75 + 0.5 * rng.random()  # runs of a team differ a little
        profile = {key: min(1.0, value * factor) for key, value in profile.items()}
        path = Path("runs") / f"{corpus['name']}.{team}.{run}.txt"
        with open(work / path, "w", encoding="utf-8") as handle:
            for item in references[corpus["name"]]:
                handle.write(" ".join(perturb(item.forms, item.lemmas, profile, rng)) + "\n")
        entry = {
            "submission_id": sub_id,
            "corpus": corpus["name"],
            "team": team,
            "run": run,
            "campaign": corpus["campaign"],
            "path": str(path),
            "sentences": corpus["sentences"],
            "profile": {key: round(value, 4) for key, value in profile.items()},
        }
        (run_list if r < runs else extra_list).append(entry)
    manifest = {
        "params": params,
        "corpora": corpora,
        "runs": run_list,
        "extra_runs": extra_list,
        "generate_seconds": time.perf_counter() - started,
    }
    manifest_path.write_text(json.dumps(manifest, indent=1))
    log(
        f"generated {nc} corpora and {len(run_list)} (+{len(extra_list)}) runs in {work} "
        f"({manifest['generate_seconds']:.1f} s)"
    )
    return manifest


# ---------------------------------------------------------------------------
# Stages (each runs in its own process: `campaign.py --stage NAME --stage-args JSON`)


def _paths(work):
    work = Path(work)
    return work, json.loads((work / "manifest.json").read_text())


def _fresh_warehouse(warehouse):
    warehouse = Path(warehouse)
    for leftover in (
        warehouse,
        Path(f"{warehouse}.wal"),
        Path(f"{warehouse}.lock"),
        warehouse.parent / f".{warehouse.name}.building",
        warehouse.parent / f".{warehouse.name}.building.wal",
    ):
        leftover.unlink(missing_ok=True)
    shutil.rmtree(warehouse.parent / f".{warehouse.name}.dbt", ignore_errors=True)


def stage_load(work, warehouse):
    from srlens.loaders.load import load_outputs, load_treebank

    work, manifest = _paths(work)
    _fresh_warehouse(warehouse)
    started = time.perf_counter()
    for number, corpus in enumerate(manifest["corpora"], start=1):
        load_treebank(warehouse, work / corpus["path"], corpus["name"], language=corpus["language"])
        if number % 10 == 0 or number == len(manifest["corpora"]):
            log(f"load: {number}/{len(manifest['corpora'])} treebanks")
    treebanks_s = time.perf_counter() - started
    for number, run in enumerate(manifest["runs"], start=1):
        load_outputs(
            warehouse, work / run["path"], run["corpus"], run["team"], run["run"], campaign=run["campaign"], fmt="text"
        )
        if number % 25 == 0 or number == len(manifest["runs"]):
            log(f"load: {number}/{len(manifest['runs'])} runs")
    return {
        "seconds": time.perf_counter() - started,
        "treebanks_seconds": treebanks_s,
        "runs_seconds": time.perf_counter() - started - treebanks_s,
        "warehouse_mb": Path(warehouse).stat().st_size / 2**20,
    }


def dbt_node_times(warehouse):
    """Per dbt node: group (staging/intermediate/marts/tests), execution time, start and end (epoch s)."""
    target = Path(warehouse).parent / f".{Path(warehouse).name}.dbt" / "target"
    results = json.loads((target / "run_results.json").read_text())["results"]
    folders = {}
    manifest_path = target / "manifest.json"
    if manifest_path.exists():
        nodes = json.loads(manifest_path.read_text())["nodes"]
        folders = {
            uid: (node.get("fqn") or ["", "other"])[1] if len(node.get("fqn") or []) > 2 else "other"
            for uid, node in nodes.items()
            if uid.startswith("model.")
        }
    out = []
    for r in results:
        uid = r["unique_id"]
        kind = uid.split(".")[0]
        group = "tests" if kind == "test" else folders.get(uid, kind)
        spans = [
            (t["started_at"], t["completed_at"])
            for t in r.get("timing", [])
            if t.get("started_at") and t.get("completed_at")
        ]
        start = min((_epoch(s) for s, _ in spans), default=None)
        end = max((_epoch(e) for _, e in spans), default=None)
        out.append(
            {
                "node": uid.split(".")[2] if kind == "test" else uid.split(".")[-1],
                "kind": kind,
                "group": group,
                "status": r.get("status"),
                "seconds": r.get("execution_time") or 0.0,
                "start": start,
                "end": end,
            }
        )
    return out


def _epoch(stamp):
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def stage_build(work, warehouse, echo=False):
    from srlens.build import build

    wall_started = time.time()
    started = time.perf_counter()
    build(warehouse, echo=echo, processor="aligned")
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "wall_started": wall_started,
        "wall_ended": time.time(),
        "nodes": dbt_node_times(warehouse),
        "warehouse_mb": Path(warehouse).stat().st_size / 2**20,
        "copy_seconds": time_copy(warehouse),
    }


def time_copy(warehouse):
    """Seconds to copy the warehouse file once (what every build does first), page cache as it is."""
    copy = Path(warehouse).parent / ".copy_timing.duckdb"
    started = time.perf_counter()
    shutil.copyfile(warehouse, copy)
    seconds = time.perf_counter() - started
    copy.unlink()
    return seconds


def stage_report(work, warehouse):
    try:
        from srlens.report import write_report
    except ImportError as e:
        return {"skipped": f"srlens.report.write_report is not importable ({e})"}
    out_dir = Path(work) / "report"
    shutil.rmtree(out_dir, ignore_errors=True)
    started = time.perf_counter()
    write_report(warehouse, out_dir)
    seconds = time.perf_counter() - started
    size = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file()) if out_dir.exists() else 0
    return {"seconds": seconds, "report_mb": size / 2**20}


def stage_add_run(work, warehouse, echo=False):
    from srlens.build import build
    from srlens.loaders.load import load_outputs

    work, manifest = _paths(work)
    run = manifest["extra_runs"][0]
    started = time.perf_counter()
    load_outputs(
        warehouse, work / run["path"], run["corpus"], run["team"], run["run"], campaign=run["campaign"], fmt="text"
    )
    load_s = time.perf_counter() - started
    log(f"add one run: loaded {run['submission_id']} in {load_s:.1f} s; building")
    wall_started = time.time()
    started = time.perf_counter()
    build(warehouse, echo=echo, processor="aligned")
    build_s = time.perf_counter() - started
    return {
        "seconds": load_s + build_s,
        "load_seconds": load_s,
        "build_seconds": build_s,
        "wall_started": wall_started,
        "wall_ended": time.time(),
        "submission_id": run["submission_id"],
        "sentences": run["sentences"],
        "nodes": dbt_node_times(warehouse),
        "warehouse_mb": Path(warehouse).stat().st_size / 2**20,
        "copy_seconds": time_copy(warehouse),
    }


def researcher_sample(manifest, fraction):
    """Per language, evenly spaced corpora (a `fraction` of them, at least one); all their runs go with them."""
    by_language = defaultdict(list)
    for corpus in manifest["corpora"]:
        by_language[corpus["language"]].append(corpus["name"])
    names = []
    for corpora in by_language.values():
        m = max(1, min(len(corpora), round(len(corpora) * fraction)))
        names += [corpora[i] for i in sorted({round(i * len(corpora) / m) for i in range(m)})]
    return names


def stage_researcher(work, warehouse, corpora_names):
    import duckdb
    from campaign_researcher import score_campaign

    work, manifest = _paths(work)
    corpora = [{**c, "path": work / c["path"]} for c in manifest["corpora"] if c["name"] in corpora_names]
    runs = [{**r, "path": work / r["path"]} for r in manifest["runs"] if r["corpus"] in corpora_names]
    started = time.perf_counter()
    results, seconds, counts = score_campaign(corpora, runs, progress=log)
    total = time.perf_counter() - started
    # Same figures as the warehouse? (not timed)
    check = {"sentences": 0, "bleu_equal": 0, "dea_equal": 0, "runs": 0, "corpus_bleu_equal": 0}
    if Path(warehouse).exists():
        con = duckdb.connect(str(warehouse), read_only=True)
        try:
            for sub_id, rows in results["sentences"].items():
                got = dict(
                    (r[0], (r[1], r[2]))
                    for r in con.execute(
                        "select sent_id, bleu, dea from sentence_scores where submission_id = ?", [sub_id]
                    ).fetchall()
                )
                for row in rows:
                    bleu, dea = got.get(row["sent_id"], (None, None))
                    check["sentences"] += 1
                    check["bleu_equal"] += bleu is not None and abs(bleu - row["bleu"]) <= 1e-12
                    check["dea_equal"] += (dea is None and row["dea"] is None) or (
                        dea is not None and row["dea"] is not None and abs(dea - row["dea"]) <= 1e-12
                    )
                corpus_bleu = con.execute(
                    "select corpus_bleu from submission_scores where submission_id = ?", [sub_id]
                ).fetchone()
                check["runs"] += 1
                check["corpus_bleu_equal"] += (
                    bool(corpus_bleu)
                    and corpus_bleu[0] is not None
                    and abs(corpus_bleu[0] - results["runs"][sub_id]["corpus_bleu"]) <= 1e-12
                )
        except duckdb.Error as e:
            check["error"] = str(e).splitlines()[0]
        finally:
            con.close()
    # Per language: seconds and sentences, for a linear extrapolation language by language.
    by_language = defaultdict(
        lambda: {"tree_seconds": 0.0, "reference_sentences": 0, "score_seconds": 0.0, "output_sentences": 0}
    )
    language = {c["name"]: c["language"] for c in corpora}
    for c in corpora:
        stats = by_language[c["language"]]
        stats["tree_seconds"] += results["seconds"]["corpora"][c["name"]]
        stats["reference_sentences"] += c["sentences"]
    for r in runs:
        stats = by_language[language[r["corpus"]]]
        stats["score_seconds"] += results["seconds"]["runs"][r["submission_id"]]
        stats["output_sentences"] += r["sentences"]
    return {
        "seconds": total,
        "parts": seconds,
        **counts,
        "corpora": len(corpora),
        "runs": len(runs),
        "by_language": dict(by_language),
        "check": check,
    }


def stage_stanza(work, warehouse, sentences):
    import duckdb

    from srlens import processing
    from srlens.loaders.load import load_outputs, load_treebank

    work, manifest = _paths(work)
    run = next(r for r in manifest["runs"] if r["corpus"].startswith("en_"))
    corpus = next(c for c in manifest["corpora"] if c["name"] == run["corpus"])
    blocks = [b for b in (work / corpus["path"]).read_text(encoding="utf-8").split("\n\n") if b.strip()][:sentences]
    texts = (work / run["path"]).read_text(encoding="utf-8").split("\n")[: len(blocks)]
    tmp = Path(warehouse).parent
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "stanza_ref.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    (tmp / "stanza_run.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    _fresh_warehouse(warehouse)
    load_treebank(warehouse, tmp / "stanza_ref.conllu", "en_stanza", language="en")
    load_outputs(warehouse, tmp / "stanza_run.txt", "en_stanza", run["team"], run["run"], fmt="text")
    models = Path(os.environ.get(processing.STANZA_DIR_ENV) or SHARED / "stanza")
    con = duckdb.connect(str(warehouse))
    try:
        started = time.perf_counter()
        counts = processing.process_pending(con, model_dir=models, progress=True)
        seconds = time.perf_counter() - started
    finally:
        con.close()
    en = counts["languages"]["en"]
    return {
        "seconds": seconds,
        "sentences": len(texts),
        "texts_parsed": en["texts_parsed"],
        "words": en["words_parsed"],
        "load_seconds": en["load_seconds"],
        "parse_seconds": en["parse_seconds"],
        "processor": en["processor"],
        "models": models.name,
    }


STAGES = {
    "load": stage_load,
    "build": stage_build,
    "report": stage_report,
    "add_run": stage_add_run,
    "researcher": stage_researcher,
    "stanza": stage_stanza,
}


def run_stage_here(name, kwargs, result_path):
    result = STAGES[name](**kwargs)
    result["self_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["children_maxrss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    Path(result_path).write_text(json.dumps(result))


# ---------------------------------------------------------------------------
# Memory of a process tree, sampled from /proc


def _children_map():
    children = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        children[ppid].append(int(entry))
    return children


def _status_kb(pid):
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:", "Name:")):
                    key, value = line.split(":", 1)
                    values[key] = value.split()[0] if key != "Name" else value.strip()
    except OSError:
        return None
    return values


def _command(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            args = handle.read().split(b"\0")
        names = [Path(a.decode(errors="replace")).name for a in args[:3] if a]
        if names and names[0].startswith("python") and len(names) > 1:
            names = names[1:]  # the script, not the interpreter: dbt, campaign.py
        return " ".join(names)
    except OSError:
        return "?"


class TreeSampler(threading.Thread):
    """Peak summed RSS of a process and its descendants, and the peak (VmHWM) of each process."""

    def __init__(self, pid, label, interval=0.2, heartbeat=30.0):
        super().__init__(daemon=True)
        self.pid, self.label, self.interval, self.heartbeat = pid, label, interval, heartbeat
        self.stop = threading.Event()
        self.peak_tree_kb = 0
        self.hwm = {}  # pid -> (kb, command)
        self.samples = []  # (epoch seconds, summed RSS kB)

    def run(self):
        started = last_beat = time.monotonic()
        while not self.stop.is_set():
            children = _children_map()
            pids, stack = [], [self.pid]
            while stack:
                pid = stack.pop()
                pids.append(pid)
                stack.extend(children.get(pid, ()))
            total = 0
            for pid in pids:
                status = _status_kb(pid)
                if not status or "VmRSS" not in status:
                    continue
                total += int(status["VmRSS"])
                hwm = int(status.get("VmHWM", status["VmRSS"]))
                if hwm > self.hwm.get(pid, (0, ""))[0]:
                    command = self.hwm[pid][1] if pid in self.hwm else _command(pid)
                    self.hwm[pid] = (hwm, command)
            self.peak_tree_kb = max(self.peak_tree_kb, total)
            self.samples.append((time.time(), total))
            now = time.monotonic()
            if now - last_beat >= self.heartbeat:
                last_beat = now
                log(
                    f"{self.label}: {now - started:.0f} s, {total / 2**20:.2f} GiB resident now "
                    f"(load average {os.getloadavg()[0]:.1f})"
                )
            self.stop.wait(self.interval)

    def largest(self):
        if not self.hwm:
            return 0, ""
        kb, command = max(self.hwm.values())
        return kb, command


def run_stage(name, label=None, echo_dbt=False, **kwargs):
    """Run one stage in a fresh interpreter; returns its result plus wall time and memory figures."""
    label = label or name
    result_path = Path(kwargs["work"]) / f".stage_{name}.json"
    result_path.unlink(missing_ok=True)
    if name in ("build", "add_run"):
        kwargs["echo"] = echo_dbt
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--stage",
        name,
        "--stage-args",
        json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in kwargs.items()}),
        "--stage-result",
        str(result_path),
    ]
    load_before = os.getloadavg()[0]
    log(f"{label}: starting (load average {load_before:.1f})")
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO)
    sampler = TreeSampler(proc.pid, label)
    sampler.start()
    code = proc.wait()
    wall = time.perf_counter() - started
    sampler.stop.set()
    sampler.join()
    if code != 0 or not result_path.exists():
        raise SystemExit(f"stage {label} failed (exit code {code}); see the output above")
    result = json.loads(result_path.read_text())
    result_path.unlink()
    largest_kb, largest_cmd = sampler.largest()
    for node in result.get("nodes", []):  # memory of the process tree while each dbt node ran
        if node["start"] is not None and node["end"] is not None:
            inside = [kb for t, kb in sampler.samples if node["start"] <= t <= node["end"]]
            node["tree_mb"] = max(inside) / 1024 if inside else None
    if sampler.samples:
        result["peak_at"] = max(sampler.samples, key=lambda sample: sample[1])[0]
    result.update(
        {
            "stage": label,
            "wall": wall,
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
            "peak_tree_mb": sampler.peak_tree_kb / 1024,
            "largest_mb": max(largest_kb / 1024, result.get("self_maxrss_mb", 0), result.get("children_maxrss_mb", 0)),
            "largest_cmd": largest_cmd,
        }
    )
    if "skipped" in result:
        log(f"{label}: skipped: {result['skipped']}")
    else:
        log(
            f"{label}: {result.get('seconds', wall):.1f} s (process {wall:.1f} s), peak "
            f"{result['peak_tree_mb']:,.0f} MB "
            f"(largest process {result['largest_mb']:,.0f} MB: {largest_cmd})"
        )
    return result


# ---------------------------------------------------------------------------
# Figures


def group_table(nodes, wall_started=None):
    """Rows (group, nodes, summed execution s, wall span s) in dbt order of first start."""
    groups = defaultdict(list)
    for node in nodes:
        groups[node["group"]].append(node)
    rows = []
    for group, items in groups.items():
        starts = [n["start"] for n in items if n["start"] is not None]
        ends = [n["end"] for n in items if n["end"] is not None]
        span = (max(ends) - min(starts)) if starts and ends else 0.0
        rows.append((group, len(items), sum(n["seconds"] for n in items), span, min(starts, default=0)))
    rows.sort(key=lambda row: row[4])
    return rows


def dbt_span(nodes):
    starts = [n["start"] for n in nodes if n["start"] is not None]
    ends = [n["end"] for n in nodes if n["end"] is not None]
    return (min(starts), max(ends)) if starts and ends else (None, None)


def stanza_figure_from_doc():
    """(seconds per 1,000 sentences, the line it came from) from the 'Stanza parsing' section, if any."""
    from benchmarks_doc import BENCHMARKS_MD

    if not BENCHMARKS_MD.exists():
        return None
    text = BENCHMARKS_MD.read_text()
    n = re.search(r"^(\d+) sentences of ", text, re.M)
    total = re.search(r"process_pending in all: ([\d.]+) s", text)
    if not (n and total):
        return None
    return float(total.group(1)) * 1000 / int(n.group(1)), total.group(0)


def fmt_s(seconds):
    return f"{seconds:,.1f}"


def fmt_mb(mb):
    return f"{mb:,.0f}"


def machine_line():
    cpus = len(os.sched_getaffinity(0))
    with open("/proc/meminfo") as handle:
        mem_kb = int(next(line for line in handle if line.startswith("MemTotal")).split()[1])
    from importlib import metadata

    import duckdb

    return (
        f"{platform.machine()}, {cpus} CPUs, {mem_kb / 2**20:.0f} GiB RAM, Python {platform.python_version()}, "
        f"DuckDB {duckdb.__version__}, dbt-core {metadata.version('dbt-core')}, "
        f"dbt-duckdb {metadata.version('dbt-duckdb')}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=170, help="system runs (default %(default)s)")
    ap.add_argument("--sentences", type=int, default=2000, help="sentences per run (default %(default)s)")
    ap.add_argument("--corpora", type=int, default=30, help="reference corpora (default %(default)s, at most 30)")
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply runs, sentences, corpora and the scaling experiments (e.g. 0.05 for a quick run)",
    )
    ap.add_argument(
        "--mixed-sizes",
        action="store_true",
        help="corpus sizes from 500 to 10,000 sentences (mean --sentences) instead of all equal",
    )
    ap.add_argument(
        "--double-length",
        action="store_true",
        help="generate the main campaign with every reference sentence made of two joined trees",
    )
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="work folder (default %(default)s)")
    ap.add_argument("--scaling-runs", type=int, default=20, help="base runs of the scaling experiments")
    ap.add_argument("--scaling-sentences", type=int, default=1000, help="sentences per run of the scaling experiments")
    ap.add_argument("--scaling-corpora", type=int, default=4)
    ap.add_argument(
        "--researcher-fraction",
        type=float,
        default=None,
        help="share of the corpora (with all their runs) the per-sentence Python baseline scores, "
        "extrapolated linearly language by language (default: all below 40,000 output sentences, else 0.1)",
    )
    ap.add_argument(
        "--stanza-sentences",
        type=int,
        default=1000,
        help="stanza-parse this many output sentences (0: take the figure of the 'Stanza parsing' section)",
    )
    ap.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=("report", "add_run", "researcher", "scaling", "stanza"),
        help="leave out a stage",
    )
    ap.add_argument("--generate-only", action="store_true", help="write the data and stop")
    ap.add_argument("--dbt-log", action="store_true", help="show dbt's own output (progress per model)")
    ap.add_argument("--no-doc", action="store_true", help="print the figures, do not write docs/benchmarks.md")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="write the figures of the last run again (from WORK/results.json), running nothing",
    )
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--stage-args", help=argparse.SUPPRESS)
    ap.add_argument("--stage-result", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.stage:
        run_stage_here(args.stage, json.loads(args.stage_args), args.stage_result)
        return 0
    if not UD.is_dir():
        raise SystemExit(f"UD treebanks not found in {UD} (set SRLENS_SHARED_DIR)")

    work = args.work.resolve()
    if args.render_only:
        saved = json.loads((work / "results.json").read_text())
        saved_args = argparse.Namespace(**saved["args"])
        scaling = {key: tuple(value) for key, value in saved["scaling"].items()}
        body = render(saved_args, saved["manifest"], saved["results"], scaling, *saved["totals"])
        print(body)
        if not args.no_doc:
            from benchmarks_doc import write_section

            write_section(section_title(saved_args), body)
            log(f"wrote the section '{section_title(saved_args)}' of docs/benchmarks.md")
        return 0

    s = args.scale
    runs = max(2, round(args.runs * s))
    sentences = max(20, round(args.sentences * s))
    n_corpora = min(runs, max(min(4, args.corpora), round(args.corpora * s)))
    main_dir = work / ("main-double" if args.double_length else "main")
    manifest = generate(main_dir, runs, sentences, n_corpora, args.seed, args.double_length, args.mixed_sizes)
    scaling_runs = max(2, round(args.scaling_runs * s))
    scaling_sentences = max(20, round(args.scaling_sentences * s))
    scaling_corpora = min(scaling_runs, args.scaling_corpora)
    scaling_sets = {}
    if "scaling" not in args.skip:
        for key, r, double in (
            ("base", scaling_runs, False),
            ("runs x2", 2 * scaling_runs, False),
            ("length x2", scaling_runs, True),
        ):
            folder = work / f"scaling-{key.replace(' ', '').replace('x2', '-x2')}"
            scaling_sets[key] = (
                folder,
                generate(folder, r, scaling_sentences, scaling_corpora, args.seed, double, False, extra_runs=0),
            )
    if args.generate_only:
        return 0

    out_sentences = sum(r["sentences"] for r in manifest["runs"])
    ref_sentences = sum(c["sentences"] for c in manifest["corpora"])
    corpus_words = {c["name"]: c["words"] for c in manifest["corpora"]}
    out_words = sum(corpus_words[r["corpus"]] for r in manifest["runs"])
    log(
        f"campaign: {len(manifest['corpora'])} corpora ({ref_sentences:,} sentences), {len(manifest['runs'])} runs, "
        f"{out_sentences:,} output sentences ({out_words:,} reference words)"
    )
    warehouse = main_dir / "srlens.duckdb"
    common = {"work": main_dir, "warehouse": warehouse}
    results = {"memory_limit": duckdb_memory_limit(), "load": run_stage("load", **common)}
    results["build"] = run_stage("build", echo_dbt=args.dbt_log, **common)
    if "report" not in args.skip:
        results["report"] = run_stage("report", **common)
    if "add_run" not in args.skip:
        results["add_run"] = run_stage("add_run", label="add one run", echo_dbt=args.dbt_log, **common)
    if "researcher" not in args.skip:
        fraction = args.researcher_fraction
        if fraction is None:
            fraction = 1.0 if out_sentences <= 40000 else 0.1
        names = researcher_sample(manifest, fraction)
        results["researcher"] = run_stage("researcher", corpora_names=names, **common)
    scaling = {}
    for key, (folder, scaling_manifest) in scaling_sets.items():
        wh = folder / "srlens.duckdb"
        load = run_stage("load", label=f"scaling {key}: load", work=folder, warehouse=wh)
        build = run_stage("build", label=f"scaling {key}: build", echo_dbt=args.dbt_log, work=folder, warehouse=wh)
        scaling[key] = (scaling_manifest, load, build)
    if "stanza" not in args.skip and args.stanza_sentences > 0:
        results["stanza"] = run_stage(
            "stanza", work=main_dir, warehouse=work / "stanza" / "stanza.duckdb", sentences=args.stanza_sentences
        )

    totals = (out_sentences, ref_sentences, out_words)
    saved_args = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    (work / "results.json").write_text(
        json.dumps({"args": saved_args, "manifest": manifest, "results": results, "scaling": scaling, "totals": totals})
    )
    body = render(args, manifest, results, scaling, *totals)
    print(body)
    if args.no_doc:
        log("--no-doc: docs/benchmarks.md left as it is")
    else:
        from benchmarks_doc import write_section

        write_section(section_title(args), body)
        log(f"wrote the section '{section_title(args)}' of docs/benchmarks.md")
    return 0


def section_title(args):
    """One docs/benchmarks.md section per campaign shape, so that variants do not overwrite the main one."""
    get = args.get if isinstance(args, dict) else lambda name, default=None: getattr(args, name, default)
    variants = [
        name for name, flag in (("mixed sizes", "mixed_sizes"), ("double length", "double_length")) if get(flag, False)
    ]
    return "Campaign" + (f" ({', '.join(variants)})" if variants else "")


def duckdb_memory_limit():
    """The memory_limit srlens build gives DuckDB (srlens/build.py memory_limit, via dbt_project/profiles.yml)."""
    from srlens.build import memory_limit

    return f"{memory_limit()} (srlens build: $SRLENS_MEMORY_LIMIT, else 6 GB or 80% of RAM if less)"


def render(args, manifest, results, scaling, out_sentences, ref_sentences, out_words):
    corpora, runs = manifest["corpora"], manifest["runs"]
    memory_limit = results.get("memory_limit")
    results = {k: v for k, v in results.items() if isinstance(v, dict)}  # the stages
    by_language = defaultdict(int)
    for c in corpora:
        by_language[c["language"]] += 1
    sizes = sorted({c["sentences"] for c in corpora})
    load, build = results["load"], results["build"]
    lines = [
        f"`python bench/campaign.py{' --scale ' + str(args.scale) if args.scale != 1 else ''}"
        f"{' --mixed-sizes' if args.mixed_sizes else ''}{' --double-length' if args.double_length else ''}` "
        f"on {machine_line()}. The machine is shared: 1-minute load average "
        f"{min(r['load_before'] for r in results.values()):.1f} to "
        f"{max(r['load_after'] for r in results.values()):.1f} during the stages (2 = both cores busy).",
        "",
        f"Campaign (generated, seed {args.seed}): {len(corpora)} corpora "
        f"({', '.join(f'{n} {lang}' for lang, n in sorted(by_language.items()))}; "
        f"{'/'.join(f'{s:,}' for s in sizes)} sentences each, {ref_sentences:,} in all) and {len(runs)} runs "
        f"of campaigns sr18 and sr19 ({len({r['team'] for r in runs})} teams): {out_sentences:,} output sentences "
        f"realizing {out_words:,} reference words. Outputs are plain text made by perturbing the reference "
        f"words; processor `aligned` (model-free). Each stage runs in a fresh process; peak memory is the "
        f"largest summed resident memory of its process tree (dbt included), sampled every 0.2 s, and the "
        f"largest single process (its VmHWM).",
        "",
        "| stage | seconds | sentences/s | peak memory, process tree (MB) | largest process (MB) |",
        "|---|---:|---:|---:|---:|",
    ]

    def row(name, seconds, result, sentences=None):
        rate = f"{sentences / seconds:,.0f}" if sentences and seconds else ""
        lines.append(
            f"| {name} | {fmt_s(seconds)} | {rate} | {fmt_mb(result['peak_tree_mb'])} | "
            f"{fmt_mb(result['largest_mb'])} "
            f"({result['largest_cmd'].split(' ')[0].replace('campaign.py', 'Python') or '?'}) |"
        )

    row(
        f"load ({len(corpora)} treebanks {fmt_s(load['treebanks_seconds'])} s, {len(runs)} runs "
        f"{fmt_s(load['runs_seconds'])} s)",
        load["seconds"],
        load,
        out_sentences,
    )
    row("build from scratch (`srlens build --processor aligned`)", build["seconds"], build, out_sentences)
    total = load["seconds"] + build["seconds"]
    report = results.get("report")
    report_note = ""
    if report and "skipped" not in report:
        row("report (`srlens.report.write_report`)", report["seconds"], report)
        total += report["seconds"]
    elif report:
        report_note = f"Report stage skipped: {report['skipped']}."
    lines.append(
        f"| **whole campaign: load + build{' + report' if report and 'skipped' not in report else ''}** "
        f"| **{fmt_s(total)}** | **{out_sentences / total:,.0f}** | "
        f"{fmt_mb(max(r['peak_tree_mb'] for k, r in results.items() if k in ('load', 'build', 'report')))} | |"
    )
    add = results.get("add_run")
    if add:
        row(
            f"add one run ({add['sentences']:,} sentences): load {fmt_s(add['load_seconds'])} s + build "
            f"{fmt_s(add['build_seconds'])} s",
            add["seconds"],
            add,
        )
    lines.append("")
    if report_note:
        lines += [report_note, ""]
    lines.append(
        f"Warehouse file: {fmt_mb(load['warehouse_mb'])} MB after loading, "
        f"{fmt_mb(build['warehouse_mb'])} MB after the build."
    )
    lines.append("")

    # Targets
    peak = max(r["peak_tree_mb"] for k, r in results.items() if k in ("load", "build", "report"))
    lines += [
        "| target (issue 8) | reached | met |",
        "|---|---:|:---:|",
        f"| whole campaign from scratch < 10 min | {total / 60:.1f} min | {'yes' if total < 600 else 'no'} |",
        f"| within 8 GiB of memory | {peak / 1024:.2f} GiB | {'yes' if peak < 8192 else 'no'} |",
    ]
    if add:
        lines.append(
            f"| add one run and rebuild < 30 s | {fmt_s(add['seconds'])} s | {'yes' if add['seconds'] < 30 else 'no'} |"
        )
    if len(runs) != 170 or any(c["sentences"] != 2000 for c in corpora):
        lines.append("")
        lines.append(
            f"(The targets are for 170 runs x 2,000 sentences; this run had {len(runs)} runs, "
            f"{out_sentences:,} output sentences.)"
        )
    lines.append("")

    # dbt groups
    for title, result in (("build from scratch", build), ("rebuild after adding one run", add)):
        if not result:
            continue
        nodes = result["nodes"]
        first, last = dbt_span(nodes)
        dbt_wall = (last - first) if first else 0.0
        lines += [
            f"dbt nodes of the {title} ({len(nodes)} nodes, dbt threads run two at a time; "
            f"span = first start to last end of the group's nodes, groups overlap):",
            "",
            "| group | nodes | summed node seconds | span seconds |",
            "|---|---:|---:|---:|",
        ]
        for group, count, summed, span, _ in group_table(nodes):
            lines.append(f"| {group} | {count} | {fmt_s(summed)} | {fmt_s(span)} |")
        lines.append(
            f"| all nodes, first start to last end | {len(nodes)} | "
            f"{fmt_s(sum(n['seconds'] for n in nodes))} | {fmt_s(dbt_wall)} |"
        )
        before = (first - result["wall_started"]) if first else 0.0
        after = (result["wall_ended"] - last) if last else 0.0
        lines.append(
            f"| outside the nodes: before the first node (copy of the {fmt_mb(result['warehouse_mb'])} MB "
            f"warehouse, processing step, dbt start-up and project parsing) | | | {fmt_s(before)} |"
        )
        lines.append(
            f"| outside the nodes: after the last node (dbt wrap-up, meta.builds, swap) | | | {fmt_s(after)} |"
        )
        lines.append("")
        lines.append(
            f"Copying the warehouse file alone (timed apart, after the build): {fmt_s(result['copy_seconds'])} s."
        )
        lines.append("")
        slowest = sorted((n for n in nodes if n["kind"] == "model"), key=lambda n: -n["seconds"])[:10]
        lines.append("Slowest models: " + ", ".join(f"`{n['node']}` {fmt_s(n['seconds'])} s" for n in slowest) + ".")
        tests = sorted((n for n in nodes if n["kind"] == "test"), key=lambda n: -n["seconds"])[:3]
        if tests:
            lines.append(
                "Slowest data tests: " + ", ".join(f"`{n['node']}` {fmt_s(n['seconds'])} s" for n in tests) + "."
            )
        by_memory = sorted(
            (n for n in nodes if n["kind"] == "model" and n.get("tree_mb")), key=lambda n: -n["tree_mb"]
        )[:5]
        if by_memory:
            at = result.get("peak_at")
            running = [n["node"] for n in nodes if at and n["start"] is not None and n["start"] <= at <= n["end"]]
            lines.append(
                "Memory: highest process-tree memory while a model ran (two run at a time): "
                + ", ".join(f"`{n['node']}` {fmt_mb(n['tree_mb'])} MB" for n in by_memory)
                + "; at the stage's peak "
                + (("running: " + ", ".join(f"`{r}`" for r in running)) if running else "no dbt node was running")
                + "."
            )
        statuses = defaultdict(int)
        for n in nodes:
            statuses[n["status"]] += 1
        lines.append("Node statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items(), key=str)) + ".")
        lines.append("")

    # Scaling
    if scaling:
        base_manifest, base_load, base_build = scaling["base"]
        base_total = base_load["seconds"] + base_build["seconds"]
        base_nodes = sum(n["seconds"] for n in base_build["nodes"])
        lines += [
            f"Scaling (a smaller campaign: {len(base_manifest['corpora'])} corpora, load + build from scratch; "
            f"summed dbt node seconds leave out the fixed costs of dbt start-up and parsing):",
            "",
            "| campaign | runs | output sentences | words/sentence | load s | build s | load + build s "
            "| ratio to base | summed dbt node s | ratio to base | peak MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for key, (m, ld, bd) in scaling.items():
            n_out = sum(r["sentences"] for r in m["runs"])
            words = sum(c["words"] for c in m["corpora"]) / sum(c["sentences"] for c in m["corpora"])
            t = ld["seconds"] + bd["seconds"]
            node_s = sum(n["seconds"] for n in bd["nodes"])
            lines.append(
                f"| {key} | {len(m['runs'])} | {n_out:,} | {words:.1f} | {fmt_s(ld['seconds'])} | "
                f"{fmt_s(bd['seconds'])} | {fmt_s(t)} | {t / base_total:.2f} | {fmt_s(node_s)} | "
                f"{node_s / base_nodes:.2f} | {fmt_mb(max(ld['peak_tree_mb'], bd['peak_tree_mb']))} |"
            )
        lines.append("")
        lines.append(
            "Length x2: each reference sentence is two consecutive sampled trees joined into one (the "
            "second root becomes a `parataxis` dependent of the first), so the words double at equal "
            "sentence count."
        )
        lines.append("")

    # Researcher
    res = results.get("researcher")
    if res:
        n_ref, n_out = res["reference_sentences"], res["output_sentences"]
        parts = res["parts"]
        tree_s = parts.get("read treebanks", 0) + parts.get("tree metrics and entropy", 0)
        score_s = parts.get("score outputs", 0)
        exact = n_out == out_sentences
        how = (
            ""
            if exact
            else (
                f" (extrapolated linearly, language by language, from {res['corpora']} of "
                f"{len(corpora)} corpora and their {res['runs']} runs)"
            )
        )
        extrapolated = 0.0
        language = {c["name"]: c["language"] for c in corpora}
        for lang, stats in res["by_language"].items():
            lang_ref = sum(c["sentences"] for c in corpora if c["language"] == lang)
            lang_out = sum(r["sentences"] for r in runs if language[r["corpus"]] == lang)
            extrapolated += stats["tree_seconds"] * lang_ref / stats["reference_sentences"]
            extrapolated += stats["score_seconds"] * lang_out / stats["output_sentences"]
        warehouse_total = total
        check = res["check"]
        lines += [
            "Researcher baseline (`bench/campaign_researcher.py`: one Python process reading the CoNLL-U with "
            "`conllu` and the runs as text, per sentence the tree metrics of `tests/reference_metrics.py`, the "
            "aligned lemmas and DEA of `tests/reference_scores.py`, nltk `sentence_bleu` method 2, "
            "`udfs.accuracy.sentence_accuracies`; per run nltk `corpus_bleu`, micro DEA and means; per corpus "
            "the tree statistics and relation entropy; no mining, rules, correlations or data tests):",
            "",
            "| part | sentences | seconds | sentences/s |",
            "|---|---:|---:|---:|",
            f"| read treebanks, tree metrics, entropy | {n_ref:,} reference | {fmt_s(tree_s)} | "
            f"{n_ref / tree_s:,.0f} |",
            f"| read and score outputs | {n_out:,} output | {fmt_s(score_s)} | {n_out / score_s:,.0f} |",
            f"| whole campaign{how} | {out_sentences:,} output | {fmt_s(extrapolated)} | "
            f"{out_sentences / extrapolated:,.0f} |",
            "",
            f"Warehouse (load + build{' + report' if report and 'skipped' not in report else ''}) / researcher "
            f"script: {fmt_s(warehouse_total)} s / {fmt_s(extrapolated)} s = **{warehouse_total / extrapolated:.2f}**. "
            f"Peak memory of the script: {fmt_mb(res['peak_tree_mb'])} MB on its sample.",
            f"Same figures: sentence BLEU equal (within 1e-12) on {check['bleu_equal']:,} of {check['sentences']:,} "
            f"sentences, DEA on {check['dea_equal']:,}, corpus BLEU on {check['corpus_bleu_equal']} of "
            f"{check['runs']} runs{'; ' + check['error'] if check.get('error') else ''}.",
            "",
        ]

    # Stanza
    st = results.get("stanza")
    if st:
        per_1000 = st["seconds"] * 1000 / st["sentences"]
        lines.append(
            f"Stanza parsing (processor `stanza`, models `{st['models']}/`, not part of the figures above): "
            f"{st['sentences']:,} output sentences of an English run ({st['texts_parsed']} distinct texts, "
            f"{st['words']:,} words) in {fmt_s(st['seconds'])} s, pipeline load {fmt_s(st['load_seconds'])} s "
            f"included: **{fmt_s(per_1000)} s per 1,000 sentences**; peak memory {fmt_mb(st['peak_tree_mb'])} MB. "
            f"At that rate the campaign's {out_sentences:,} outputs would take "
            f"{per_1000 * out_sentences / 1000 / 3600:.1f} h to parse once (then cached)."
        )
    else:
        doc = stanza_figure_from_doc()
        if doc:
            lines.append(
                f"Stanza parsing (from the 'Stanza parsing' section, `{doc[1]}`): "
                f"**{fmt_s(doc[0])} s per 1,000 sentences**, i.e. {doc[0] * out_sentences / 1000 / 3600:.1f} h "
                f"for this campaign's outputs."
            )
    lines.append("")

    # What bounds it
    nodes = build["nodes"]
    models = sorted((n for n in nodes if n["kind"] == "model"), key=lambda n: -n["seconds"])
    summed = sum(n["seconds"] for n in nodes)
    if models and summed:
        top = models[:3]
        lines.append(
            "Largest shares of the from-scratch build's summed node time: "
            + ", ".join(f"`{n['node']}` {100 * n['seconds'] / summed:.0f}%" for n in top)
            + f" (of {fmt_s(summed)} s)."
        )
    lines.append(
        f"Largest process of the build: {build['largest_cmd'] or '?'} at {fmt_mb(build['largest_mb'])} MB; "
        f"DuckDB memory_limit of the build: {memory_limit or 'not recorded'}."
    )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
