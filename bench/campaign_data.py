"""The campaign benchmarks' data: a shared-task campaign generated from UD treebanks.

Reference corpora are slices and seeded samples of the shared folder's treebanks
($SRLENS_SHARED_DIR, default ../shared), each written as its own .conllu; system runs are
plain-text outputs made by deterministic perturbations of the reference words. `generate`
writes them with a manifest.json and reuses a folder whose parameters match; `campaign` writes the
campaign of the documented figures (SR'18 + SR'19-sized: 30 corpora of 2,000 sentences, 170 runs)
at a scale, with one CSV manifest per campaign for `srlens load-campaign`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
UD = SHARED / "ud"

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


def sizes(scale):
    """(runs, sentences per corpus, corpora) of the campaign at `scale` (1 = 170 runs of 2,000 sentences)."""
    runs = max(2, round(170 * scale))
    return runs, max(20, round(2000 * scale)), min(runs, max(4, round(30 * scale)))


def campaign(work, scale, runs_factor=1):
    """Generate (or reuse) the campaign at `scale`, with `runs_factor` times its runs over the same corpora,
    and write a CSV manifest per campaign beside it (work/CAMPAIGN.csv)."""
    runs, sentences, corpora = sizes(scale)
    manifest = generate(work, runs * runs_factor, sentences, corpora)
    for name in sorted({run["campaign"] for run in manifest["runs"]}):
        rows = [r for r in manifest["runs"] if r["campaign"] == name]
        lines = [f"{work / r['path']},{r['corpus']},{r['team']},{r['run']},text\n" for r in rows]
        (work / f"{name}.csv").write_text("file,corpus,team,run,format\n" + "".join(lines))
    return manifest


def load_steps(ctx, work, manifest, warehouse=None, label=""):
    """The campaign's load as its organizers run it: every treebank in one `srlens load-treebank` (one
    transaction), then one `srlens load-campaign` per campaign."""
    from bench.harness import Step

    treebanks = [work / c["path"] for c in manifest["corpora"]]
    steps = [
        Step(f"{label}load: {len(treebanks)} treebanks", ctx.srlens("load-treebank", *treebanks, warehouse=warehouse))
    ]
    for name in sorted({run["campaign"] for run in manifest["runs"]}):
        count = sum(r["campaign"] == name for r in manifest["runs"])
        argv = ctx.srlens("load-campaign", work / f"{name}.csv", "--campaign", name, warehouse=warehouse)
        steps.append(Step(f"{label}load: {count} run{'s' if count != 1 else ''} of {name}", argv))
    return steps
