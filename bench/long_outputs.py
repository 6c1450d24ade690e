"""Peak memory of stanza processing (srlens.processing) on looping system outputs.

Loads the first three sentences of UD English-EWT test as a treebank and a text run whose three
outputs are 3,000 words each (each reference sentence repeated without its punctuation, as a
system that loops writes it: one "sentence" of 3,000 words), then runs process_pending in a
child process with the shared English models and reports the child's peak resident memory
(ru_maxrss: Python, torch, the models and the parse). Without the chunk guard, one output of
2,000 words took more than 6 GB; the requirement is under 2 GB. Writes docs/benchmarks.md.

Usage: .venv/bin/python bench/long_outputs.py [--words 3000] [--outputs 3] [--max-words N]
       [--models DIR] [--treebank PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
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

SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))


def looping_outputs(treebank: Path, outputs: int, words: int) -> tuple[str, list[str]]:
    """(the first `outputs` sentences as CoNLL-U, one output of `words` words for each)."""
    blocks = [b for b in treebank.read_text(encoding="utf-8").split("\n\n") if b.strip()][:outputs]
    texts = []
    for block in blocks:
        text = next(line[len("# text = ") :] for line in block.split("\n") if line.startswith("# text = "))
        tokens = [t for t in re.findall(r"\w+", text)]
        texts.append(" ".join(tokens[i % len(tokens)] for i in range(words)))
    return "\n\n".join(blocks) + "\n\n", texts


def child(warehouse: str, models: str, max_words: int) -> None:
    """The measured step, alone in its process."""
    con = duckdb.connect(warehouse)
    started = time.perf_counter()
    result = process_pending_stats(con, models, max_words)
    result["seconds"] = time.perf_counter() - started
    con.close()
    print(json.dumps(result))


def process_pending_stats(con, models, max_words):
    en = processing.process_pending(con, model_dir=models, progress=False, limit=max_words)["languages"]["en"]
    chunks = con.execute("select sum(chunks), max(words) from cache.parsed_texts").fetchone()
    return {
        "texts": en["texts_parsed"],
        "chunked": en["texts_chunked"],
        "words": en["words_parsed"],
        "chunks": int(chunks[0]),
        "max_words_per_text": int(chunks[1]),
        "load_seconds": en["load_seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", type=int, default=3000, help="words per output (default 3000)")
    parser.add_argument("--outputs", type=int, default=3, help="number of long outputs (default 3)")
    parser.add_argument(
        "--max-words",
        type=int,
        default=processing.DEFAULT_MAX_WORDS,
        help="the chunk guard (default: srlens's default)",
    )
    parser.add_argument(
        "--models", type=Path, default=Path(os.environ.get(processing.STANZA_DIR_ENV) or SHARED / "stanza")
    )
    parser.add_argument("--treebank", type=Path, default=SHARED / "ud" / "en_ewt" / "en_ewt-ud-test.conllu")
    parser.add_argument("--child", nargs=3, metavar=("WAREHOUSE", "MODELS", "MAX_WORDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        conllu, texts = looping_outputs(args.treebank, args.outputs, args.words)
        (tmp / "tb.conllu").write_text(conllu, encoding="utf-8")
        (tmp / "run.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
        warehouse = tmp / "w.duckdb"
        load_treebank(warehouse, tmp / "tb.conllu", "en_ewt_head")
        load_outputs(warehouse, tmp / "run.txt", "en_ewt_head", "looping", "1", fmt="text")
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(warehouse), str(args.models), str(args.max_words)],
            capture_output=True,
            text=True,
            check=True,
        )
        stats = json.loads(done.stdout.strip().splitlines()[-1])
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    lines = [
        f"outputs:          {args.outputs} of {args.words:,} words each (a reference sentence repeated, "
        "no punctuation)",
        f"guard:            max_words {args.max_words} ({stats['chunked']} texts chunked, "
        f"{stats['chunks']} chunks in all)",
        f"parsed:           {stats['words']:,} words in {stats['seconds']:.0f} s "
        f"(pipeline load {stats['load_seconds']:.1f} s)",
        f"peak memory:      {peak_mb:,.0f} MB resident (the processing step's process: Python, torch, "
        "models and parse)",
        f"requirement:      < 2,048 MB: {'met' if peak_mb < 2048 else 'NOT met'}",
    ]
    print("\n".join(lines))
    write_section(
        "Long outputs: memory of stanza processing",
        "`bench/long_outputs.py` (shared English models, this 2-core CPU). An output longer than "
        f"`max_words` ($SRLENS_STANZA_MAX_WORDS, default {processing.DEFAULT_MAX_WORDS}) is parsed "
        "in chunks; without that, stanza's memory grows with the square of the sentence length "
        "(measured: +0.09 GB for 250 words, +0.36 GB for 500; one output of 2,000 words took "
        "more than 6 GB).\n\n```\n" + "\n".join(lines) + "\n```\n",
    )


if __name__ == "__main__":
    main()
