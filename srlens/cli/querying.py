"""The commands that read the marts out: query, examples of a suspicious subtree, export-parquet."""

import argparse
import sys

from srlens.cli.common import say
from srlens.definitions import MINING_VIEWS
from srlens.query import FORMATS as OUTPUT_FORMATS
from srlens.query import TABLE_LIMIT


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of rows, 1 or more, got {text!r}")
    return value


def add_query(sub):
    c = sub.add_parser(
        "query",
        help="run one read-only SQL query",
        description="Run one read-only query on the warehouse. DuckDB itself guards it: the "
        "file is opened read-only, with no access to other files, extensions or "
        "settings, and only one SELECT, WITH, SHOW, DESCRIBE, SUMMARIZE, PIVOT or "
        "EXPLAIN statement is accepted. The marts are in the main schema, other "
        "layers in raw, staging and intermediate; sql/examples/ holds recipes. "
        "Ctrl-C stops a long query. Example: "
        "srlens query \"select corpus, mdd_mean from corpus_stats\" --format csv",
    )
    c.add_argument(
        "sql",
        help="one read-only statement, e.g. \"show tables\", \"describe corpus_stats\" or "
        "\"$(cat sql/examples/compare_corpora.sql)\"",
    )
    c.add_argument(
        "--format",
        default="table",
        choices=OUTPUT_FORMATS,
        help="table (aligned text), csv (with a header row) or json (a list of records); default: %(default)s",
    )
    c.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"print at most N rows (default: {TABLE_LIMIT:,} for a table, with a last line "
        "saying how many were left out; every row for csv and json)",
    )
    c.set_defaults(func=run_query)


def add_examples(sub):
    c = sub.add_parser(
        "examples",
        help="show failing sentences that contain a suspicious subtree",
        description="The failing sentences of each run that contain a subtree (error mining, "
        "SPEC 8), reference and output side by side. Example: srlens examples "
        "--view dep --subtree \"(advcl (nsubj))\" --limit 5",
    )
    c.add_argument("--view", required=True, choices=MINING_VIEWS, help="the subtree's view")
    c.add_argument(
        "--subtree",
        required=True,
        help="the subtree as written in suspicious_subtrees, e.g. \"(advcl (nsubj))\" for the dep view",
    )
    c.add_argument(
        "--submission",
        default=None,
        help="only this submission_id, campaign/corpus/team/run as in submission_scores (default: every run)",
    )
    c.add_argument("--limit", type=int, default=20, help="sentences per run, lowest scores first (default: 20)")
    c.add_argument("--format", default="table", choices=OUTPUT_FORMATS, help="output format (default: %(default)s)")
    c.set_defaults(func=run_examples)


def add_export_parquet(sub):
    c = sub.add_parser(
        "export-parquet",
        help="write every mart as a Parquet file",
        description="Write each mart (the tables of the main schema, SPEC section 11) to "
        "OUT_DIR/<mart>.parquet, replacing files of the same name, for tools that "
        "read Parquet but not DuckDB files (pandas, pyarrow, Spark, R arrow, ...). "
        "Example: srlens export-parquet exports/",
    )
    c.add_argument("out_dir", help="folder to write the Parquet files into; created if missing")
    c.set_defaults(func=run_export_parquet)


def run_query(args):
    from srlens.query import write_query

    left_out = write_query(args.warehouse, args.sql, sys.stdout, args.format, args.limit)
    if left_out and args.format != "table":  # a table says so itself; csv and json stay data
        print(
            f"srlens: {left_out} more row{'s' if left_out != 1 else ''} left out (--limit {args.limit})",
            file=sys.stderr,
        )


def run_examples(args):
    from srlens.mining import subtree_examples
    from srlens.query import format_frame

    frame = subtree_examples(args.warehouse, args.view, args.subtree, args.submission, args.limit)
    sys.stdout.write(format_frame(frame, args.format).rstrip("\n") + "\n")


def run_export_parquet(args):
    from srlens.export import export_parquet

    paths = export_parquet(args.warehouse, args.out_dir)
    say(f"wrote {len(paths)} Parquet files to {args.out_dir}")
