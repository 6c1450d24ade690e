"""L'AMBRE rule extraction (SPEC section 9) on the bundled treebanks: how many rules, how fast.

Loads en_ewt train and the fr_gsd, de_gsd and ru_gsd dev splits (the largest split each
language has here) into a fresh warehouse, runs one build, and reports per treebank the rule
counts by kind (agreement, argstruct), a few examples, and the dbt time of the extraction
models (from run_results.json). Writes the section "L'AMBRE rule extraction" of
docs/benchmarks.md unless --no-write.

    python bench/lambre_rules.py [--shared ../shared] [--no-write]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from srlens.build import build
from srlens.loaders.load import load_treebank

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import write_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TREEBANKS = [
    ("en_ewt_train", "en_ewt/en_ewt-ud-train.conllu"),
    ("fr_gsd_dev", "fr_gsd/fr_gsd-ud-dev.conllu"),
    ("de_gsd_dev", "de_gsd/de_gsd-ud-dev.conllu"),
    ("ru_gsd_dev", "ru_gsd/ru_gsd-ud-dev.conllu"),
]
# The models that extract rules from the treebanks (checking outputs is not part of it).
EXTRACTION_MODELS = (
    "int_word_features",
    "int_lambre_rule_corpora",
    "int_lambre_links",
    "int_lambre_agreement_candidates",
    "int_lambre_argstruct_candidates",
    "stg_lambre_manual_rules",
    "lambre_rules",
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", type=Path, default=Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        wh = Path(tmp) / "wh.duckdb"
        t0 = time.perf_counter()
        for corpus, rel in TREEBANKS:
            load_treebank(wh, args.shared / "ud" / rel, corpus)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        build(wh, echo=False, processor="aligned")
        build_s = time.perf_counter() - t0
        results = json.loads((Path(tmp) / ".wh.duckdb.dbt" / "target" / "run_results.json").read_text())
        model_s = {
            r["unique_id"].rsplit(".", 1)[-1]: r["execution_time"]
            for r in results["results"]
            if r["unique_id"].startswith("model.")
        }
        con = duckdb.connect(str(wh), read_only=True)
        counts = con.execute("""
            select c.corpus, c.language, c.sentences, c.min_count,
                   count(*) filter (where r.kind = 'agreement') as agreement,
                   count(*) filter (where r.kind = 'argstruct') as argstruct
            from intermediate.int_lambre_rule_corpora c
            left join lambre_rules r using (language)
            group by all order by c.sentences desc""").fetchall()
        examples = {}
        for corpus, *_ in counts:
            examples[corpus] = con.execute(
                """
                select rule_id, support, coalesce(round(share, 3)::varchar, 'kl ' || round(kl, 2)),
                       allowed_values
                from lambre_rules where source_corpus = ?
                qualify row_number() over (partition by kind order by support desc) <= 3
                order by kind, support desc""",
                [corpus],
            ).fetchall()
        con.close()

    extraction_s = sum(model_s.get(m, 0.0) for m in EXTRACTION_MODELS)
    lines = [
        "| treebank | sentences | agreement min_count | agreement rules | argstruct rules |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {corpus} | {sentences} | {min_count} | {agreement} | {argstruct} |"
        for corpus, _, sentences, min_count, agreement, argstruct in counts
    ]
    lines += ["", "Largest rules of each kind (support; share for agreement, KL for argstruct; allowed values):", ""]
    for _corpus, rows in examples.items():
        for rule, support, stat, allowed in rows:
            lines.append(f"* `{rule}`: {support}, {stat}" + (f", {'/'.join(allowed)}" if allowed else ""))
    lines += [
        "",
        f"Extraction models ({', '.join(EXTRACTION_MODELS)}): {extraction_s:.2f} s of dbt time "
        f"for all four treebanks together (whole build {build_s:.1f} s, loading {load_s:.1f} s).",
        "Per model: " + ", ".join(f"{m} {model_s.get(m, 0.0):.2f} s" for m in EXTRACTION_MODELS) + ".",
    ]
    body = (
        "`python bench/lambre_rules.py`: one build of a warehouse holding en_ewt train and the fr_gsd, "
        "de_gsd and ru_gsd dev splits.\n\n" + "\n".join(lines)
    )
    print(body)
    if not args.no_write:
        write_section("L'AMBRE rule extraction", body)


if __name__ == "__main__":
    main()
