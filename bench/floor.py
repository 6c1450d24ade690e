"""The floor of a build: dbt alone on a one-model project against srlens's builds of the bundled demo.

dbt alone: importing dbt and its DuckDB adapter, then `dbt build` of a one-model project (`select 1`)
into a new DuckDB file, first with a full parse, then with dbt's partial parse kept; no srlens code
runs. srlens on the demo: `load-demo`, the build from scratch, a build with nothing changed, and
`load-outputs` of one more run with its build. What the data costs is nearly nothing here, so these
are the floors under the targets of adding one run (3 s) and of a whole campaign (30 s).
"""

from bench.harness import Step, dbt_span

ONE_MODEL_PROJECT = {
    "dbt_project.yml": "name: floor\nversion: '1.0'\nprofile: floor\nmodel-paths: [models]\n",
    "profiles.yml": "floor:\n  target: main\n  outputs:\n    main:\n      type: duckdb\n      path: floor.duckdb\n",
    "models/one.sql": "select 1 as x\n",
}
IDLE = "srlens: build with nothing changed"


def steps(ctx):
    project = ctx.work / "dbt"
    for name, text in ONE_MODEL_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    dbt = [ctx.python, "-m", "dbt.cli.main", "build", "--project-dir", project, "--profiles-dir", project]
    build = ctx.srlens("build", "--processor", "aligned")
    run = ctx.src / "demo" / "data" / "outputs" / "en_ewt_demo" / "swaps.sr.txt"
    add = ctx.srlens("load-outputs", run, "--corpus", "en_ewt_demo", "--team", "floor", "--run", "1")
    return [
        Step("dbt: import dbt and its DuckDB adapter", [ctx.python, "-c", "import dbt.cli.main, dbt.adapters.duckdb"]),
        Step("dbt: one model, full parse", dbt),
        Step("dbt: one model, partial parse kept", dbt),
        Step("srlens: load-demo", ctx.srlens("load-demo")),
        Step("srlens: build from scratch (a full parse)", build),
        Step(IDLE, build, details=lambda ctx: dbt_span(ctx.work / "srlens.duckdb")),
        Step("srlens: load-outputs of one run", add),
        Step("srlens: build after adding that run", build),
    ]


def summary(medians):
    idle, kept = medians[IDLE], medians["dbt: one model, partial parse kept"]
    span = idle["details"]["first node start to last node end"]
    return (
        f"A build with nothing to compute takes {idle['wall']:.1f} s: its {idle['details']['dbt nodes']:.0f} dbt "
        f"nodes (the incremental selection, on no rows) span {span:.1f} s and {idle['wall'] - span:.1f} s go "
        "outside them (srlens's start, the copy, dbt's start-up and kept parse, the close and the swap). "
        f"dbt alone, one model with its parse kept, takes {kept['wall']:.1f} s."
    )
