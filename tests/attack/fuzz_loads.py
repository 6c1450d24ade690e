"""Fuzzing the loaders at length: many more seeded mutants than the suite's 1,000.

Loads N distinct mutants of CoNLL-U and sr files (tests/support/mutants.py) into one real warehouse and
prints how many were accepted, refused and crashed, per kind of file, the mutants per second, the most
common refusal messages, and every problem found: a load that raised anything but LoadError, a refusal
that changed the warehouse, or an acceptance that did not load exactly the file's sentences.

Usage: .venv/bin/python -m tests.attack.fuzz_loads [--n 20000] [--seed 1000000]
Exit status 1 if a problem was found.
"""

import argparse
import collections
import re
import sys
import tempfile
import time

from tests.support.mutants import Fuzzer, make_mutant


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=20_000, help="distinct mutants to load (default %(default)s)")
    p.add_argument("--seed", type=int, default=1_000_000, help="first seed (the suite uses 0..)")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        fuzzer = Fuzzer(folder)
        by_kind = collections.Counter()
        start, seed = time.perf_counter(), args.seed
        while sum(fuzzer.counts[k] for k in ("accepted", "refused", "crashed")) < args.n:
            kind, fmt, _, given = make_mutant(seed)
            outcome = fuzzer.load(seed)
            if outcome != "duplicate":
                by_kind[(kind, fmt, outcome)] += 1
            seed += 1
        loading = time.perf_counter() - start
        problems = fuzzer.check_accepted()
    messages = collections.Counter(re.sub(r"'[^']*'|\d+", "_", m.split(" (read as ")[0])[:90] for m in fuzzer.refusals)
    lines = [
        f"{args.n} distinct mutants (seeds {args.seed}..{seed - 1}, {fuzzer.counts['duplicate']} duplicates "
        f"skipped) loaded in {loading:.0f} s ({args.n / loading:.0f} mutants/s on this machine); accepted "
        f"{fuzzer.counts['accepted']}, refused {fuzzer.counts['refused']}, crashed {fuzzer.counts['crashed']}; "
        f"problems found: {len(problems)}.",
        "",
        "| file | loaded as | accepted | refused | crashed |",
        "|---|---|---|---|---|",
    ]
    for kind, fmt in sorted({(kind, fmt) for kind, fmt, _ in by_kind}):
        lines.append(
            f"| {fmt} | {kind} | "
            + " | ".join(str(by_kind[(kind, fmt, o)]) for o in ("accepted", "refused", "crashed"))
            + " |"
        )
    lines += ["", f"The most common refusals ({len(messages)} kinds of message; numbers and quoted parts as _):", ""]
    lines += [f"* {count}: {message}" for message, count in messages.most_common(10)]
    lines += [""] + [f"* problem: {problem[:300]}" for problem in problems[:50]]
    body = "\n".join(lines).rstrip("\n") + "\n"
    print(body)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
