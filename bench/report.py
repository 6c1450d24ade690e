"""`srlens report` of a built campaign warehouse, into a new folder.

The warehouse is the campaign of bench/campaign_data.py (`--scale` as for the campaign benchmark),
loaded and built once by this checkout's code and then only read: `compare` writes the same
warehouse's report with each revision's code.
"""

from bench.campaign_data import campaign
from bench.harness import Step, setup


def prepare(data, scale):
    warehouse, done = data / "srlens.duckdb", data / "built"
    if done.exists():
        return
    manifest = campaign(data, scale)
    cli = ["-m", "srlens.cli", "--warehouse", warehouse]
    setup(*cli, "load-treebank", *[data / c["path"] for c in manifest["corpora"]])
    for name in sorted({run["campaign"] for run in manifest["runs"]}):
        setup(*cli, "load-campaign", data / f"{name}.csv", "--campaign", name)
    setup(*cli, "build", "--processor", "aligned")
    done.touch()


def pages(ctx):
    """How many files the report wrote, and their megabytes."""
    files = [p for p in (ctx.work / "report").rglob("*") if p.is_file()]
    return {"files": float(len(files)), "MB": sum(p.stat().st_size for p in files) / 2**20}


def steps(ctx):
    report = ctx.srlens("report", ctx.work / "report", warehouse=ctx.data / "srlens.duckdb")
    return [Step("srlens report", report, details=pages)]
