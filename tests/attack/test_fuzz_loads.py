"""Fuzzing the loaders: 1,000 distinct seeded mutants of CoNLL-U and sr files into one real warehouse.

No mutant may crash a load (only LoadError), a refused one must leave the warehouse byte-identical,
and an accepted one must load exactly the sentences of the file (tests/support/mutants.py has the
mutations and the independent oracle). SRLENS_FUZZ_SEED picks another series; `python -m tests.attack.fuzz_loads`
runs many more.
"""

import os

import pytest

from srlens.loaders.conllu_reader import _read_whole_file, read_conllu_lines, read_text
from srlens.loaders.errors import LoadError
from tests.support.mutants import Fuzzer, make_mutant

pytestmark = pytest.mark.slow  # the load fuzz: thousands of loads

MUTANTS = 1000
FIRST_SEED = int(os.environ.get("SRLENS_FUZZ_SEED", "0"))


def test_mutants_are_refused_cleanly_or_loaded_exactly(tmp_path):
    fuzzer = Fuzzer(tmp_path)
    seed = FIRST_SEED
    while fuzzer.counts["accepted"] + fuzzer.counts["refused"] + fuzzer.counts["crashed"] < MUTANTS:
        fuzzer.load(seed)
        seed += 1
    problems = fuzzer.check_accepted()
    assert not problems, f"{len(problems)} problems in seeds {FIRST_SEED}..{seed - 1} ({fuzzer.counts}):\n" + "\n".join(
        problems[:10]
    )
    # the series exercises both sides: a fuzzer that only ever refuses (or accepts) tests little
    assert fuzzer.counts["accepted"] >= 50 and fuzzer.counts["refused"] >= MUTANTS // 2, fuzzer.counts


def test_the_fast_conllu_reader_accepts_only_what_the_line_parser_reads_the_same(tmp_path):
    # loaders/conllu_reader.py: the fast reader returns None for anything it is not sure of; whatever it
    # accepts, the line parser must accept too and read into the same Treebank.
    path, compared, accepted = tmp_path / "mutant.conllu", 0, 0
    for seed in range(FIRST_SEED, FIRST_SEED + 4000):
        kind, fmt, data, _ = make_mutant(seed)
        if fmt != "conllu":
            continue
        path.write_bytes(data)
        try:
            source = read_text(path)
        except LoadError:
            continue
        fast = _read_whole_file(*source)
        try:
            lines = read_conllu_lines(path, source)
        except LoadError as err:
            assert fast is None, f"seed {seed}: the fast reader accepted what the line parser refuses: {err}"
            continue
        compared += 1
        if fast is not None:
            accepted += 1
            assert (fast.sentences, fast.tokens, fast.token_lines, fast.words) == (
                lines.sentences,
                lines.tokens,
                lines.token_lines,
                lines.words,
            ), f"seed {seed}"
    assert compared >= 300 and accepted >= 200, (compared, accepted)
