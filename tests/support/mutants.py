"""Seeded mutants of CoNLL-U and sr files, and an oracle independent of loaders/.

A Fuzzer loads mutants into one real warehouse, as treebanks (CoNLL-U) or as runs (CoNLL-U or sr), and
collects a one-line description of everything that went wrong:
* a refusal must be a LoadError and leave the warehouse file byte-identical (sha256);
* an acceptance must load exactly the sentences of the file, as `blocks_of` below reads them, in its own
  way: the counts of sentences and token lines, the sent_ids, the texts and where each sentence went.
tests/attack/test_fuzz_loads.py runs a thousand of them; bench/fuzz_loads.py as many as asked.
"""

import hashlib
import random
import re
from pathlib import Path

import duckdb

from srlens.loaders.errors import LoadError
from srlens.loaders.load import load_outputs, load_treebank

# A valid treebank of two sentences (a multiword token, punctuation): the loader tests' base case.
GOOD = """# sent_id = s1
# text = Dogs bark.
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# sent_id = s2
# text = Cats don't sleep.
1\tCats\tcat\tNOUN\tNNS\t_\t4\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tsleep\tsleep\tVERB\tVB\t_\t0\troot\t_\t_
4.1\tsleeps\tsleep\tVERB\tVB\t_\t_\t_\t4:conj\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

"""

# The loader tests' two sentences (a multiword token, an empty node, punctuation) and two more.
TREEBANK = (
    GOOD
    + """# sent_id = s3
# text = Birds sing.
0.1\tthey\t_\tPRON\t_\t_\t_\t_\t1:nsubj\t_
1\tBirds\tbird\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tsing\tsing\tVERB\tVBP\t_\t0\troot\t_\t_
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# sent_id = s4
# text = Fish swim.
1\tFish\tfish\tNOUN\tNN\t_\t2\tnsubj\t_\t_
2\tswim\tswim\tVERB\tVBP\t_\t0\troot\t_\t_

"""
)
SR_RUN = (
    "# sent_id = s2\n# text = Cats do not sleep .\n\n# sent_id = s1\n# text = Dogs bark\n\n"
    "# sent_id = s4\n# text = Fish swim .\n\n# sent_id = s3\n# text = Birds sing .\n"
)
CORPUS, MUTANT_CORPUS = "base", "mutant"  # runs are matched against CORPUS; treebank mutant N is MUTANT_CORPUS + N

VALUES = [
    "",
    "_",
    "0",
    "1",
    "2",
    "-1",
    "99",
    "007",
    "1-2",
    "2-1",
    "3-3",
    "1.1",
    "0.1",
    "4.2",
    "x",
    "\u0663",
    "1e3",
    " 1",
    "\x1b[31m",
    "root",
    "punct",
    "a b",
    "99999999999999999999",
    "s1",
    "s9",
    "\u202e1",
]
JUNK = ["\x00", "\x1b[2J", "\x0b", "\x1c", "\u2028", "\ufeff", "\r", "\t", "\u00a0", "\udcff", "\x85"]


def blocks_of(data):
    """The oracle's reading: (first line, lines) per block of non-blank lines, or None if not UTF-8.

    It knows nothing of validity: it is only used on files that loaded, to say what they contained."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removeprefix("\ufeff")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    blocks, current = [], None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            current = current or (number, [])
            current[1].append(line)
        elif current:
            blocks.append(current)
            current = None
    return blocks + ([current] if current else [])


def comment_value(lines, key):
    for line in lines:
        match = re.match(rf"#\s*{key}\s*=\s*(.*?)\s*\Z", line)
        if match:
            return match.group(1)
    return None


def mutate(rng, data):
    """One mutation of `data` (bytes): lines, columns, ids, blank lines, bytes, encodings, BOM, CRLF, NUL."""
    text = data.decode("utf-8", errors="surrogateescape")
    lines = text.split("\n")
    k = rng.randrange(len(lines))
    op = rng.randrange(20)
    if op == 0:
        del lines[k]
    elif op == 1:
        lines.insert(k, lines[k])
    elif op == 2 and k + 1 < len(lines):
        lines[k], lines[k + 1] = lines[k + 1], lines[k]
    elif op == 3:
        lines.insert(k, rng.choice(["", "", " ", "\t", "\r"]))
    elif op == 4:
        blanks = [i for i, line in enumerate(lines) if not line.strip()]
        if blanks:
            del lines[rng.choice(blanks)]
    elif op in (5, 6, 7):  # a column of a token line
        cols = lines[k].split("\t")
        cols[rng.randrange(len(cols))] = rng.choice(VALUES)
        lines[k] = "\t".join(cols)
    elif op == 8:
        cols = lines[k].split("\t")
        if rng.random() < 0.5 and len(cols) > 1:
            del cols[rng.randrange(len(cols))]
        else:
            cols.insert(rng.randrange(len(cols) + 1), rng.choice(VALUES))
        lines[k] = "\t".join(cols)
    elif op == 9:  # a sent_id: another sentence's, an unknown one, empty, a number, none
        ids = [i for i, line in enumerate(lines) if line.startswith("# sent_id")]
        if ids:
            i = rng.choice(ids)
            value = rng.choice(["s1", "s2", "s3", "s4", "s9", "", "1", "2", "x\x1b[0m"])
            lines[i] = f"# sent_id = {value}" if rng.random() < 0.8 else "# comment"
    elif op in (10, 11):  # blocks: swap two, drop one, duplicate one
        blocks = "\n".join(lines).split("\n\n")
        i, j = rng.randrange(len(blocks)), rng.randrange(len(blocks))
        if op == 10:
            blocks[i], blocks[j] = blocks[j], blocks[i]
        elif rng.random() < 0.5 and len(blocks) > 1:
            del blocks[i]
        else:
            blocks.insert(i, blocks[j])
        lines = "\n\n".join(blocks).split("\n")
    elif op == 12:
        pos = rng.randrange(len(lines[k]) + 1)
        lines[k] = lines[k][:pos] + rng.choice(JUNK) + lines[k][pos:]
    elif op == 13:
        lines.insert(k, rng.choice(["# note", "#", "# text = x", "# sent_id = s1", "1\tx\tx\tX\t_\t_\t0\troot\t_\t_"]))
    text = "\n".join(lines)
    out = text.encode("utf-8", errors="surrogateescape")
    if op == 14:  # byte level
        b = bytearray(out)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        out = bytes(b)
    elif op == 15:
        out = out[: rng.randrange(len(out) + 1)]
    elif op == 16:
        out = rng.choice(
            [
                b"\xef\xbb\xbf" + out,
                out.replace(b"\n", b"\r\n"),
                out.replace(b"\n", b"\r\n", 3),
                out.rstrip(b"\n"),
                out + b"\n\n",
                out.replace(b"\n", b"\r"),
            ]
        )
    elif op == 17:
        try:
            out = out.decode("utf-8").encode(rng.choice(["utf-16", "latin-1", "utf-16-le", "cp1252"]))
        except (UnicodeError, ValueError):
            pass
    elif op == 18:
        pos = rng.randrange(len(out) + 1)
        out = out[:pos] + rng.choice([b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]) + out[pos:]
    return out


def make_mutant(seed):
    """(kind, fmt, bytes, --format): kind 'treebank' or 'run'; 1 to 3 mutations of a valid file."""
    rng = random.Random(seed)
    kind, fmt = rng.choice([("treebank", "conllu"), ("run", "conllu"), ("run", "sr")])
    original = data = (SR_RUN if fmt == "sr" else TREEBANK).encode()
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        data = mutate(rng, data)
    while data == original:  # a mutation that changed nothing (a swap of equal lines...): one more
        data = mutate(rng, data)
    return kind, fmt, data, rng.choice(["auto", fmt])


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class Fuzzer:
    """One real warehouse with the base treebank; `load` tries one mutant, `check_accepted` then reads
    back every accepted one in one connection (each loaded under its own corpus or run name)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        (self.folder / "base.conllu").write_text(TREEBANK)
        self.warehouse = self.folder / "fuzz.duckdb"
        load_treebank(self.warehouse, self.folder / "base.conllu", CORPUS)
        self.digest = sha256(self.warehouse)  # the file as the last accepted load left it
        self.seen = set()
        self.accepted = []  # (seed, kind, data)
        self.problems = []
        self.refusals = []  # the message of each refusal
        self.counts = {"accepted": 0, "refused": 0, "crashed": 0, "duplicate": 0}

    def load(self, seed):
        """Load mutant `seed` unless an identical one was tried; returns its outcome."""
        kind, fmt, data, given = make_mutant(seed)
        if (kind, given, data) in self.seen:
            self.counts["duplicate"] += 1
            return "duplicate"
        self.seen.add((kind, given, data))
        path = self.folder / f"mutant.{fmt}"
        path.write_bytes(data)
        try:
            if kind == "treebank":
                load_treebank(self.warehouse, path, f"{MUTANT_CORPUS}{seed}")
            else:
                load_outputs(self.warehouse, path, CORPUS, "fuzz", f"r{seed}", fmt=given)
        except LoadError as err:
            outcome = "refused"
            self.refusals.append(err.message)
            if sha256(self.warehouse) != self.digest:
                self.problems.append(f"seed {seed}: refused ({err}) but the warehouse changed")
                self.digest = sha256(self.warehouse)
            if "\n" in str(err) or "\x1b" in str(err):
                self.problems.append(f"seed {seed}: the error is not one printable line: {str(err)!r}")
        except Exception as err:  # noqa: BLE001 - the point: anything but LoadError is a defect
            outcome = "crashed"
            self.problems.append(f"seed {seed}: {kind} {fmt} (--format {given}) raised {type(err).__name__}: {err!r}")
            self.digest = sha256(self.warehouse)
        else:
            outcome = "accepted"
            self.accepted.append((seed, kind, data))
            self.digest = sha256(self.warehouse)
        self.counts[outcome] += 1
        return outcome

    def check_accepted(self):
        """Compare every accepted mutant with the oracle's reading of its file; adds to self.problems."""
        con = duckdb.connect(str(self.warehouse), read_only=True)
        try:
            for seed, kind, data in self.accepted:
                blocks = blocks_of(data)
                problem = (
                    "the file is not UTF-8"
                    if blocks is None
                    else _check_treebank(con, f"{MUTANT_CORPUS}{seed}", blocks)
                    if kind == "treebank"
                    else _check_run(con, f"r{seed}", data, blocks)
                )
                if problem:
                    self.problems.append(f"seed {seed}: {kind} accepted, but {problem}")
        finally:
            con.close()
        return self.problems


def _token_lines(lines):
    return [line for line in lines if not line.startswith("#")]


def _check_treebank(con, corpus, blocks):
    got = con.execute(
        "select sent_id, first_line from raw.sentences where corpus = ? order by sent_idx", [corpus]
    ).fetchall()
    expected = [(comment_value(lines, "sent_id") or str(k), first) for k, (first, lines) in enumerate(blocks, 1)]
    if got != expected:
        return f"sentences {got} differ from the file's {expected}"
    tokens, words = con.execute(
        "select count(*), count(*) filter (where id not like '%-%' and id not like '%.%') "
        "from raw.tokens where corpus = ?",
        [corpus],
    ).fetchone()
    lines = [line for _, block in blocks for line in _token_lines(block)]
    if tokens != len(lines) or words != sum(line.split("\t")[0].isdigit() for line in lines):
        return f"{tokens} tokens ({words} words) loaded, the file has {len(lines)} token lines"
    return None


def _check_run(con, run, data, blocks):
    treebank_ids = {
        r[0] for r in con.execute("select sent_id from raw.sentences where corpus = ?", [CORPUS]).fetchall()
    }
    reference = len(treebank_ids)
    submission, format_, matched_by = con.execute(
        "select submission_id, format, matched_by from raw.submissions where corpus = ? and team = 'fuzz' and run = ?",
        [CORPUS, run],
    ).fetchone()
    rows = con.execute(
        "select sent_idx, sent_id, text, line_no from raw.outputs where submission_id = ? "
        "and not is_missing order by line_no",
        [submission],
    ).fetchall()
    if format_ == "text":  # one sentence a line
        lines = data.decode("utf-8").removeprefix("\ufeff").split("\n")
        count = len(lines) - (lines[-1] == "")
        return None if len(rows) == count == reference else f"{len(rows)} of {count} lines loaded"
    if [r[3] for r in rows] != [first for first, _ in blocks]:
        return (
            f"sentences at lines {[r[3] for r in rows]} loaded, the file has blocks at {[first for first, _ in blocks]}"
        )
    if len(blocks) != reference:
        return f"a run of {len(blocks)} sentences was accepted for {reference} without --allow-partial"
    # Never a guess: the treebank's ids on every sentence (matched by them), or on none (matched by order).
    own_ids = [comment_value(lines, "sent_id") for _, lines in blocks]
    known = [i in treebank_ids for i in own_ids]
    if any(known) and not (all(known) and matched_by == "sent_id"):
        return f"sent_ids {own_ids} ({sum(known)} of the treebank's) were matched by {matched_by}"
    for position, ((sent_idx, sent_id, text, _), (first, lines)) in enumerate(zip(rows, blocks), start=1):
        own_id = comment_value(lines, "sent_id")
        if matched_by == "sent_id" and own_id != sent_id:
            return f"the sentence at line {first} ({own_id!r}) was matched to {sent_id!r}"
        if matched_by == "order" and sent_idx != position:
            return f"the sentence at line {first} went to reference sentence {sent_idx}"
        own_text = comment_value(lines, "text")
        if format_ == "sr" and (own_text or "") != (text or ""):
            return f"the text at line {first} is {own_text!r} but {text!r} was loaded"
    if format_ == "conllu":
        tokens = con.execute("select count(*) from raw.output_tokens where submission_id = ?", [submission]).fetchone()[
            0
        ]
        expected = sum(len(_token_lines(lines)) for _, lines in blocks)
        if tokens != expected:
            return f"{tokens} output tokens loaded, the file has {expected} token lines"
    return None
