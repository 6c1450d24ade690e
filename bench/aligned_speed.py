"""A/B/C of the 'aligned' processor step (issue 20): the whitespace-token version that preceded
it, the tokenizer's UDF as first merged (git revision BASELINE_UDF_REV, no fast path) and the
tokenizer of udfs/aligned.py as it is, on the same outputs, in one run.

Writes 8 runs of a UD treebank: 4 as text (the reference's own text, its whitespace chunks
shuffled, 20% of them dropped, and the text with U+202F for spaces) and 4 pre-tokenized (the
syntactic words of scoring_speed.py's perturbations: gold, swaps, shuffle, drops). Builds a
warehouse with processor 'aligned', then runs on it, each as a `create table ... as`:

* before: the aligned branch of int_output_words as it was (BEFORE_SQL below, plain SQL);
* first UDF: the same compiled SQL with srlens_aligned_words taken from BASELINE_UDF_REV;
* after: the compiled SQL of int_aligned_sentences, int_aligned_vocabulary and int_output_words
  from that build, with the UDFs registered as in dbt.

The three run one after the other, twice, in the same process; the table gives the faster of the
two rounds of each. The two UDF versions must give the same rows (counted). It reports seconds,
output words per second and DEA / corpus BLEU of every run as the build stored them, and writes
them to docs/benchmarks.md.

    python bench/aligned_speed.py [--treebank PATH] [--out docs/benchmarks.md]
    python bench/aligned_speed.py --warehouse W.duckdb --section TITLE   # a warehouse already built
                                                                          # with processor aligned
"""

import argparse
import importlib.util
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from srlens.build import build
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import load_outputs, load_treebank
from srlens.udfs import register_all

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import BENCHMARKS_MD, write_section  # noqa: E402
from scoring_speed import write_runs  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
BASELINE_UDF_REV = "97f23e0"  # the merge of the aligned tokenizer: udfs/aligned.py before its fast path

# int_output_words' aligned branch before issue 20: whitespace tokens, lower(), k-th occurrence.
BEFORE_SQL = r"""
with outputs as (
    select o.submission_id, o.sent_idx, o.output_text, s.corpus, s.format
    from w.staging.stg_outputs o
    join w.staging.stg_submissions s using (submission_id)
    where not o.is_missing
),
output_tokens as (
    select submission_id, sent_idx, corpus,
           unnest(tokens) as form,
           unnest(range(1, len(tokens) + 1)) as word_idx
    from (
        select *, string_split_regex(trim(output_text), '\s+') as tokens
        from outputs
        where format <> 'conllu' and trim(output_text) <> ''
    )
),
numbered_tokens as (
    select *, row_number() over (
        partition by submission_id, sent_idx, lower(form) order by word_idx) as occurrence
    from output_tokens
),
numbered_reference as (
    select corpus, sent_idx, lower(form) as form_lower, lemma, upos, feats, is_punct,
           row_number() over (partition by corpus, sent_idx, lower(form) order by word_id) as occurrence
    from w.intermediate.int_reference_words
)
select t.submission_id, t.sent_idx, t.word_idx::integer as word_idx, t.form,
       coalesce(r.lemma, lower(t.form)) as lemma, r.upos, r.feats,
       null::integer as head, null::varchar as deprel,
       coalesce(r.is_punct, regexp_full_match(t.form, '\p{P}+')) as is_punct,
       'aligned' as processor
from numbered_tokens t
left join numbered_reference r
    on r.corpus = t.corpus and r.sent_idx = t.sent_idx
    and r.form_lower = lower(t.form) and r.occurrence = t.occurrence
"""


def write_text_runs(treebank_path, out_dir):
    """The reference text as 4 text runs: gold, chunks shuffled, 20% of chunks dropped, U+202F spaces."""
    tb = read_conllu(treebank_path)
    runs = {"text_gold": [], "text_shuffled": [], "text_dropped": [], "text_nnbsp": []}
    for sent_id, text in zip(tb.sentences["sent_id"], tb.sentences["text"]):
        rng = random.Random(sent_id)
        chunks = text.split()
        shuffled = chunks[:]
        rng.shuffle(shuffled)
        dropped = [c for c in chunks if rng.random() > 0.2] or chunks[:1]
        for run, words in (("text_gold", chunks), ("text_shuffled", shuffled), ("text_dropped", dropped)):
            runs[run].append((sent_id, " ".join(words)))
        runs["text_nnbsp"].append((sent_id, "\u202f".join(chunks)))
    paths = []
    for run, rows in runs.items():
        path = out_dir / f"{run}.sr"
        path.write_text("".join(f"# sent_id = {s}\n# text = {t}\n\n" for s, t in rows))
        paths.append(path)
    return paths


def compiled(work_dir, model):
    """A model's SQL as the build compiled it, its relations pointed at the attached warehouse."""
    sql = (work_dir / "target" / "compiled" / "srlens" / "models" / "intermediate" / f"{model}.sql").read_text()
    sql = re.sub(r'"[^"]+"\."(staging|intermediate|main)"\."(\w+)"', r"w.\1.\2", sql)
    # After an incremental build the SQL keeps only the changed runs: measure every run, as a full build.
    return sql.replace("o.submission_id in (select submission_id from w.intermediate.int_changed_submissions)", "true")


def baseline_udf(tmp):
    """udfs/aligned.py at BASELINE_UDF_REV, imported under another name (None without git)."""
    try:
        source = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{BASELINE_UDF_REV}:udfs/aligned.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = tmp / "aligned_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("aligned_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(con, name, sql):
    """Wall seconds, and CPU seconds of this process (DuckDB's threads and the Python UDF)."""
    start, cpu = time.perf_counter(), time.process_time()
    con.execute(f"create or replace table {name} as {sql}")
    return time.perf_counter() - start, time.process_time() - cpu


def total(parts, cpu=False):
    return sum(p[cpu] for p in parts.values())


def measure(warehouse, work_dir, tmp):
    """Seconds of each version (the faster of two rounds), their word counts, rows that differ."""
    after_sql = [
        (m, compiled(work_dir, m))
        for m in ("int_aligned_sentences", "int_aligned_vocabulary", "int_output_words_aligned")
    ]
    baseline = baseline_udf(tmp)
    connections = {}
    for version in ("before", "first UDF", "after"):
        if version == "first UDF" and baseline is None:
            continue
        con = duckdb.connect()
        register_all(con)
        if version == "first UDF":  # the same SQL, the first merged srlens_aligned_words
            con.remove_function("srlens_aligned_words")
            baseline.register(con)
        con.execute(f"attach '{warehouse}' as w (read_only)")
        con.execute("use memory")
        connections[version] = con
    seconds = {version: {} for version in connections}
    for _ in range(2):
        for version, con in connections.items():
            if version == "before":
                parts = {"before_words": timed(con, "before_words", BEFORE_SQL)}
            else:
                parts = {}
                for model, sql in after_sql:  # the new models read each other: point them at these tables
                    for other, _ in after_sql:
                        sql = sql.replace(f"w.intermediate.{other}", other)
                    parts[model] = timed(con, model, sql)
            if not seconds[version] or total(parts) < total(seconds[version]):
                seconds[version] = parts
    words = {
        v: con.execute(
            f"select count(*) from {'before_words' if v == 'before' else 'int_output_words_aligned'}"
        ).fetchall()[0][0]
        for v, con in connections.items()
    }
    differ = None
    if "first UDF" in connections:
        con = connections["after"]
        con.register("first_udf", connections["first UDF"].sql("from int_output_words_aligned").to_arrow_table())
        differ = con.execute(
            "select count(*) from ((from int_output_words_aligned except all from first_udf) "
            "union all (from first_udf except all from int_output_words_aligned))"
        ).fetchall()[0][0]
    con = connections["after"]
    outputs = con.execute("select count(*) from w.raw.outputs").fetchall()[0][0]
    scores = con.execute("select run, dea, corpus_bleu from w.main.submission_scores order by run").fetchall()
    for con in connections.values():
        con.close()
    return seconds, words, differ, outputs, scores


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--treebank", default=str(SHARED / "ud/en_ewt/en_ewt-ud-train.conllu"))
    ap.add_argument("--warehouse", help="measure this warehouse, already built with processor aligned")
    ap.add_argument("--section", default="Aligned processor (issue 20)")
    ap.add_argument("--out", default=str(BENCHMARKS_MD))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_s = per_run = None
        if args.warehouse:
            warehouse = Path(args.warehouse).resolve()
        else:
            warehouse = tmp / "bench.duckdb"
            token_paths, per_run = write_runs(args.treebank, 4, tmp)
            load_treebank(warehouse, args.treebank, "bench")
            for path in write_text_runs(args.treebank, tmp) + token_paths:
                load_outputs(warehouse, path, "bench", "bench", path.stem, fmt="sr")
            start = time.perf_counter()
            build(warehouse, echo=False, processor="aligned")
            build_s = time.perf_counter() - start
        work_dir = warehouse.parent / f".{warehouse.name}.dbt"
        seconds, words, differ, outputs, scores = measure(warehouse, work_dir, tmp)

    if args.warehouse:
        what = f"warehouse `{warehouse.name}` (built before, processor `aligned`), {outputs:,} outputs"
    else:
        what = (
            f"treebank `{Path(args.treebank).name}`, 8 runs x {per_run:,} sentences = {outputs:,} outputs "
            "(4 runs as text: the reference text, its chunks shuffled, 20% of them dropped, U+202F for "
            "spaces; 4 pre-tokenized: scoring_speed.py's perturbations)"
        )
    labels = {
        "before": "before issue 20: whitespace tokens, `lower()`, k-th occurrence (plain SQL)",
        "first UDF": f"issue 20 as first merged ({BASELINE_UDF_REV}): its arrow UDF `srlens_aligned_words` "
        "(every output through the whole tokenizer) on today's SQL, UDF rows of about 64 outputs (as merged, "
        "one call per block of 256 sentences)",
        "after": "now: the same models and UDF with its fast path (chunks that are what they are whatever the "
        "output holds skip the cutting and reading steps; columns in and out of arrow; since session 29 UDF rows "
        "of about 64 outputs: 64 // runs sentences, runs in groups of 64)",
    }
    lines = [
        (
            f"`python bench/aligned_speed.py`: {what}, 2-core machine. The versions run on the same built "
            "warehouse, one after the other, twice, in one process (DuckDB's default threads); each row is "
            "the faster of its two rounds. The UDF rows sum `int_aligned_sentences`, `int_aligned_vocabulary` "
            "and `int_output_words_aligned`."
        ),
        "",
        (
            "| aligned step | seconds | CPU seconds | output words | words/s | time per word, relative to before "
            "(wall / CPU) |"
        ),
        "|---|---:|---:|---:|---:|---:|",
    ]
    rate = {v: words[v] / total(seconds[v]) for v in seconds}
    cpu_rate = {v: words[v] / total(seconds[v], cpu=True) for v in seconds}
    for version, parts in seconds.items():
        lines.append(
            f"| {labels[version]} | {total(parts):.1f} | {total(parts, cpu=True):.1f} | {words[version]:,} | "
            f"{rate[version]:,.0f} | {rate['before'] / rate[version]:.2f} / "
            f"{cpu_rate['before'] / cpu_rate[version]:.2f} |"
        )
    lines.append("")
    for version in ("first UDF", "after"):
        if version in seconds:
            lines.append(
                f"{version[0].upper() + version[1:]}, by model (wall / CPU): "
                + ", ".join(f"`{m}` {w:.1f} / {c:.1f} s" for m, (w, c) in seconds[version].items())
                + "."
            )
    if differ is not None:
        lines.append(f"Rows of `int_output_words_aligned` that differ between the first UDF and now: {differ:,}.")
    if build_s is not None:
        lines.append(f"The whole `srlens build` took {build_s:.1f} s.")
    lines += [
        "",
        "Scores of the runs (now):",
        "",
        "| run | DEA | corpus BLEU |",
        "|---|---:|---:|",
        *[f"| {run} | {dea:.4f} | {bleu:.4f} |" for run, dea, bleu in scores[:12]],
    ]
    if len(scores) > 12:
        lines.append(f"| ... {len(scores) - 12:,} more runs | | |")
    report = "\n".join(lines)
    print(report)
    write_section(args.section, report, Path(args.out))


if __name__ == "__main__":
    sys.exit(main())
