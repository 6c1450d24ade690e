"""Speed of stanza processing of outputs (srlens.processing) on this machine, before and after.

Loads the first N (default 1000) sentences of UD English-EWT test as a treebank
into a temporary warehouse, and as a plain-text run their '# text' lines,
perturbed a little as system outputs are (adjacent words swapped, a word
dropped, a first word lowercased: a seeded random choice per sentence). The
same warehouse is then processed, side by side in one run, by

* before: the code path of srlens 0.1 up to now, one process parsing batches
  of 32 texts sorted by length (process_pending with workers=1);
* after: the default, several processes each parsing whole batches
  (default_workers: one per core, at most 4), and on a CUDA GPU where torch
  sees one (the GPU figure is printed only there).

Each prints texts (= output sentences) and words per second, wall and CPU
seconds (the CPU of the worker processes included), and the cache rows of
every path are compared with those of `before`: every column of
cache.parsed_words and of cache.parsed_texts but parsed_at must be equal.

With --compare, also times the other levers on the first --compare-n texts in
one process, each checked for equal rows: text order instead of sorted by
length, larger batches (stanza's own batch sizes raised with them), two torch
threads, and torch.inference_mode.

Usage: .venv/bin/python bench/stanza_speed.py [--n N] [--copies C] [--rounds R] [--models DIR] [--treebank PATH]
       [--batch-size B] [--workers W] [--compare] [--compare-n M]

--copies C loads C runs, each the N sentences perturbed with another seed (more
distinct texts: the worker processes' start-up weighs less, as in a campaign).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SRLENS_SHARED_DIR") or REPO.parent / "shared")
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402

from srlens import processing  # noqa: E402
from srlens.loaders.load import load_outputs, load_treebank  # noqa: E402
from srlens.processing.parse import default_workers, load_pipeline, parse_batch, torch_threads  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import write_section  # noqa: E402

WORDS_SQL = "select * from cache.parsed_words order by text_hash, word_idx"
TEXTS_SQL = "select * exclude (parsed_at) from cache.parsed_texts order by text_hash"


def first_sentences(treebank: Path, n: int) -> tuple[str, list[str]]:
    blocks = [b for b in treebank.read_text(encoding="utf-8").split("\n\n") if b.strip()][:n]
    texts = [line[len("# text = ") :].strip() for b in blocks for line in b.split("\n") if line.startswith("# text = ")]
    assert len(texts) == len(blocks), "every sentence needs a '# text' line"
    return "\n\n".join(blocks) + "\n\n", texts


def perturb(texts: list[str], seed: int) -> list[str]:
    """Each text with at most one small error of the kind realizers make."""
    rng, out = random.Random(seed), []
    for text in texts:
        words, r = text.split(), rng.random()
        if r < 0.3 and len(words) > 2:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        elif r < 0.45 and len(words) > 3:
            del words[rng.randrange(len(words))]
        elif r < 0.55:
            words[0] = words[0].lower()
        out.append(" ".join(words))
    return out


def cpu_seconds():
    """CPU of this process and of its finished children (the worker processes), user + system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_processing(warehouse: Path, models: Path, batch_size: int, **options):
    con = duckdb.connect(str(warehouse))
    try:
        cpu, started = cpu_seconds(), time.perf_counter()
        counts = processing.process_pending(con, model_dir=models, batch_size=batch_size, progress=False, **options)
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
        rows = con.execute(WORDS_SQL).fetchall(), con.execute(TEXTS_SQL).fetchall()
    finally:
        con.close()
    return counts, wall, cpu, rows


def differing(rows, reference):
    """How many word rows and text rows differ from the reference (0, 0: identical)."""
    (words, texts), (ref_words, ref_texts) = rows, reference
    if len(words) != len(ref_words) or len(texts) != len(ref_texts):
        return f"{abs(len(words) - len(ref_words))} word rows, {abs(len(texts) - len(ref_texts))} texts more or fewer"
    word_diff = sum(a != b for a, b in zip(words, ref_words))
    text_diff = sum(a != b for a, b in zip(texts, ref_texts))
    return "identical" if not word_diff and not text_diff else f"{word_diff} word rows and {text_diff} texts differ"


def levers(models: Path, texts: list[str], batch_size: int) -> list[str]:
    """Other ways of feeding stanza, in this process, each timed and checked against the default way."""
    import torch

    from srlens.processing.parse import piece_rows

    spec = processing.resolve_models("en", models)
    torch.set_num_threads(torch_threads())
    nlp = load_pipeline(spec)
    defaults = {name: proc.config.get("batch_size") for name, proc in nlp.processors.items()}
    parse_batch(nlp, texts[:8], "en")  # warm-up
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), texts[i]))

    threads_now = torch_threads()

    def run(sort=True, size=batch_size, threads=threads_now, inner=None, inference=False):
        for name, proc in nlp.processors.items():
            proc.config["batch_size"] = (inner or {}).get(name, defaults[name])
        torch.set_num_threads(threads)
        ids = order if sort else list(range(len(texts)))
        context = torch.inference_mode() if inference else torch.no_grad()
        cpu, started = time.process_time(), time.perf_counter()
        with context:
            batches = [[texts[j] for j in ids[i : i + size]] for i in range(0, len(ids), size)]
            docs = [d for batch in batches for d in parse_batch(nlp, batch, "en")]
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        return wall, cpu, {ids[n]: piece_rows(d) for n, d in enumerate(docs)}

    big = {"tokenize": 256, "mwt": 256, "pos": 256, "lemma": 256, "depparse": 5000}
    ways = {
        f"sorted by length, batches of {batch_size} (the default)": {},
        "text order": {"sort": False},
        "batches of 256, stanza's batch sizes raised": {"size": 256, "inner": big},
        f"{2 if torch_threads() == 1 else 1} torch threads": {"threads": 2 if torch_threads() == 1 else 1},
        "torch.inference_mode": {"inference": True},
    }
    rounds, best, reference = 2, {}, None
    for _ in range(rounds):
        for name, kwargs in ways.items():
            wall, cpu, rows = run(**kwargs)
            reference = reference or rows
            same = sum(rows[i] != reference[i] for i in reference)
            w, c, _ = best.get(name, (wall, cpu, 0))
            best[name] = (min(w, wall), min(c, cpu), same)
    for name, proc in nlp.processors.items():
        proc.config["batch_size"] = defaults[name]
    torch.set_num_threads(torch_threads())
    words = sum(len(r[3]) for r in reference.values())
    lines = [
        f"levers, {len(texts)} texts ({words} words) in this process, best of {rounds} interleaved rounds; "
        f"load average now {os.getloadavg()[0]:.1f}:",
        f"  {'way':48s} {'texts/s':>8s} {'words/s':>8s} {'wall s':>7s} {'CPU s':>6s}  parses",
    ]
    for name, (wall, cpu, diff) in best.items():
        lines.append(
            f"  {name:48s} {len(texts) / wall:8.1f} {words / wall:8.0f} {wall:7.2f} {cpu:6.2f}  "
            + ("identical" if not diff else f"{diff} texts differ")
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    default_models = os.environ.get(processing.STANZA_DIR_ENV) or SHARED / "stanza"
    parser.add_argument("--models", type=Path, default=Path(default_models))
    parser.add_argument("--treebank", type=Path, default=SHARED / "ud" / "en_ewt" / "en_ewt-ud-test.conllu")
    parser.add_argument(
        "--copies", type=int, default=1, help="perturbed copies of each sentence (another seed each): more texts"
    )
    parser.add_argument("--rounds", type=int, default=1, help="before and after, this many times in turn")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=None, help="processes of `after` (default: default_workers)")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--compare-n", type=int, default=300)
    args = parser.parse_args()

    lines = []

    def say(line=""):
        print(line, flush=True)
        lines.append(line)

    conllu, references = first_sentences(args.treebank, args.n)
    texts = [t for seed in range(18, 18 + args.copies) for t in perturb(references, seed)]
    workers = args.workers or default_workers("cpu")
    say(
        f"{len(references)} sentences of {args.treebank.name}, {args.copies} perturbed cop"
        f"{'y' if args.copies == 1 else 'ies'} ({len(texts)} output texts, {len(set(texts))} distinct), "
        f"models {args.models.name}/, {len(os.sched_getaffinity(0))} CPU cores available, "
        f"batch size {args.batch_size}; load average now {os.getloadavg()[0]:.1f} (2 = both cores busy)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "tb.conllu").write_text(conllu, encoding="utf-8")
        warehouse = tmp / "before.duckdb"
        load_treebank(warehouse, tmp / "tb.conllu", "en_ewt_bench")
        for copy in range(args.copies):
            run = texts[copy * len(references) : (copy + 1) * len(references)]
            (tmp / "run.txt").write_text("\n".join(run) + "\n", encoding="utf-8")
            load_outputs(warehouse, tmp / "run.txt", "en_ewt_bench", "bench", f"perturbed{copy}", fmt="text")
        shutil.copy(warehouse, tmp / "loaded.duckdb")

        started = time.perf_counter()
        import stanza  # noqa: F401  (timed apart: `before` has it imported, the workers import it themselves)
        import torch

        say(f"import stanza (and torch) in this process: {time.perf_counter() - started:.2f} s")
        paths = [
            (f"before: 1 process, {torch_threads()} torch thread(s)", {"workers": 1, "device": "cpu"}),
            (f"after: {workers} processes, 1 torch thread each", {"workers": workers, "device": "cpu"}),
        ]
        if torch.cuda.is_available():
            paths.append(("after, on the CUDA GPU", {"device": "cuda"}))
        say(
            f"{'round and path':48s} {'texts/s':>8s} {'words/s':>8s} {'wall s':>7s} {'CPU s':>6s} "
            f"{'pipeline load s':>15s}  cache rows"
        )
        reference = None
        for round_ in range(1, args.rounds + 1):
            walls = []
            for name, options in paths:
                shutil.copy(tmp / "loaded.duckdb", warehouse)  # every path parses every text
                counts, wall, cpu, rows = timed_processing(warehouse, args.models, args.batch_size, **options)
                en = counts["languages"]["en"]
                reference = reference or rows
                walls.append(wall)
                say(
                    f"{round_}: {name:45s} {en['texts_parsed'] / wall:8.1f} {en['words_parsed'] / wall:8.0f} "
                    f"{wall:7.1f} {cpu:6.1f} {en['load_seconds']:15.1f}  {differing(rows, reference)}; "
                    f"load {os.getloadavg()[0]:.1f}"
                )
            say(f"{round_}: speed-up of after over before: {walls[0] / walls[1]:.2f}x")
        say(
            f"({en['texts_parsed']} texts, {en['words_parsed']} words; pipeline loads and worker start-up included; "
            f"a build's default for so many texts here: {default_workers('cpu', en['texts_parsed'])} process(es))"
        )
        if not torch.cuda.is_available():
            say("no CUDA GPU here: no GPU figure")

        con = duckdb.connect(str(warehouse))
        started = time.perf_counter()
        again = processing.process_pending(con, model_dir=args.models, progress=False)
        say(f"second call (all cached, {again['texts_cached']} texts): {time.perf_counter() - started:.3f} s")
        processing.models._digests.clear()
        started = time.perf_counter()
        processing.stanza_processor_id("en", args.models)
        say(f"processor id (sha256 of the model files, not memoized): {time.perf_counter() - started:.3f} s")
        con.close()

        load_treebank(warehouse, tmp / "tb.conllu", "fr_bench", language="fr")
        load_outputs(warehouse, tmp / "run.txt", "fr_bench", "bench", "reference", fmt="text")
        con = duckdb.connect(str(warehouse))
        started = time.perf_counter()
        try:
            processing.process_pending(con, model_dir=args.models, progress=False)
            say("a language without models did not fail?")
        except processing.ProcessingError:
            say(f"missing 'fr' models -> ProcessingError after {time.perf_counter() - started:.3f} s")
        con.close()

    if args.compare:
        say()
        for line in levers(args.models, texts[: args.compare_n], args.batch_size):
            say(line)

    write_section(
        "Stanza parsing",
        f"`bench/{Path(__file__).name} {' '.join(sys.argv[1:])}` (shared English models, this 2-core CPU). "
        "CPU seconds include the worker processes. Wall seconds depend on what else runs: Linux shares "
        "the CPU between sessions (autogroup), so when other sessions keep the cores busy, the worker "
        "processes of one command together get that session's share, about one core when two other "
        "sessions are busy (load average 4 or more); the load average is printed as the run goes. On "
        "2 free cores, two processes can at best halve the time of one, plus the workers' start-up. "
        "`cache rows` compares every column of the cache "
        "(parsed_at aside) with the rows of `before`.\n\n```\n" + "\n".join(lines) + "\n```\n",
    )


if __name__ == "__main__":
    main()
