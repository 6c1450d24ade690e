"""The campaign benchmarks: a whole shared-task campaign through srlens, and its growth with more runs.

The data (bench/campaign_data.py) is an SR'18 + SR'19-sized campaign generated from the shared UD
treebanks: 30 reference corpora of 2,000 sentences (English, French, German, Russian) and 170
plain-text runs made by seeded perturbations of the reference words, so that scores vary. `--scale`
multiplies runs, sentences and corpora (0.05 for a quick check).
"""

from bench.campaign_data import campaign, load_steps
from bench.harness import Step, dbt_node_seconds

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
