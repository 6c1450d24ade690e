"""The commands about training: the baseline linearizer, and the training data a run needs most."""

from srlens import baseline
from srlens.cli.common import say
from srlens.definitions import MINING_VIEWS


def add_baseline(sub):
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
    t.set_defaults(func=run_baseline_train)
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
    g.set_defaults(func=run_baseline_generate)


def add_suggest_training(sub):
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
    c.set_defaults(func=run_suggest_training)


def run_baseline_train(args):
    features = tuple(f for f in baseline.FEATURES if f not in args.without)
    say(f"trained model {baseline.train(args.warehouse, args.treebank, args.model, features)}")


def run_baseline_generate(args):
    path = baseline.generate(
        args.warehouse, args.corpus, args.run, args.model, args.input, args.team, args.campaign, args.seed
    )
    say(f"generated and loaded run {args.team}/{args.run} for corpus {args.corpus} ({path})")


def run_suggest_training(args):
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
