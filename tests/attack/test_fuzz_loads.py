"""Fuzzing the loaders: 1,000 distinct seeded mutants of CoNLL-U and sr files into one real warehouse.

No mutant may crash a load (only LoadError), a refused one must leave the warehouse byte-identical,
and an accepted one must load exactly the sentences of the file (tests/attack/mutants.py has the
mutations and the independent oracle). SRLENS_FUZZ_SEED picks another series; bench/fuzz_loads.py
runs many more.
"""

import os

from tests.attack.mutants import Fuzzer

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
