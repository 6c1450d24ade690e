"""The campaign benchmarks: a whole shared-task campaign through srlens, its growth with more runs, and
the sacreBLEU statistics of its (output, reference) pairs on their own.

The data (bench/campaign_data.py) is an SR'18 + SR'19-sized campaign generated from the shared UD
treebanks: 30 reference corpora of 2,000 sentences (English, French, German, Russian) and 170
plain-text runs made by seeded perturbations of the reference words, so that scores vary. `--scale`
multiplies runs, sentences and corpora (0.05 for a quick check).
"""

import json
import random

from bench.campaign_data import campaign, load_steps
from bench.harness import SHARED, Step, dbt_node_seconds

GROWTH = (1, 2, 5, 10)  # times the campaign's runs, over the same corpora


def _by_group(ctx):
    return dbt_node_seconds(ctx.work / "srlens.duckdb", by_group=True)


class Campaign:
    """A whole campaign: load, build from scratch, report, then add one run and build again.

    The build is `srlens build --processor aligned` (model-free); its dbt node seconds are summed by
    layer. Peak MB is the largest process of each step's tree: the memory a campaign needs.
    """

    @staticmethod
    def prepare(data, scale):
        campaign(data, scale)

    @staticmethod
    def steps(ctx):
        manifest = campaign(ctx.data, ctx.scale)
        extra = manifest["extra_runs"][0]
        add = ("load-outputs", ctx.data / extra["path"], "--corpus", extra["corpus"], "--team", extra["team"])
        add += ("--run", extra["run"], "--campaign", extra["campaign"], "--format", "text")
        build = ctx.srlens("build", "--processor", "aligned")
        return [
            *load_steps(ctx, ctx.data, manifest),
            Step("build from scratch", build, details=_by_group),
            Step("report", ctx.srlens("report", ctx.work / "report")),
            Step("add one run: load-outputs", ctx.srlens(*add)),
            Step("add one run: build", build, details=_by_group),
        ]

    @staticmethod
    def summary(medians):
        load = sum(m["wall"] for name, m in medians.items() if name.startswith("load"))
        build, report = medians["build from scratch"]["wall"], medians["report"]["wall"]
        add = medians["add one run: load-outputs"]["wall"] + medians["add one run: build"]["wall"]
        return (
            f"The whole campaign (load {load:.1f} s, build {build:.1f} s, report {report:.1f} s) takes "
            f"{load + build + report:.1f} s; adding one run and building again {add:.1f} s."
        )


class Growth:
    """A campaign's cost as it grows: load and build from scratch at 1x, 2x, 5x and 10x its runs.

    The same corpora with more runs, each size loaded into its own warehouse and built; near-linear
    growth is a time per run that stays flat.
    """

    @staticmethod
    def prepare(data, scale):
        for factor in GROWTH:
            campaign(data / f"{factor}x", scale, runs_factor=factor)

    @staticmethod
    def steps(ctx):
        steps = []
        for factor in GROWTH:
            work = ctx.data / f"{factor}x"
            warehouse = ctx.work / f"{factor}x.duckdb"
            manifest = campaign(work, ctx.scale, runs_factor=factor)
            steps += load_steps(ctx, work, manifest, warehouse=warehouse, label=f"{factor}x ")
            steps.append(
                Step(
                    f"{factor}x build from scratch", ctx.srlens("build", "--processor", "aligned", warehouse=warehouse)
                )
            )
        return steps

    @staticmethod
    def summary(medians):
        totals = {f: sum(m["wall"] for name, m in medians.items() if name.startswith(f"{f}x ")) for f in GROWTH}
        cells = ", ".join(f"{f}x {totals[f]:.1f} s ({totals[f] / totals[1] / f:.2f} of linear)" for f in GROWTH)
        return f"Load + build from scratch by size (and the time per run against 1x's): {cells}."


# One process: the pairs in DuckDB's batches of 2,048 rows through the UDF's function; it writes the
# seconds of the statistics alone (no import, no reading) and the pairs, for the step's details.
STATS_SCRIPT = r"""
import json, sys, time
from srlens.udfs.mt_scores import sacrebleu_stats
hyps, refs = json.load(open(sys.argv[1], encoding="utf-8"))
start = time.perf_counter()
for k in range(0, len(hyps), 2048):
    sacrebleu_stats(hyps[k : k + 2048], refs[k : k + 2048])
json.dump({"statistics in process": time.perf_counter() - start, "pairs": len(hyps)}, open(sys.argv[2], "w"))
"""
STATS_PAIRS = 20_000


class SacrebleuStats:
    """sacreBLEU's and chrF's sentence statistics (udfs/mt_scores.py's `sacrebleu_stats`) of 20,000 pairs.

    The references are UD en_ewt test's `# text` lines, each output its reference's words shuffled (one
    seed), the pairs sorted by reference as int_sacrebleu_stats sorts them; `--scale` multiplies the
    pairs. The step's detail is the in-process time of the statistics; the summary its cost per pair.
    """

    @staticmethod
    def prepare(data, scale):
        path = data / "pairs.json"
        if path.exists():
            return
        conllu = SHARED / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"
        texts = [line[9:].rstrip("\n") for line in conllu.open(encoding="utf-8") if line.startswith("# text = ")]
        rng = random.Random(7)
        refs = sorted(texts[k % len(texts)] for k in range(max(1, round(STATS_PAIRS * scale))))
        hyps = [" ".join(rng.sample(r.split(), len(r.split()))) for r in refs]
        path.write_text(json.dumps([hyps, refs]))

    @staticmethod
    def steps(ctx):
        figures = ctx.work / "figures.json"
        argv = [ctx.python, "-c", STATS_SCRIPT, ctx.data / "pairs.json", figures]
        return [Step("sacreBLEU statistics", argv, details=lambda ctx: json.loads(figures.read_text()))]

    @staticmethod
    def summary(medians):
        figures = medians["sacreBLEU statistics"]["details"]
        cost = figures["statistics in process"] / figures["pairs"] * 1e6
        return f"The statistics cost {cost:.0f} µs per pair in process ({figures['pairs']:,.0f} pairs)."
