"""Speed of stanza processing of outputs (srlens.processing) on this machine's CPU.

Loads the first N (default 1000) sentences of UD English-EWT test as a
treebank into a temporary warehouse, their '# text' lines as a plain-text run,
and runs srlens.processing.process_pending on it with the shared English
models. Prints the time to load the pipeline, texts (= output sentences) per
second and words per second, then the time of a second, fully cached call,
of the processor id (model hashing) and of a missing-model failure.

With --compare, also times other ways of feeding stanza on the first
--compare-n texts: one call per text, bulk_process in batches (text order or
sorted by length) and texts joined into one document by blank lines.

Usage: .venv/bin/python bench/stanza_speed.py [--n N] [--models DIR] [--treebank PATH]
       [--batch-size B] [--compare] [--compare-n M]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402

from srlens import processing  # noqa: E402
from srlens.loaders.load import load_outputs, load_treebank  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import write_section  # noqa: E402


def first_sentences(treebank: Path, n: int) -> tuple[str, list[str]]:
    blocks = [b for b in treebank.read_text(encoding="utf-8").split("\n\n") if b.strip()][:n]
    texts = [line[len("# text = ") :].strip() for b in blocks for line in b.split("\n") if line.startswith("# text = ")]
    assert len(texts) == len(blocks), "every sentence needs a '# text' line"
    return "\n\n".join(blocks) + "\n\n", texts


def compare(models: Path, texts: list[str], batch_size: int) -> None:
    import torch

    spec = processing.resolve_models("en", models)
    torch.set_num_threads(processing.torch_threads())
    nlp = processing.load_pipeline(spec)
    nlp.bulk_process(texts[:8])  # warm-up

    def words(docs):
        return sum(len(s.words) for d in docs for s in d.sentences)

    def batched(items, size):
        return [items[i : i + size] for i in range(0, len(items), size)]

    by_length = sorted(texts, key=len)
    used = processing.torch_threads()
    other = 2 if used == 1 else 1
    ways = {  # name: (torch threads, run)
        "one call per text": (used, lambda: [nlp(t) for t in texts]),
        f"bulk_process x{batch_size}, text order": (
            used,
            lambda: [d for b in batched(texts, batch_size) for d in nlp.bulk_process(b)],
        ),
        f"bulk_process x{batch_size}, sorted by length (used)": (
            used,
            lambda: [d for b in batched(by_length, batch_size) for d in nlp.bulk_process(b)],
        ),
        f"  the same with {other} torch thread(s)": (
            other,
            lambda: [d for b in batched(by_length, batch_size) for d in nlp.bulk_process(b)],
        ),
        "bulk_process x128, sorted by length": (
            used,
            lambda: [d for b in batched(by_length, 128) for d in nlp.bulk_process(b)],
        ),
        "bulk_process, all at once, sorted": (used, lambda: nlp.bulk_process(by_length)),
        f"joined by blank lines x{batch_size}": (
            used,
            lambda: [nlp("\n\n".join(b)) for b in batched(texts, batch_size)],
        ),
    }
    rounds = 3
    print(
        f"\nways of feeding stanza, {len(texts)} texts, {used} torch thread(s) unless said "
        f"(best of {rounds} interleaved rounds):"
    )
    best = {}
    for _ in range(rounds):
        for name, (threads, run) in ways.items():
            torch.set_num_threads(threads)
            started = time.perf_counter()
            run()
            seconds = time.perf_counter() - started
            best[name] = min(best.get(name, seconds), seconds)
    torch.set_num_threads(used)
    n_words = words(nlp.bulk_process(texts))
    for name, seconds in best.items():
        print(f"  {name:50s} {len(texts) / seconds:7.1f} texts/s {n_words / seconds:8.0f} words/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    default_models = os.environ.get(processing.STANZA_DIR_ENV) or REPO.parent / "shared" / "stanza"
    parser.add_argument("--models", type=Path, default=Path(default_models))
    parser.add_argument(
        "--treebank", type=Path, default=REPO.parent / "shared" / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--compare-n", type=int, default=300)
    args = parser.parse_args()

    lines = []

    def say(line):
        print(line)
        lines.append(line)

    conllu, texts = first_sentences(args.treebank, args.n)
    cpus = len(os.sched_getaffinity(0))
    say(
        f"{len(texts)} sentences of {args.treebank.name}, models {args.models.name}/, "
        f"{cpus} CPU cores available, {processing.torch_threads()} torch thread(s), "
        f"batch size {args.batch_size}; load average now {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "tb.conllu").write_text(conllu, encoding="utf-8")
        (tmp / "run.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
        warehouse = tmp / "bench.duckdb"
        load_treebank(warehouse, tmp / "tb.conllu", "en_ewt_bench")
        load_outputs(warehouse, tmp / "run.txt", "en_ewt_bench", "bench", "reference", fmt="text")
        con = duckdb.connect(str(warehouse))

        started = time.perf_counter()
        import stanza  # noqa: F401  (timed apart from the pipeline load)

        import_seconds = time.perf_counter() - started
        started = time.perf_counter()
        counts = processing.process_pending(con, model_dir=args.models, batch_size=args.batch_size)
        total = time.perf_counter() - started
        en = counts["languages"]["en"]
        sentences = con.execute("select sum(sentences) from cache.parsed_texts").fetchone()[0]
        say(f"processor {en['processor']}")
        say(f"import stanza (and torch): {import_seconds:.2f} s")
        say(f"pipeline load:  {en['load_seconds']:.2f} s")
        say(
            f"parsing:        {en['texts_parsed']} texts ({sentences} stanza sentences), "
            f"{en['words_parsed']} words in {en['parse_seconds']:.1f} s"
        )
        say(
            f"                {en['texts_parsed'] / en['parse_seconds']:.1f} texts/s, "
            f"{en['words_parsed'] / en['parse_seconds']:.0f} words/s (parsing and cache writes)"
        )
        say(f"process_pending in all: {total:.1f} s (load average now {os.getloadavg()[0]:.1f})")

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

    write_section(
        "Stanza parsing",
        "`bench/stanza_speed.py` (shared English models, this 2-core CPU):\n\n```\n" + "\n".join(lines) + "\n```\n",
    )
    if args.compare:
        compare(args.models, texts[: args.compare_n], args.batch_size)


if __name__ == "__main__":
    main()
