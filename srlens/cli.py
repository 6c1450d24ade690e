"""The `srlens` command line (SPEC section 11)."""

import argparse
import json
import os
import signal
import sys
import traceback
from pathlib import Path

# Only light modules here: each command imports what it needs (duckdb, pyarrow, pandas, dbt, stanza)
# in its branch of run(), so that srlens --help and a load start in a fraction of a second.
# tests/test_load_campaign.py checks that importing this module loads none of them.
from srlens import baseline, build_vars
from srlens.build_vars import DEVICES, PROCESSOR_ENV, PROCESSORS, STANZA_DIR_ENV
from srlens.children import Terminated, terminate_as_interrupt
from srlens.definitions import MINING_VIEWS
from srlens.loaders.errors import LoadError, printable
from srlens.loaders.outputs_reader import FORMATS
from srlens.query import FORMATS as OUTPUT_FORMATS
from srlens.query import TABLE_LIMIT

DEFAULT_WAREHOUSE = "warehouse/srlens.duckdb"

EPILOG = """examples:
  srlens load-demo && srlens build --processor aligned    # the bundled demo, no stanza model needed
  srlens load-treebank en_ewt-ud-test.conllu --corpus en_ewt
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
# What a name may hold (loaders/names.py), for the help of the options that take one.
NAMES = "a name: letters, digits and . _ - +"
CORPUS_WITH_SEVERAL_FILES = "--corpus goes with one file: with several, each file's stem names its corpus"


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


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of rows, 1 or more, got {text!r}")
    return value


def shard(text):
    """K/N of `parse --shard`: shard K of N, 1 <= K <= N."""
    k, sep, n = text.partition("/")
    digits = lambda x: x.isascii() and x.isdigit()  # noqa: E731 (isdigit alone takes '１', '²')
    if not (sep and digits(k) and digits(n) and 1 <= int(k) <= int(n)):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, e.g. 3/8, got {text!r}")
    return int(k), int(n)


def parse_var(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def add_stanza_dir(command, tail="", purpose=""):
    """The --stanza-dir option of the commands that load stanza models (build, parse, load-parses)."""
    command.add_argument(
        "--stanza-dir",
        default=None,
        help=f"folder of stanza models{purpose} (default: ${STANZA_DIR_ENV}, else stanza's own model folder){tail}",
    )


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

    c = sub.add_parser(
        "load-treebank",
        help="load CoNLL-U treebanks as the references of corpora",
        description="Load (or replace) the reference treebank of a corpus. Several files are "
        "several corpora, each named by its file's stem, loaded in one transaction (all or none). "
        "Example: srlens load-treebank en_ewt-ud-test.conllu --corpus en_ewt",
    )
    c.add_argument("file", nargs="+", help="a UD CoNLL-U file; several files: en_ewt.conllu fr_gsd.conllu ...")
    c.add_argument(
        "--corpus",
        help=f"the corpus name runs will refer to, e.g. en_ewt ({NAMES}); needed with one file, refused with "
        "several (each file's stem names its corpus)",
    )
    c.add_argument(
        "--language",
        help="ISO code of the language, e.g. en (default: the prefix of the corpus or file name, as in UD's "
        "en_ewt); with several files, the language of each",
    )

    c = sub.add_parser(
        "load-outputs",
        help="load one system run (one file, or one file per corpus)",
        description="Load (or replace) one system run of a corpus. Sentences are matched "
        "to the treebank by sent_id when the ids are the treebank's, otherwise "
        "by order. Several files are one team/run's outputs for several corpora, "
        "each corpus named by its file's stem; each file is its own load, as in "
        "load-campaign. Example: srlens load-outputs out.txt --corpus en_ewt "
        "--team ims --run 1 --campaign sr19",
    )
    c.add_argument(
        "file",
        nargs="+",
        help="the run: one sentence a line (text), '# sent_id'/'# text' blocks (sr), or CoNLL-U "
        "already processed by your parser (conllu); several files: en_ewt.txt fr_gsd.txt ...",
    )
    c.add_argument(
        "--corpus",
        help="the corpus (treebank) the run realizes; needed with one file, refused "
        "with several (each file's stem names its corpus)",
    )
    c.add_argument("--team", required=True, help=f"team or system name, e.g. ims or BME-UW ({NAMES})")
    c.add_argument("--run", required=True, help="run name within the team, e.g. 1 or beam5")
    c.add_argument("--campaign", default="default", help="campaign, e.g. sr19 (default: %(default)s)")
    c.add_argument(
        "--format",
        default="auto",
        choices=FORMATS,
        help="input format: text, sr or conllu as described for FILE; auto (default) tells them "
        "apart from the file's content",
    )
    c.add_argument(
        "--allow-partial",
        action="store_true",
        help="accept a run that lacks some sentences (needs sent_ids); they are recorded as missing, never shifted",
    )
    c.add_argument(
        "--no-reference",
        action="store_true",
        help="the corpus has no treebank (e.g. machine translation): created by its first run, "
        "runs matched with each other; reference-based scores are NULL (docs/lambre.md)",
    )
    c.add_argument("--language", help="with --no-reference: the ISO code of the run's language, e.g. de")

    c = sub.add_parser(
        "load-campaign",
        help="load every run of a campaign folder or manifest",
        description="Load (or replace) many runs in one process: a folder TEAM/RUN/CORPUS.EXT "
        "(the corpus is the file's stem; .text, .sr or .conllu name the format, any "
        "other extension is detected) or a CSV manifest with the columns file, "
        "corpus, team, run and optionally format and campaign (which must be --campaign; "
        "paths relative to the manifest). "
        "The layout is checked first: any problem loads nothing. Each run is then "
        "its own all-or-nothing load: a bad run is named and not loaded, the others "
        "are; a table says what was loaded. Example: srlens load-campaign "
        "submissions/sr19/ --campaign sr19",
    )
    c.add_argument("source", help="a campaign folder (TEAM/RUN/CORPUS.EXT) or a CSV manifest")
    c.add_argument("--campaign", required=True, help=f"the campaign of every run, e.g. sr19 ({NAMES})")
    c.add_argument(
        "--allow-partial",
        action="store_true",
        help="accept runs that lack some sentences (needs sent_ids), as load-outputs does",
    )

    c = sub.add_parser(
        "load-human",
        help="load human judgments of system outputs (CSV)",
        description="Load human judgments: a CSV file with the columns annotator, team, run, "
        "corpus, sent_id, criterion, score (and optionally campaign, default "
        "'default'). The runs, corpora and sentences must be loaded. The file "
        "replaces the judgments of every (campaign, corpus, team, run, annotator, "
        "criterion) it contains. Criteria named fluency and adequacy become "
        "fluency_z and adequacy_z of sentence_scores. "
        "Example: srlens load-human sr19_human.csv",
    )
    c.add_argument(
        "file", help="CSV with a header row; scores are numbers on any scale (z-normalized per annotator by the build)"
    )
    c.add_argument(
        "--level",
        choices=("sentence", "system"),
        default="sentence",
        help="system: one score per run (columns campaign, corpus, team, run, criterion, score "
        "and optionally orientation higher|lower, no other), as WMT publishes them (docs/lambre.md)",
    )

    c = sub.add_parser(
        "campaign",
        help="set a campaign's date (for the trends of docs/lambre.md)",
        description="Example: srlens campaign wmt19 --date 2019",
    )
    c.add_argument("name", help="the campaign, as given to load-outputs --campaign")
    c.add_argument("--date", required=True, help="YYYY, YYYY-MM or YYYY-MM-DD")

    sub.add_parser(
        "load-demo",
        help="load the bundled demo data (demo/data/manifest.csv)",
        description="Load the two demo treebanks (en_ewt_demo, fr_gsd_demo) and their six runs "
        "each, then train and run the baseline linearizer on them (two more runs each). "
        "Loading again replaces them. Example: srlens load-demo && srlens build "
        "--processor aligned",
    )

    c = sub.add_parser(
        "build",
        help="refresh every mart (dbt build)",
        description="Parse new system outputs, run dbt build into a copy of the warehouse "
        "and swap it in on success; a failed build leaves the warehouse "
        "unchanged. When only runs were loaded since the last build, only those "
        "runs are computed (incremental); anything else (treebanks, human "
        "judgments, rules, --var values, a new srlens) rebuilds everything. "
        "Example: srlens build --processor aligned",
    )
    c.add_argument(
        "--processor",
        choices=PROCESSORS,
        default=None,
        help="how output sentences become words: 'stanza' parses them (needs stanza models; "
        "SPEC section 6), 'aligned' maps each token to the reference word of the same form "
        "and needs no model (word-order studies, outputs made of the reference words). "
        f"Default: ${PROCESSOR_ENV}, else the last build's, else stanza where it is installed with models, "
        "else aligned (the build's first line says which and why)",
    )
    add_stanza_dir(c, tail="; see README")
    c.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="where stanza parses: cuda (a GPU), cpu, or auto (default): cuda where torch sees a GPU. "
        "The parses are cached under the same processor id either way",
    )
    c.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=parse_var,
        help="set a parameter of the marts ("
        + ", ".join(v.name for v in build_vars.user_vars())
        + "; README: Build parameters); VALUE is read as JSON when it parses, else as text, "
        "and must be of the parameter's type and range; repeat for several. "
        "Example: --var mining_quantile=0.1 --var 'lambre_rule_corpora={\"en\": \"en_ewt_train\"}'",
    )
    c.add_argument(
        "--full-refresh",
        action="store_true",
        help="rebuild every model from scratch even if only runs changed "
        "(normally decided automatically). Example: srlens build --full-refresh",
    )

    c = sub.add_parser(
        "parse",
        help="parse one shard of the output texts still to parse into a Parquet file (clusters)",
        description="Parse shard K of N of the output texts the next build would parse (a "
        "text's shard is set by its sha256), with the warehouse opened read-only, and write "
        "their parse-cache rows to OUT.parquet (a temporary file, renamed when done). Run the N "
        "shards anywhere the warehouse and the models can be read, then merge them with "
        "load-parses. Example (a SLURM array, README): srlens parse --shard "
        "$SLURM_ARRAY_TASK_ID/8 parses/$SLURM_ARRAY_TASK_ID.parquet",
    )
    c.add_argument(
        "out",
        metavar="OUT.parquet",
        help="the Parquet file to write: a new file, or a parse file to replace (any other file is refused)",
    )
    c.add_argument("--shard", required=True, type=shard, metavar="K/N", help="shard K of N, 1 <= K <= N")
    add_stanza_dir(c)
    c.add_argument(
        "--device", choices=DEVICES, default="auto", help="cuda, cpu, or auto (default): cuda where there is one"
    )

    c = sub.add_parser(
        "load-parses",
        help="merge Parquet files of srlens parse into the parse cache",
        description="Merge the files written by srlens parse into the warehouse's parse cache, in one "
        "transaction: a file of another processor id than this warehouse would use (other "
        "models), of texts the warehouse does not have, or not written by srlens parse loads "
        "nothing. Texts already cached are skipped, so loading a file again changes nothing. "
        "The next build parses only what no file held. Example: srlens load-parses parses/*.parquet",
    )
    c.add_argument("files", nargs="+", metavar="FILE.parquet", help="files written by srlens parse")
    add_stanza_dir(c, purpose=", to check the processor ids")

    c = sub.add_parser(
        "load-rules",
        help="add, override or disable morphosyntactic (L'AMBRE) rules",
        description="Load a CSV of rules with the columns of the lambre_rules mart and an "
        "'enabled' flag: a row with the rule_id of an extracted rule overrides it "
        "(e.g. enabled=false disables it), other rows are manual rules. They survive "
        "re-extraction; loading the same file again replaces its rows. "
        "Example: srlens load-rules my_rules.csv",
    )
    c.add_argument("file", help="the CSV file (export lambre_rules with srlens query --format csv to start)")

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

    c = sub.add_parser(
        "baseline",
        help="train and run the Hall & Nemec (2007) baseline linearizer",
        description="A statistical linearizer as a baseline system: learn dependent order from a "
        "loaded treebank, then realize a corpus's trees from unordered input and load "
        "the result as a run. Example: srlens baseline train --treebank en_ewt_train; "
        "srlens baseline generate --corpus en_ewt_test --run hall_nemec",
    )
    steps = c.add_subparsers(dest="baseline_command", required=True, metavar="STEP")
    t = steps.add_parser(
        "train",
        help="count the model's statistics from a loaded treebank",
        description="Example: srlens baseline train --treebank en_ewt_train --without child_pos",
    )
    t.add_argument("--treebank", required=True, help="a loaded corpus to learn from (normally a train split)")
    t.add_argument("--model", default=None, help="model name (default: the corpus, plus -no_<feature> per ablation)")
    t.add_argument(
        "--without",
        action="append",
        default=[],
        choices=baseline.FEATURES,
        help="ablate a feature group (repeatable): head, child_pos or child_rel",
    )
    g = steps.add_parser(
        "generate",
        help="realize every tree of a corpus and load it as a run",
        description="Example: srlens baseline generate --corpus en_ewt_test --run hall_nemec "
        "--model en_ewt_train --input form",
    )
    g.add_argument("--corpus", required=True, help="the corpus whose reference trees to realize")
    g.add_argument("--run", required=True, help="run name of the generated output")
    g.add_argument(
        "--model", default=None, help="a trained model, or 'random' for random order (default: the only trained model)"
    )
    g.add_argument(
        "--input", default="lemma", choices=("lemma", "form"), help="words to realize: lemmas (default) or gold forms"
    )
    g.add_argument("--team", default="baseline", help="team name of the run (default: %(default)s)")
    g.add_argument("--campaign", default="default", help="campaign of the run (default: %(default)s)")
    g.add_argument("--seed", type=int, default=0, help="seed for tie-breaking and random order (default: 0)")

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

    sub.add_parser(
        "status",
        help="tell what is loaded and built",
        description="What the warehouse holds, read-only: corpora (language, sentences, words, "
        "when loaded), runs and sentences per campaign and corpus, human judgments, "
        "manual rules, and the last build (when, how long, processor, stanza models, "
        "versions), and whether anything was loaded since. Example: srlens status",
    )

    c = sub.add_parser(
        "suggest-training",
        help="write the treebank sentences richest in a run's weak spots",
        description="Training-data selection (error-focused augmentation): write the sentences "
        "of a loaded treebank with the most edges of the run's weakest relations and "
        "occurrences of its most suspicious subtrees (docs/definitions.md), as their "
        "original CoNLL-U blocks, richest first, and print what was targeted. Example: "
        "srlens suggest-training --submission demo/en_ewt_demo/perturb/swaps "
        "--treebank en_ewt_train --sentences 500 --out more.conllu",
    )
    c.add_argument("--submission", required=True, help="the run, a submission_id of submission_scores")
    c.add_argument("--treebank", required=True, help="a loaded and built corpus to pick from (normally a train split)")
    c.add_argument("--sentences", required=True, type=int, metavar="N", help="how many sentences to write")
    c.add_argument("--out", required=True, metavar="FILE.conllu", help="the CoNLL-U file to write; a new file")
    c.add_argument("--force", action="store_true", help="replace --out if it exists")
    c.add_argument("--relations", type=int, default=5, help="weakest relations targeted (default: %(default)s)")
    c.add_argument(
        "--min-edges",
        type=int,
        default=5,
        help="a relation needs this many edges in the run to be targeted (default: %(default)s)",
    )
    c.add_argument("--subtrees", type=int, default=5, help="most suspicious subtrees targeted (default: %(default)s)")
    c.add_argument(
        "--view",
        default="dep",
        choices=MINING_VIEWS,
        help="the view of the subtrees (default: %(default)s)",
    )

    c = sub.add_parser(
        "export-parquet",
        help="write every mart as a Parquet file",
        description="Write each mart (the tables of the main schema, SPEC section 11) to "
        "OUT_DIR/<mart>.parquet, replacing files of the same name, for tools that "
        "read Parquet but not DuckDB files (pandas, pyarrow, Spark, R arrow, ...). "
        "Example: srlens export-parquet exports/",
    )
    c.add_argument("out_dir", help="folder to write the Parquet files into; created if missing")

    c = sub.add_parser(
        "docs",
        help="write the warehouse's documentation site (dbt docs, offline)",
        description="Write OUT_DIR/index.html, dbt's documentation site of the built warehouse "
        "in one file that needs no network: every mart and column with its meaning, "
        "unit and NULLs, the SQL, the tests and the lineage. OUT_DIR must be new, empty or "
        "written by srlens docs before. Example: srlens docs docs-site/",
    )
    c.add_argument("out_dir", help="folder to write index.html into (new, empty or an earlier docs folder)")
    return p


def announce(path, large=5_000_000):
    """A large file takes seconds to read and check: say so before the wait (stderr)."""
    size = Path(path).stat().st_size if Path(path).is_file() else 0
    if size >= large:
        say(f"reading and checking {path} ({size / 1e6:.0f} MB)", file=sys.stderr)


def say(text, file=None):
    """Print one line that may hold names from the user (files, corpora, runs): never raw escape codes."""
    print(printable(text), file=file)


def run(args):
    """Run one command. Each branch imports what it needs (see the imports at the top)."""
    if args.command in ("load-treebank", "load-outputs"):
        for path in args.file if isinstance(args.file, list) else [args.file]:
            announce(path)
    if args.command == "load-treebank":
        if (args.corpus is None) == (len(args.file) == 1):
            raise ValueError(
                "load-treebank of one file needs --corpus" if args.corpus is None else CORPUS_WITH_SEVERAL_FILES
            )
        from srlens.loaders.load import load_treebanks
        from srlens.loaders.names import corpus_of_file

        corpora = [args.corpus] if args.corpus is not None else [corpus_of_file(f) for f in args.file]
        loaded = load_treebanks(
            args.warehouse, [(path, corpus, args.language) for path, corpus in zip(args.file, corpora)]
        )
        for corpus, (sentences, words) in zip(corpora, loaded):
            say(f"loaded {sentences} sentences ({words} words) as corpus {corpus}")
    elif args.command == "load-outputs" and len(args.file) > 1:
        if args.corpus is not None:
            raise ValueError(CORPUS_WITH_SEVERAL_FILES)
        if args.no_reference or args.language is not None:
            raise ValueError("--no-reference and --language take one file (the run of one reference-free corpus)")
        from srlens.loaders.campaign import finish, load_files

        finish(
            load_files(args.warehouse, args.file, args.team, args.run, args.campaign, args.format, args.allow_partial),
            None,
        )
    elif args.command == "load-outputs":
        if args.corpus is None:
            raise ValueError("load-outputs of one file needs --corpus (the corpus the run realizes)")
        from srlens.loaders.load import load_outputs

        result = load_outputs(
            args.warehouse,
            args.file[0],
            args.corpus,
            args.team,
            args.run,
            args.campaign,
            args.format,
            args.allow_partial,
            args.no_reference,
            args.language,
        )
        say(
            f"loaded {result.loaded} sentences of {args.team}/{args.run} for corpus {args.corpus}"
            + (f" ({result.missing} missing)" if result.missing else "")
        )
        if result.judgments_dropped:
            say(f"{result.judgments_dropped} human judgments dropped: their text changed or is gone")
    elif args.command == "load-campaign":
        from srlens.loaders.campaign import finish, load_campaign

        finish(load_campaign(args.warehouse, args.source, args.campaign, args.allow_partial), args.source)
    elif args.command == "load-human" and args.level == "system":
        from srlens.loaders.human import load_system_human

        say(f"loaded {load_system_human(args.warehouse, args.file)} system-level human scores from {args.file}")
    elif args.command == "load-human":
        from srlens.loaders.human import load_human

        say(f"loaded {load_human(args.warehouse, args.file)} human judgments from {args.file}")
    elif args.command == "campaign":
        from srlens.loaders.campaign_dates import set_campaign_date

        say(f"campaign {args.name}: date {set_campaign_date(args.warehouse, args.name, args.date)}")
    elif args.command == "load-demo":
        from srlens.demo import load_demo

        say(f"loaded {load_demo(args.warehouse)} demo files")
    elif args.command == "examples":
        from srlens.mining import subtree_examples
        from srlens.query import format_frame

        frame = subtree_examples(args.warehouse, args.view, args.subtree, args.submission, args.limit)
        sys.stdout.write(format_frame(frame, args.format).rstrip("\n") + "\n")
    elif args.command == "load-rules":
        from srlens.loaders.rules import load_rules

        say(f"loaded {load_rules(args.warehouse, args.file)} rule rows from {args.file}")
    elif args.command == "baseline" and args.baseline_command == "train":
        features = tuple(f for f in baseline.FEATURES if f not in args.without)
        say(f"trained model {baseline.train(args.warehouse, args.treebank, args.model, features)}")
    elif args.command == "baseline":
        path = baseline.generate(
            args.warehouse, args.corpus, args.run, args.model, args.input, args.team, args.campaign, args.seed
        )
        say(f"generated and loaded run {args.team}/{args.run} for corpus {args.corpus} ({path})")
    elif args.command == "build":
        from srlens.build import build

        build(
            args.warehouse,
            processor=args.processor,
            stanza_dir=args.stanza_dir,
            dbt_vars=dict(args.var),
            full_refresh=args.full_refresh,
            device=args.device,
        )
        say(f"built {args.warehouse}")
    elif args.command == "parse":
        from srlens.processing.shards import parse_shard

        done = parse_shard(args.warehouse, *args.shard, args.out, args.stanza_dir, args.device)
        say(
            f"parsed {done['texts']} of {done['pending']} pending texts (shard {args.shard[0]}/{args.shard[1]}"
            + (f", on {done['device']}" if done["device"] else "")
            + f") into {args.out}"
        )
    elif args.command == "load-parses":
        from srlens.processing.shards import load_parses

        added, cached = load_parses(args.warehouse, args.files, args.stanza_dir)
        say(f"loaded the parses of {added} texts from {len(args.files)} files ({cached} were cached already)")
    elif args.command == "query":
        from srlens.query import write_query

        left_out = write_query(args.warehouse, args.sql, sys.stdout, args.format, args.limit)
        if left_out and args.format != "table":  # a table says so itself; csv and json stay data
            print(
                f"srlens: {left_out} more row{'s' if left_out != 1 else ''} left out (--limit {args.limit})",
                file=sys.stderr,
            )
    elif args.command == "report":
        from srlens.report import write_report

        say(f"wrote {write_report(args.warehouse, args.out_dir)}")
    elif args.command == "status":
        from srlens.status import status

        sys.stdout.write(status(args.warehouse).rstrip("\n") + "\n")
    elif args.command == "suggest-training":
        from srlens.suggest import report, suggest

        for line in report(
            suggest(
                args.warehouse,
                args.submission,
                args.treebank,
                args.sentences,
                args.out,
                args.relations,
                args.subtrees,
                args.view,
                args.min_edges,
                args.force,
            ),
            args.out,
        ):
            say(line)
    elif args.command == "export-parquet":
        from srlens.export import export_parquet

        paths = export_parquet(args.warehouse, args.out_dir)
        say(f"wrote {len(paths)} Parquet files to {args.out_dir}")
    elif args.command == "docs":
        from srlens.docs import write_docs

        say(f"wrote {write_docs(args.warehouse, args.out_dir)}")


def check_warehouse(args):
    """Fail early, in one line, where DuckDB would otherwise create an empty file or say less."""
    if args.command in NEEDS_WAREHOUSE:
        from srlens.status import require_warehouse

        require_warehouse(args.warehouse)
    elif args.warehouse == DEFAULT_WAREHOUSE:
        # A load into the default warehouse makes its folder: the default is no typo (loads refuse
        # a missing folder otherwise, loaders/store.py).
        Path(DEFAULT_WAREHOUSE).parent.mkdir(exist_ok=True)


# The errors that are the user's to fix: one line, exit code 2. Each is looked up only if its module
# was imported: a module that never ran raised nothing, and importing them all would make every
# command pay for duckdb, pyarrow and dbt.
USER_ERRORS = (
    ("srlens.build", "BuildError"),
    ("srlens.sandbox", "QueryRefused"),
    ("srlens.processing", "ProcessingError"),
    ("srlens.baseline", "BaselineError"),
)


def user_errors():
    imported = (getattr(sys.modules[module], name) for module, name in USER_ERRORS if module in sys.modules)
    return (LoadError, ValueError, OSError, *imported)


def describe(err, warehouse):
    """A database error as one line, with what to do for the usual causes."""
    import duckdb  # noqa: PLC0415 (an error happened: the command had imported it, if it used it)

    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    line = first if isinstance(err, duckdb.Error) else f"{type(err).__name__}: {first}"
    if isinstance(err, duckdb.CatalogException) and _not_built(warehouse):
        line += " (the warehouse is not built yet: run srlens build)"
    elif isinstance(err, duckdb.PermissionException):
        line += " (queries read the warehouse only: no other file, extension or setting)"
    elif "Conflicting lock" in first:
        line += " (another program has the warehouse open, e.g. a BI tool or a load: close it or wait)"
    return line


def _not_built(warehouse):
    import duckdb  # noqa: PLC0415

    from srlens import sandbox  # noqa: PLC0415
    from srlens.status import mart_names  # noqa: PLC0415

    try:
        con = sandbox.connect(warehouse)
    except (duckdb.Error, OSError):
        return False
    try:
        return not mart_names(con)
    finally:
        con.close()


def main(argv=None):
    try:
        args = parser().parse_args(argv)
    except KeyboardInterrupt:  # Ctrl-C in the first milliseconds: the same one line as later
        print("srlens: interrupted", file=sys.stderr)
        return 130
    try:
        with terminate_as_interrupt():  # `kill`, a scheduler's cancel: clean up as after Ctrl-C
            check_warehouse(args)
            run(args)
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


if __name__ == "__main__":
    sys.exit(main())
