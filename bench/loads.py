"""Loads: treebanks and runs as users load them, each command in a fresh process.

`srlens load-treebank` of UD en_ewt train (12,544 sentences) and of one campaign corpus, each into a
new warehouse; then the campaign of bench/campaign_data.py (`--scale` as for the campaign benchmark)
as its organizers load it: every treebank in one command, one `load-campaign` per campaign, and one
more run with `load-outputs`.
"""

from bench.campaign_data import campaign, load_steps
from bench.harness import SHARED, Step

EN_EWT_TRAIN = SHARED / "ud" / "en_ewt" / "en_ewt-ud-train.conllu"


def prepare(data, scale):
    campaign(data, scale)


def steps(ctx):
    manifest = campaign(ctx.data, ctx.scale)
    first, extra = manifest["corpora"][0], manifest["extra_runs"][0]
    alone = ctx.work / "alone.duckdb"
    add = ("load-outputs", ctx.data / extra["path"], "--corpus", extra["corpus"], "--team", extra["team"])
    add += ("--run", extra["run"], "--campaign", extra["campaign"], "--format", "text")
    return [
        Step(
            "load-treebank: en_ewt train (12,544 sentences)",
            ctx.srlens("load-treebank", EN_EWT_TRAIN, "--corpus", "en_ewt_train", warehouse=ctx.work / "ewt.duckdb"),
        ),
        Step(
            f"load-treebank: one corpus ({first['sentences']:,} sentences)",
            ctx.srlens("load-treebank", ctx.data / first["path"], "--corpus", first["name"], warehouse=alone),
        ),
        *load_steps(ctx, ctx.data, manifest),
        Step(f"load-outputs: one more run ({extra['sentences']:,} sentences)", ctx.srlens(*add)),
    ]
