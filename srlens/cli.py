"""The `srlens` command line (SPEC section 11)."""

import argparse
import os
import sys
import traceback

from loaders.errors import LoadError
from loaders.load import load_outputs, load_treebank
from loaders.outputs_reader import FORMATS
from srlens.build import BuildError, build
from srlens.demo import load_demo
from srlens.query import QueryRefused, run_query

DEFAULT_WAREHOUSE = "warehouse/srlens.duckdb"

EPILOG = """examples:
  srlens load-treebank en_ewt-ud-test.conllu --corpus en_ewt
  srlens load-outputs team1_run1.txt --corpus en_ewt --team team1 --run run1 --campaign sr19
  srlens build
  srlens query "select * from corpus_stats" --format csv
"""


def parser():
    p = argparse.ArgumentParser(
        prog="srlens", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Error-analysis warehouse for surface realization: load reference treebanks "
                    "and system outputs, build the marts, query them.")
    p.add_argument("--warehouse", default=os.environ.get("SRLENS_WAREHOUSE", DEFAULT_WAREHOUSE),
                   help="the DuckDB warehouse file (default: $SRLENS_WAREHOUSE or %(default)s)")
    p.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("load-treebank", help="load a CoNLL-U treebank as the reference of a corpus",
                       description="Load (or replace) the reference treebank of a corpus. "
                                   "Example: srlens load-treebank en_ewt-ud-test.conllu --corpus en_ewt")
    c.add_argument("file", help="a UD CoNLL-U file")
    c.add_argument("--corpus", required=True, help="the corpus name runs will refer to, e.g. en_ewt")
    c.add_argument("--language", help="ISO code of the language, e.g. en (default: the prefix of the "
                                      "corpus or file name, as in UD's en_ewt)")

    c = sub.add_parser("load-outputs", help="load one system run",
                       description="Load (or replace) one system run of a corpus. Sentences are matched "
                                   "to the treebank by sent_id when the ids are the treebank's, otherwise "
                                   "by order. Example: srlens load-outputs out.txt --corpus en_ewt "
                                   "--team ims --run 1 --campaign sr19")
    c.add_argument("file", help="the run: one sentence a line (text), '# sent_id'/'# text' blocks (sr), "
                                "or CoNLL-U already processed by your parser (conllu)")
    c.add_argument("--corpus", required=True, help="the corpus (treebank) the run realizes")
    c.add_argument("--team", required=True, help="team or system name, e.g. ims")
    c.add_argument("--run", required=True, help="run name within the team, e.g. 1 or beam5")
    c.add_argument("--campaign", default="default", help="campaign, e.g. sr19 (default: %(default)s)")
    c.add_argument("--format", default="auto", choices=FORMATS, help="input format (default: detect)")
    c.add_argument("--allow-partial", action="store_true",
                   help="accept a run that lacks some sentences (needs sent_ids); they are recorded "
                        "as missing, never shifted")

    sub.add_parser("load-demo", help="load the bundled demo data (demo/data/manifest.csv)",
                   description="Load the two demo treebanks and their runs. Example: srlens load-demo")

    sub.add_parser("build", help="refresh every mart (dbt build)",
                   description="Run dbt build into a copy of the warehouse and swap it in on success; "
                               "a failed build leaves the warehouse unchanged. Example: srlens build")

    c = sub.add_parser("query", help="run one read-only SQL query",
                       description="Run one read-only query. Example: "
                                   "srlens query \"select corpus, mdd_mean from corpus_stats\" --format csv")
    c.add_argument("sql", help="a single SELECT (or WITH ... SELECT) statement")
    c.add_argument("--format", default="table", choices=("table", "csv", "json"),
                   help="output format (default: %(default)s)")
    return p


def run(args):
    if args.command == "load-treebank":
        sentences, words = load_treebank(args.warehouse, args.file, args.corpus, args.language)
        print(f"loaded {sentences} sentences ({words} words) as corpus {args.corpus}")
    elif args.command == "load-outputs":
        loaded, missing = load_outputs(args.warehouse, args.file, args.corpus, args.team, args.run,
                                       args.campaign, args.format, args.allow_partial)
        print(f"loaded {loaded} sentences of {args.team}/{args.run} for corpus {args.corpus}"
              + (f" ({missing} missing)" if missing else ""))
    elif args.command == "load-demo":
        print(f"loaded {load_demo(args.warehouse)} demo files")
    elif args.command == "build":
        build(args.warehouse)
        print(f"built {args.warehouse}")
    elif args.command == "query":
        sys.stdout.write(run_query(args.warehouse, args.sql, args.format).rstrip("\n") + "\n")


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        run(args)
    except (LoadError, BuildError, QueryRefused, OSError) as err:
        if args.debug:
            traceback.print_exc()
        print(f"srlens: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # a database error is still one clear line unless --debug
        if args.debug:
            raise
        print(f"srlens: error: {type(err).__name__}: {str(err).splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
