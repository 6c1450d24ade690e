"""The dbt models' node times: one build from scratch of a loaded campaign, node by node.

The campaign of bench/campaign_data.py (`--scale` as for the campaign benchmark) is loaded once by
this checkout's code; each round builds a copy of it with `srlens build --processor aligned`, and
dbt's run_results.json gives every node's seconds. `compare NAME REV_A REV_B` puts two revisions'
node times side by side: the before and after of a change to the models.
"""

from bench.campaign_data import campaign
from bench.harness import Step, dbt_node_seconds, setup

COPY = "import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])"


def prepare(data, scale):
    warehouse, done = data / "loaded.duckdb", data / "loaded"
    if done.exists():
        return
    manifest = campaign(data, scale)
    cli = ["-m", "srlens.cli", "--warehouse", warehouse]
    setup(*cli, "load-treebank", *[data / c["path"] for c in manifest["corpora"]])
    for name in sorted({run["campaign"] for run in manifest["runs"]}):
        setup(*cli, "load-campaign", data / f"{name}.csv", "--campaign", name)
    done.touch()


def steps(ctx):
    warehouse = ctx.work / "srlens.duckdb"
    return [
        Step(
            "copy the loaded warehouse", [ctx.python, "-c", COPY, ctx.data / "loaded.duckdb", warehouse], measure=False
        ),
        Step(
            "build from scratch",
            ctx.srlens("build", "--processor", "aligned"),
            details=lambda ctx: dbt_node_seconds(ctx.work / "srlens.duckdb"),
        ),
    ]
