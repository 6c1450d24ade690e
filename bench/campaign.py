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

  load        the treebanks (one load-treebank of all files), then the runs (load-campaign with
              a CSV manifest per campaign), into a new warehouse
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

The parts: campaign_data.py generates the data, campaign_stages.py runs and measures each stage
(campaign_memory.py samples memory), campaign_render.py writes the Markdown, and this file is the
command line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
for _path in (str(REPO), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from campaign_data import UD, generate, log  # noqa: E402
from campaign_render import render, section_title  # noqa: E402
from campaign_stages import duckdb_memory_limit, researcher_sample, run_stage, run_stage_here  # noqa: E402

DEFAULT_WORK = REPO / ".bench" / "campaign"


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


if __name__ == "__main__":
    sys.exit(main())
