"""The commands that load data: treebanks, runs, campaigns, human judgments, campaign dates, the
demo and L'AMBRE rules."""

from srlens.cli.common import CORPUS_WITH_SEVERAL_FILES, NAMES, announce, say
from srlens.loaders.outputs_reader import FORMATS


def add_load_treebank(sub):
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
    c.add_argument("--replace", action="store_true", help="replace the text references (load-references) of the corpus")
    c.set_defaults(func=run_load_treebank)


def add_load_references(sub):
    c = sub.add_parser(
        "load-references",
        help="load reference texts as the references of a corpus (their trees are stanza's parse)",
        description="Load (or replace) the reference texts of a corpus (machine translation, data-to-text). "
        "Each build parses them with stanza, whatever the processor of the outputs, and the corpus "
        "then works as a treebank's (docs/text-references.md). Example: srlens load-references "
        "newstest.de.txt --corpus wmt_de --language de",
    )
    c.add_argument("file", help="one sentence a line (text, ids 1..N) or '# sent_id'/'# text' blocks (sr)")
    c.add_argument("--corpus", required=True, help=f"the corpus name runs will refer to ({NAMES})")
    c.add_argument("--language", required=True, help="ISO code of the language, e.g. en: chooses the stanza model")
    c.add_argument("--format", default="text", choices=("text", "sr"), help="input format (default: %(default)s)")
    c.add_argument("--replace", action="store_true", help="replace the corpus's reference treebank by these texts")
    c.add_argument(
        "--stanza-dir",
        default=None,
        help="folder of stanza models, checked for the language (default: $SRLENS_STANZA_DIR, else "
        "stanza's own model folder, where a missing language is downloaded)",
    )
    c.set_defaults(func=run_load_references)


def run_load_references(args):
    announce(args.file)
    import sys  # noqa: PLC0415

    from srlens.loaders.references import load_references  # noqa: PLC0415
    from srlens.processing.models import models_or_download, require_stanza  # noqa: PLC0415

    def check_language(language):
        require_stanza("load-references (the trees of text references are their stanza parse)", "or load a treebank")
        models_or_download(
            language,
            args.stanza_dir,
            f" (needed to parse the references in {args.file})",
            lambda line: say(line, sys.stderr),
        )

    done = load_references(
        args.warehouse, args.file, args.corpus, args.language, args.format, args.replace, check_language
    )
    say(f"loaded {done.sentences} reference sentences as corpus {args.corpus} (trees: their stanza parse, at build)")
    if done.replaced == "treebank":
        say(f"replaced the reference treebank of {args.corpus}: the next build recomputes its every score")
    elif done.replaced == "text":
        if done.changed:
            say(
                f"{done.changed} reference sentence(s) changed: their parse and every score of the corpus's "
                f"{done.runs} run(s) are recomputed by the next build"
            )
        else:
            say("no reference sentence changed (the parse stays cached)")


def add_load_outputs(sub):
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
    c.set_defaults(func=run_load_outputs)


def add_load_campaign(sub):
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
    c.set_defaults(func=run_load_campaign)


def add_load_human(sub):
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
    c.set_defaults(func=run_load_human)


def add_campaign(sub):
    c = sub.add_parser(
        "campaign",
        help="set a campaign's date (for the trends of docs/lambre.md)",
        description="Example: srlens campaign wmt19 --date 2019",
    )
    c.add_argument("name", help="the campaign, as given to load-outputs --campaign")
    c.add_argument("--date", required=True, help="YYYY, YYYY-MM or YYYY-MM-DD")
    c.set_defaults(func=run_campaign)


def add_load_demo(sub):
    c = sub.add_parser(
        "load-demo",
        help="load the bundled demo data (demo/data/manifest.csv)",
        description="Load the two demo treebanks (en_ewt_demo, fr_gsd_demo) and their six runs "
        "each, then train and run the baseline linearizer on them (two more runs each). "
        "Loading again replaces them. Example: srlens load-demo && srlens build "
        "--processor aligned",
    )
    c.set_defaults(func=run_load_demo)


def add_load_rules(sub):
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
    c.set_defaults(func=run_load_rules)


def run_load_treebank(args):
    for path in args.file:
        announce(path)
    if (args.corpus is None) == (len(args.file) == 1):
        raise ValueError(
            "load-treebank of one file needs --corpus" if args.corpus is None else CORPUS_WITH_SEVERAL_FILES
        )
    from srlens.loaders.load import load_treebanks
    from srlens.loaders.names import corpus_of_file

    corpora = [args.corpus] if args.corpus is not None else [corpus_of_file(f) for f in args.file]
    loaded = load_treebanks(
        args.warehouse, [(path, corpus, args.language) for path, corpus in zip(args.file, corpora)], args.replace
    )
    for corpus, (sentences, words) in zip(corpora, loaded):
        say(f"loaded {sentences} sentences ({words} words) as corpus {corpus}")


def run_load_outputs(args):
    for path in args.file:
        announce(path)
    if len(args.file) > 1:
        run_load_outputs_of_several_corpora(args)
        return
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


def run_load_outputs_of_several_corpora(args):
    if args.corpus is not None:
        raise ValueError(CORPUS_WITH_SEVERAL_FILES)
    if args.no_reference or args.language is not None:
        raise ValueError("--no-reference and --language take one file (the run of one reference-free corpus)")
    from srlens.loaders.campaign import finish, load_files

    finish(
        load_files(args.warehouse, args.file, args.team, args.run, args.campaign, args.format, args.allow_partial),
        None,
    )


def run_load_campaign(args):
    from srlens.loaders.campaign import finish, load_campaign

    finish(load_campaign(args.warehouse, args.source, args.campaign, args.allow_partial), args.source)


def run_load_human(args):
    from srlens.loaders.human import load_human, load_system_human

    if args.level == "system":
        say(f"loaded {load_system_human(args.warehouse, args.file)} system-level human scores from {args.file}")
    else:
        say(f"loaded {load_human(args.warehouse, args.file)} human judgments from {args.file}")


def run_campaign(args):
    from srlens.loaders.campaign_dates import set_campaign_date

    say(f"campaign {args.name}: date {set_campaign_date(args.warehouse, args.name, args.date)}")


def run_load_demo(args):
    from srlens.demo import load_demo

    say(f"loaded {load_demo(args.warehouse)} demo files")


def run_load_rules(args):
    from srlens.loaders.rules import load_rules

    say(f"loaded {load_rules(args.warehouse, args.file)} rule rows from {args.file}")
