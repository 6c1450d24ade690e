"""dbt's command line for `srlens build` (srlens/build.py runs `python -m srlens.dbt_main ARGS`).

The same as `python -m dbt.cli.main ARGS`, and the same exit codes (0 success, 1 failed nodes,
2 an error), but the process ends as soon as dbt is done: the exit handlers run (dbt-duckdb's
closes the DuckDB file, which checkpoints it; multiprocessing's removes dbt's semaphores; logging's
flushes dbt.log), then os._exit skips tearing down the interpreter's objects, which took about a
second of every build after dbt's last node (docs/benchmarks.md, "Add one run, session 25").
"""

import atexit
import os
import sys


def main(args):
    from dbt.cli.exceptions import DbtInternalException, DbtUsageException
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(args)
    if isinstance(result.exception, (DbtUsageException, DbtInternalException)):  # dbt's log has the others
        print(f"dbt: {result.exception}", file=sys.stderr)
    return 0 if result.success else 1 if result.exception is None else 2


if __name__ == "__main__":
    code = main(sys.argv[1:])
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
