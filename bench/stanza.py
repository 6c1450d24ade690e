"""Stanza parsing of system outputs (srlens.processing): one process against the default workers.

The first 1,000 sentences of UD en_ewt test (`--scale` multiplies them) are loaded as a treebank, and
their `# text` lines, each with at most one small error of the kind realizers make (adjacent words
swapped, a word dropped, the first word lower-cased), as a plain-text run. Two copies of that
warehouse are then parsed with the shared English models: by one process (batches of 32 texts
sorted by length) and by the default number of worker processes (one per core, at most 4). Both
must give the same rows in the parse cache.
"""

import random

import duckdb

from bench.harness import SHARED, Step

EN_EWT_TEST = SHARED / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"
MODELS = SHARED / "stanza"
SENTENCES = 1000

# Run as `python -c PARSE WAREHOUSE MODELS WORKERS` (WORKERS 0: the default).
PARSE = """
import sys, duckdb
from srlens import processing
con = duckdb.connect(sys.argv[1])
processing.process_pending(con, model_dir=sys.argv[2], progress=False, device="cpu", workers=int(sys.argv[3]) or None)
con.close()
"""
ROWS = [
    "select * from cache.parsed_words order by text_hash, word_idx",
    "select * exclude (parsed_at) from cache.parsed_texts order by text_hash",
]


def perturb(texts, seed=18):
    """Each text with at most one small error of the kind realizers make."""
    rng, out = random.Random(seed), []
    for text in texts:
        words, r = text.split(), rng.random()
        if r < 0.3 and len(words) > 2:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        elif r < 0.45 and len(words) > 3:
            del words[rng.randrange(len(words))]
        elif r < 0.55:
            words[0] = words[0].lower()
        out.append(" ".join(words))
    return out


def prepare(data, scale):
    blocks = [b for b in EN_EWT_TEST.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    blocks = blocks[: max(10, round(SENTENCES * scale))]
    texts = [line[len("# text = ") :].strip() for b in blocks for line in b.split("\n") if line.startswith("# text = ")]
    (data / "treebank.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    (data / "run.txt").write_text("\n".join(perturb(texts)) + "\n", encoding="utf-8")


def same_rows(ctx):
    """1.0 when both ways of parsing wrote the same cache rows (0.0 otherwise)."""
    rows = []
    for name in ("one", "default"):
        con = duckdb.connect(str(ctx.work / f"{name}.duckdb"), read_only=True)
        rows.append([con.execute(sql).fetchall() for sql in ROWS])
        con.close()
    return {"cache rows equal (1 = yes)": float(rows[0] == rows[1]), "words parsed": float(len(rows[0][0]))}


def steps(ctx):
    steps = []
    for name, workers in (("one", 1), ("default", 0)):
        warehouse = ctx.work / f"{name}.duckdb"
        load = ctx.srlens(
            "load-treebank",
            ctx.data / "treebank.conllu",
            "--corpus",
            "en_bench",
            "--language",
            "en",
            warehouse=warehouse,
        )
        run = ctx.srlens(
            "load-outputs",
            ctx.data / "run.txt",
            "--corpus",
            "en_bench",
            "--team",
            "bench",
            "--run",
            "perturbed",
            "--format",
            "text",
            warehouse=warehouse,
        )
        label = "one process" if workers == 1 else "the default workers"
        steps += [
            Step(f"load for {label}", load, measure=False),
            Step(f"load a run for {label}", run, measure=False),
            Step(f"parse: {label}", [ctx.python, "-c", PARSE, warehouse, MODELS, workers]),
        ]
    steps[-1].details = same_rows
    return steps


def summary(medians):
    one, default = medians["parse: one process"], medians["parse: the default workers"]
    words = default["details"]["words parsed"]
    return (
        f"{words:,.0f} words parsed: one process {words / one['wall']:,.0f} words/s, the default workers "
        f"{words / default['wall']:,.0f} words/s ({one['wall'] / default['wall']:.2f}x)."
    )


# Run as `python -c PARSE_REFERENCES WAREHOUSE MODELS`: the parse an aligned build does first.
PARSE_REFERENCES = """
import sys, duckdb
from srlens import processing
con = duckdb.connect(sys.argv[1])
processing.process_pending(con, model_dir=sys.argv[2], progress=False, device="cpu", references_only=True)
con.close()
"""
REFERENCE_SENTENCES = 2000


def reference_texts(scale):
    """The first 2,000 `# text` lines of UD en_ewt test (`scale` multiplies them, at least 10)."""
    texts = [
        line[len("# text = ") :].strip()
        for line in EN_EWT_TEST.read_text(encoding="utf-8").split("\n")
        if line.startswith("# text = ")
    ]
    return texts[: max(10, round(REFERENCE_SENTENCES * scale))]


class ReferenceParse:
    """The parse of text references (srlens load-references): the first 2,000 `# text` lines of UD en_ewt
    test (`--scale` multiplies them) loaded as a text reference, then parsed as a build does before dbt
    (process_pending with references_only, the default workers, CPU), into an empty cache."""

    @staticmethod
    def prepare(data, scale):
        (data / "references.txt").write_text("\n".join(reference_texts(scale)) + "\n", encoding="utf-8")

    @staticmethod
    def steps(ctx):
        warehouse = ctx.work / "references.duckdb"
        load = ctx.srlens(
            "load-references",
            ctx.data / "references.txt",
            "--corpus",
            "en_ref",
            "--language",
            "en",
            warehouse=warehouse,
        )
        parse = [ctx.python, "-c", PARSE_REFERENCES, warehouse, MODELS]
        return [
            Step("load the references", load, env={"SRLENS_STANZA_DIR": str(MODELS)}, measure=False),
            Step("parse the references", parse, details=lambda ctx: _parsed(warehouse)),
        ]

    @staticmethod
    def summary(medians):
        step = medians["parse the references"]
        texts, words = step["details"]["texts parsed"], step["details"]["words parsed"]
        rate = f"{texts / step['wall']:,.1f} texts/s, {words / step['wall']:,.0f} words/s"
        return f"{texts:,.0f} distinct texts, {words:,.0f} words: {rate}."


def _parsed(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        texts, words = con.execute("select count(*), sum(words) from cache.parsed_texts").fetchone()
    finally:
        con.close()
    return {"texts parsed": float(texts), "words parsed": float(words)}


SYSTEMS = 20


class TextReferenceBuild:
    """A campaign against a text reference: the first 2,000 `# text` lines of UD en_ewt test (`--scale`
    multiplies them) loaded with load-references, 20 systems (each a seeded `perturb` of the texts)
    loaded with one load-campaign, then built from scratch with processor aligned (the reference
    parse included) and built again with nothing changed."""

    @staticmethod
    def prepare(data, scale):
        texts = reference_texts(scale)
        (data / "references.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
        for system in range(SYSTEMS):
            run = data / "systems" / f"team{system:02d}" / "primary"
            run.mkdir(parents=True, exist_ok=True)
            (run / "en_ref.text").write_text("\n".join(perturb(texts, seed=system)) + "\n", encoding="utf-8")

    @staticmethod
    def steps(ctx):
        warehouse = ctx.work / "text.duckdb"
        env = {"SRLENS_STANZA_DIR": str(MODELS)}
        references = ("load-references", ctx.data / "references.txt", "--corpus", "en_ref", "--language", "en")
        systems = ("load-campaign", ctx.data / "systems", "--campaign", "text")
        build = ("build", "--processor", "aligned")
        return [
            Step("load the references", ctx.srlens(*references, warehouse=warehouse), env=env),
            Step("load 20 systems", ctx.srlens(*systems, warehouse=warehouse), env=env),
            Step("build from scratch", ctx.srlens(*build, warehouse=warehouse), env=env),
            Step("build again, nothing changed", ctx.srlens(*build, warehouse=warehouse), env=env),
        ]
