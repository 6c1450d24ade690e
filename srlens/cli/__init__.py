"""The `srlens` command line (SPEC section 11): the top-level parser and main. Each command lives in
the module of its group (loading, building, querying, reporting, training), which adds its parser
and the function that runs it (set_defaults(func=...))."""

import argparse
import os
import signal
import sys
import traceback
from pathlib import Path

# Only light modules here and in the command modules: each command imports what it needs (duckdb,
# pyarrow, pandas, dbt, stanza) when it runs, so that srlens --help and a load start in a fraction of
# a second. tests/loaders/test_load_campaign.py checks that importing this package loads none of them.
from srlens.children import Terminated, terminate_as_interrupt
from srlens.cli import building, loading, querying, reporting, training
from srlens.cli.building import parse_var  # noqa: F401 (tests build --var values with it)
from srlens.cli.common import say
from srlens.cli.errors import describe, user_errors

DEFAULT_WAREHOUSE = "warehouse/srlens.duckdb"

EPILOG = """examples:
  srlens load-demo && srlens build --processor aligned    # the bundled demo, no stanza model needed
  srlens load-treebank en_ewt-ud-test.conllu --corpus en_ewt
  srlens load-references newstest.de.txt --corpus wmt_de --language de   # texts: stanza parses them
  srlens load-outputs team1_run1.txt --corpus en_ewt --team team1 --run run1 --campaign sr19
  srlens load-campaign submissions/sr19/ --campaign sr19   # TEAM/RUN/CORPUS.txt, or a CSV manifest
  srlens load-human sr19_human.csv
  srlens campaign sr19 --date 2019                        # dates for the trends (docs/lambre.md)
  srlens build
  srlens parse --shard 3/8 parses-3.parquet               # on a cluster node; then:
  srlens load-parses parses-*.parquet && srlens build
  srlens status
  srlens query "select * from corpus_stats" --format csv
  srlens query "$(cat sql/examples/worst_relations_of_a_system.sql)"
  srlens report report/
  srlens export-parquet exports/
  srlens suggest-training --submission sr19/en_ewt/ims/1 --treebank en_ewt_train --sentences 500 --out more.conllu
  srlens docs docs-site/                                  # what every mart and column means, offline

environment: SRLENS_WAREHOUSE (the warehouse file), SRLENS_PROCESSOR (build --processor),
SRLENS_STANZA_DIR (build --stanza-dir), SRLENS_STANZA_WORKERS (parsing processes). Add --debug before
the command to see a traceback.
"""

# Commands that read an existing warehouse: a missing file is an error, not a new empty warehouse.
NEEDS_WAREHOUSE = (
    "build",
    "query",
    "examples",
    "report",
    "status",
    "export-parquet",
    "baseline",
    "suggest-training",
    "docs",
    "parse",
    "load-parses",
)
# Every command in the order of srlens --help.
COMMANDS = (
    loading.add_load_treebank,
    loading.add_load_references,
    loading.add_load_outputs,
    loading.add_load_campaign,
    loading.add_load_human,
    loading.add_campaign,
    loading.add_load_demo,
    building.add_build,
    building.add_parse,
    building.add_load_parses,
    loading.add_load_rules,
    querying.add_examples,
    training.add_baseline,
    querying.add_query,
    reporting.add_report,
    reporting.add_status,
    training.add_suggest_training,
    querying.add_export_parquet,
    reporting.add_docs,
)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line that points to --help."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def version():
    from importlib import metadata  # noqa: PLC0415 (looking for the installed package takes time)

    try:
        return metadata.version("srlens")
    except metadata.PackageNotFoundError:  # run from a source tree that pip did not install
        return "(not installed)"


class VersionAction(argparse.Action):
    """--version, with the version looked up only when asked for."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.exit(message=f"srlens {version()}\n")


def parser():
    p = Parser(
        prog="srlens",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Error-analysis warehouse for surface realization: load reference treebanks "
        "and system outputs, build the marts, query them.",
    )
    p.add_argument(
        "--warehouse",
        default=os.environ.get("SRLENS_WAREHOUSE", DEFAULT_WAREHOUSE),
        help="the DuckDB warehouse file (default: $SRLENS_WAREHOUSE or %(default)s)",
    )
    p.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    p.add_argument("--version", action=VersionAction, help="show the version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return p


def check_warehouse(args):
    """Fail early, in one line, where DuckDB would otherwise create an empty file or say less."""
    if args.command in NEEDS_WAREHOUSE:
        from srlens.status import require_warehouse

        require_warehouse(args.warehouse)
    elif args.warehouse == DEFAULT_WAREHOUSE:
        # A load into the default warehouse makes its folder: the default is no typo (loads refuse
        # a missing folder otherwise, loaders/store.py).
        Path(DEFAULT_WAREHOUSE).parent.mkdir(exist_ok=True)


def main(argv=None):
    try:
        args = parser().parse_args(argv)
    except KeyboardInterrupt:  # Ctrl-C in the first milliseconds: the same one line as later
        print("srlens: interrupted", file=sys.stderr)
        return 130
    try:
        with terminate_as_interrupt():  # `kill`, a scheduler's cancel: clean up as after Ctrl-C
            check_warehouse(args)
            args.func(args)
    except Terminated:
        print("srlens: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("srlens: interrupted", file=sys.stderr)
        return 130
    except user_errors() as err:
        if args.debug:
            traceback.print_exc()
        say(f"srlens: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # a database error is still one clear line unless --debug
        from srlens.loaders.store import interrupted  # noqa: PLC0415 (a light module; see the imports at the top)

        if interrupted(err):  # Ctrl-C during a DuckDB query
            print("srlens: interrupted", file=sys.stderr)
            return 130
        if args.debug:
            raise
        say(f"srlens: error: {describe(err, args.warehouse)}", file=sys.stderr)
        return 1
    return 0
