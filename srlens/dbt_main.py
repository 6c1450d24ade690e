"""dbt's command line for `srlens build` (srlens/build.py runs `python -m srlens.dbt_main ARGS`).

The same as `python -m dbt.cli.main ARGS`, and the same exit codes (0 success, 1 failed nodes,
2 an error), with three differences. With the one argument --arguments-on-stdin, the process imports
dbt first and then reads its arguments, a JSON list, from a line of stdin: the build starts it
before it copies the warehouse, whose copy then overlaps dbt's imports (no line: it exits, code 2).
And the process ends as soon as dbt is done: the exit handlers run (dbt-duckdb's
closes the DuckDB file, which checkpoints it; multiprocessing's removes dbt's semaphores; logging's
flushes dbt.log), then os._exit skips tearing down the interpreter's objects, which took about a
second of every build after dbt's last node (docs/performance.md, "Adding one run").
With --no-write-json, run_results.json is still written to $DBT_TARGET_PATH (srlens/build.py and the
benches read it):
srlens build passes it to skip what it never reads, manifest.json above all, which dbt writes twice
per invocation (1.5 MB of JSON on the campaign; docs/performance.md, "Adding one run").
"""

import atexit
import json
import os
import sys

ARGUMENTS_ON_STDIN = "--arguments-on-stdin"


def main(args):
    from dbt.cli.exceptions import DbtInternalException, DbtUsageException
    from dbt.cli.main import dbtRunner

    if args == [ARGUMENTS_ON_STDIN]:
        # dbt's adapter and srlens's UDFs (numpy, pyarrow): imported now, while the build copies, not
        # once dbt runs. Not scipy.stats (about a quarter of these imports): the build waits for them
        # (they outlast the copy), so it is imported by the first UDF that calls it, while dbt's other
        # thread runs its SQL (docs/performance.md, "Building").
        import dbt.adapters.duckdb  # noqa: F401

        import srlens.udfs.plugin  # noqa: F401

        line = sys.stdin.readline()
        if not line:  # the build ended before dbt was to run
            return 2
        args = json.loads(line)
    result = dbtRunner().invoke(args)
    target = os.environ.get("DBT_TARGET_PATH")  # srlens/build.py sets it
    if "--no-write-json" in args and target and hasattr(result.result, "write"):
        result.result.write(os.path.join(target, "run_results.json"))
    if isinstance(result.exception, (DbtUsageException, DbtInternalException)):  # dbt's log has the others
        print(f"dbt: {result.exception}", file=sys.stderr)
    return 0 if result.success else 1 if result.exception is None else 2


if __name__ == "__main__":
    code = main(sys.argv[1:])
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
