"""The ceiling of a processor (SPEC section 6): what a treebank's own `# text` scores as a run.

    python bench/processor_ceiling.py --processor stanza [--stanza-dir DIR] TREEBANK... [--doc]

Each treebank is loaded with its `# text` lines as an sr run and built with the processor. A
model-free processor must score 1.0; a model-based one scores below where its model errs.
--doc writes the table to docs/benchmarks.md.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from srlens.build import build
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import load_outputs, load_treebank

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import write_section  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("treebanks", nargs="+")
    ap.add_argument("--processor", default="stanza", choices=("stanza", "aligned"))
    ap.add_argument("--stanza-dir")
    ap.add_argument("--doc", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wh = Path(tmp) / "wh.duckdb"
        for path in map(Path, args.treebanks):
            corpus = path.stem.replace("-ud-", "_").replace("-", "_")
            load_treebank(wh, path, corpus)
            tb = read_conllu(path)
            run = Path(tmp) / f"{corpus}.sr"
            run.write_text(
                "".join(
                    f"# sent_id = {s}\n# text = {t}\n\n" for s, t in zip(tb.sentences["sent_id"], tb.sentences["text"])
                )
            )
            load_outputs(wh, run, corpus, "reference", "text", fmt="sr")
        start = time.perf_counter()
        build(wh, echo=False, processor=args.processor, stanza_dir=args.stanza_dir)
        seconds = time.perf_counter() - start
        con = duckdb.connect(str(wh), read_only=True)
        rows = con.execute(
            "select s.corpus, s.sentences, s.dea, s.corpus_bleu, s.simple_string_accuracy_mean, "
            "count(*) filter (where c.dea < 1 or c.simple_string_accuracy < 1), min(c.processor) "
            "from submission_scores s join sentence_scores c using (submission_id) group by all order by 1"
        ).fetchall()
        con.close()
    lines = [
        f"`python bench/processor_ceiling.py --processor {args.processor} ...`: each treebank's own "
        f"`# text` as a run, processor `{args.processor}` (build {seconds:.0f} s, 2-core machine).",
        "",
        "| corpus | sentences | DEA | corpus BLEU | simple string accuracy (mean) | sentences below 1.0 | processor |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    lines += [f"| {c} | {n:,} | {d:.4f} | {b:.4f} | {a:.4f} | {below:,} | `{p}` |" for c, n, d, b, a, below, p in rows]
    report = "\n".join(lines)
    print(report)
    if args.doc:
        write_section(f"Processor ceiling: {args.processor}", report)


if __name__ == "__main__":
    sys.exit(main())
