"""Speed and bit-identity of udfs.bleu vs nltk on UD English lemma sequences.

Builds N (default 100,000) seeded (hypothesis, reference) pairs: the reference
is the lower-cased LEMMA sequence of the non-punctuation words of a random
treebank sentence, the hypothesis the same sequence perturbed by random
adjacent swaps and word drops. Prints sentences/second for nltk in a Python
loop, udfs.bleu.sentence_bleu in a Python loop and the srlens_sentence_bleu
DuckDB UDF over the whole table, and whether all values equal nltk's bit for
bit (also for corpus BLEU via srlens_bleu_stats + srlens_bleu_from_stats).

Usage: .venv/bin/python bench/bleu_speed.py [--treebank PATH] [--n N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu  # noqa: E402
from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu  # noqa: E402

from srlens.udfs import bleu  # noqa: E402


def read_lemma_sentences(path: Path) -> list[list[str]]:
    sentences, current = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if current:
                    sentences.append(current)
                current = []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "-" in cols[0] or "." in cols[0]:  # multiword tokens, empty nodes
                continue
            if cols[3] == "PUNCT":
                continue
            current.append(cols[2].lower())
    if current:
        sentences.append(current)
    return sentences


def perturb(rng: random.Random, tokens: list[str]) -> list[str]:
    out = list(tokens)
    for _ in range(rng.randint(0, max(1, len(out) // 3))):
        if len(out) > 1:
            i = rng.randrange(len(out) - 1)
            out[i], out[i + 1] = out[i + 1], out[i]
    drop = rng.choice((0.0, 0.05, 0.15, 0.5))
    return [t for t in out if rng.random() >= drop]


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:>12,.0f} sentences/s  ({seconds:7.2f} s)"


def same_bits(a, b) -> bool:
    return float(a).hex() == float(b).hex()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--treebank",
        type=Path,
        default=REPO / "../shared/ud/en_ewt/en_ewt-ud-test.conllu",
    )
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=20240501)
    args = ap.parse_args()

    sentences = read_lemma_sentences(args.treebank)
    rng = random.Random(args.seed)
    refs = [rng.choice(sentences) for _ in range(args.n)]
    hyps = [perturb(rng, r) for r in refs]
    n = len(hyps)
    print(f"treebank: {args.treebank.resolve()} ({len(sentences)} sentences)")
    print(
        f"pairs: {n:,}  mean hyp len {sum(map(len, hyps)) / n:.1f}, "
        f"empty hyps {sum(1 for h in hyps if not h)}, "
        f"1-3 token hyps {sum(1 for h in hyps if 1 <= len(h) <= 3)}"
    )
    print(f"nltk {bleu.NLTK_COMPAT_VERSION=}, duckdb {duckdb.__version__}")

    m2 = SmoothingFunction().method2
    t = time.perf_counter()
    ref_scores = [nltk_sentence_bleu([r], h, smoothing_function=m2) for h, r in zip(hyps, refs)]
    print("(a) nltk sentence_bleu, Python loop:   " + rate(n, time.perf_counter() - t))

    t = time.perf_counter()
    ours = [bleu.sentence_bleu(h, r) for h, r in zip(hyps, refs)]
    print("(b) udfs.bleu.sentence_bleu, loop:     " + rate(n, time.perf_counter() - t))

    con = duckdb.connect()
    bleu.register(con)
    bleu.register_references(con)
    pairs_tbl = pa.table(  # noqa: F841 (DuckDB reads it by name in the SQL below)
        {
            "id": pa.array(range(n), type=pa.int64()),
            "h": pa.array(hyps, type=pa.list_(pa.string())),
            "r": pa.array(refs, type=pa.list_(pa.string())),
        }
    )
    con.execute("create table pairs as select * from pairs_tbl")
    t = time.perf_counter()
    sql = con.sql("select srlens_sentence_bleu(h, r) as b from pairs order by id").to_arrow_table()["b"].to_pylist()
    print("(c) srlens_sentence_bleu, DuckDB SQL:  " + rate(n, time.perf_counter() - t))

    py_same = sum(same_bits(a, b) for a, b in zip(ours, ref_scores))
    sql_same = sum(same_bits(a, b) for a, b in zip(sql, ref_scores))
    max_diff = max(abs(a - b) for a, b in zip(ours + sql, ref_scores + ref_scores))
    print(
        f"bit-identical to nltk: python {py_same:,}/{n:,}, sql {sql_same:,}/{n:,}"
        f"  (max |diff| {max_diff:g}) -> {'YES' if py_same == sql_same == n else 'NO'}"
    )

    t = time.perf_counter()
    nltk_corpus = corpus_bleu([[r] for r in refs], hyps, smoothing_function=m2)
    t_nltk = time.perf_counter() - t
    t = time.perf_counter()
    (sql_corpus,) = con.execute(
        """
        select srlens_bleu_from_stats(sum(s.hyp_len), sum(s.ref_len),
                                      sum(s.m1), sum(s.m2), sum(s.m3), sum(s.m4),
                                      sum(s.t1), sum(s.t2), sum(s.t3), sum(s.t4))
        from (select srlens_bleu_stats(h, r) as s from pairs)
        """
    ).fetchone()
    t_sql = time.perf_counter() - t
    print(
        f"corpus BLEU: nltk {nltk_corpus!r} ({t_nltk:.2f} s), "
        f"sql {sql_corpus!r} ({t_sql:.2f} s) -> bit-identical "
        f"{'YES' if same_bits(nltk_corpus, sql_corpus) else 'NO'}"
    )
    assert all(math.isfinite(x) for x in sql)


if __name__ == "__main__":
    main()
