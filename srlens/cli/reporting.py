"""The commands that describe the warehouse: the HTML report, status and the documentation site."""

import sys

from srlens.cli.common import say


def add_report(sub):
    c = sub.add_parser(
        "report",
        help="write the HTML report (plots and tables, opens offline)",
        description="Write a self-contained static HTML report of the built warehouse: per "
        "campaign and corpus, corpus statistics, submissions ranked by each score, "
        "metric correlations, DEA per relation, projectivity, suspicious subtrees "
        "and rule scores; the SQL behind each figure is one click away. Who beats "
        "whom, bucket plots, a page per run and per example sentence (its tree). "
        "Example: srlens report report/ && open report/index.html",
    )
    c.add_argument("out_dir", help="folder to write index.html, runs/ and sentences/ into; created if missing")
    c.set_defaults(func=run_report)


def add_status(sub):
    c = sub.add_parser(
        "status",
        help="tell what is loaded and built",
        description="What the warehouse holds, read-only: corpora (language, sentences, words, "
        "when loaded), runs and sentences per campaign and corpus, human judgments, "
        "manual rules, and the last build (when, how long, processor, stanza models, "
        "versions), and whether anything was loaded since. Example: srlens status",
    )
    c.set_defaults(func=run_status)


def add_docs(sub):
    c = sub.add_parser(
        "docs",
        help="write the warehouse's documentation site (dbt docs, offline)",
        description="Write OUT_DIR/index.html, dbt's documentation site of the built warehouse "
        "in one file that needs no network: every mart and column with its meaning, "
        "unit and NULLs, the SQL, the tests and the lineage. OUT_DIR must be new, empty or "
        "written by srlens docs before. Example: srlens docs docs-site/",
    )
    c.add_argument("out_dir", help="folder to write index.html into (new, empty or an earlier docs folder)")
    c.set_defaults(func=run_docs)


def run_report(args):
    from srlens.report import write_report

    say(f"wrote {write_report(args.warehouse, args.out_dir)}")


def run_status(args):
    from srlens.status import status

    sys.stdout.write(status(args.warehouse).rstrip("\n") + "\n")


def run_docs(args):
    from srlens.docs import write_docs

    say(f"wrote {write_docs(args.warehouse, args.out_dir)}")
