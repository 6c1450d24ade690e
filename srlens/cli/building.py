"""The commands that build the marts and parse the outputs: build, and parse / load-parses for a
cluster."""

import argparse
import json

from srlens import build_vars
from srlens.build_vars import DEVICES, PROCESSOR_ENV, PROCESSORS, STANZA_DIR_ENV
from srlens.cli.common import say


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


def add_build(sub):
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
    add_stanza_dir(c, tail="; see docs/building.md")
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
        + "; docs/building.md: Build parameters); VALUE is read as JSON when it parses, else as text, "
        "and must be of the parameter's type and range; repeat for several. "
        "Example: --var mining_quantile=0.1 --var 'lambre_rule_corpora={\"en\": \"en_ewt_train\"}'",
    )
    c.add_argument(
        "--full-refresh",
        action="store_true",
        help="rebuild every model from scratch even if only runs changed "
        "(normally decided automatically). Example: srlens build --full-refresh",
    )
    c.set_defaults(func=run_build)


def add_parse(sub):
    c = sub.add_parser(
        "parse",
        help="parse one shard of the output texts still to parse into a Parquet file (clusters)",
        description="Parse shard K of N of the output texts the next build would parse (a "
        "text's shard is set by its sha256), with the warehouse opened read-only, and write "
        "their parse-cache rows to OUT.parquet (a temporary file, renamed when done). Run the N "
        "shards anywhere the warehouse and the models can be read, then merge them with "
        "load-parses. Example (a SLURM array, docs/building.md): srlens parse --shard "
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
    c.set_defaults(func=run_parse)


def add_load_parses(sub):
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
    c.set_defaults(func=run_load_parses)


def run_build(args):
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


def run_parse(args):
    from srlens.processing.shards import parse_shard

    done = parse_shard(args.warehouse, *args.shard, args.out, args.stanza_dir, args.device)
    say(
        f"parsed {done['texts']} of {done['pending']} pending texts (shard {args.shard[0]}/{args.shard[1]}"
        + (f", on {done['device']}" if done["device"] else "")
        + f") into {args.out}"
    )


def run_load_parses(args):
    from srlens.processing.shards import load_parses

    added, cached = load_parses(args.warehouse, args.files, args.stanza_dir)
    say(f"loaded the parses of {added} texts from {len(args.files)} files ({cached} were cached already)")
