"""Strict CoNLL-U reader producing column lists ready for a bulk insert.

It keeps every line (comments, multiword-token ranges, empty nodes) and checks
what the warehouse relies on: ten non-empty columns, integer word ids 1..n in
order, multiword-token ranges right before the words they cover, empty nodes
k.1, k.2, ... right after word k, integer heads within the sentence, exactly
one root, no cycle, valid UTF-8 without NUL, and exactly one empty line after
every sentence. Any problem raises LoadError naming the file, line and
sentence.

Two readers share this: a fast one (_read_whole_file), which handles the whole file at once with str
methods and list operations in C, and the line parser (read_conllu_lines), which names the problem. The
fast one only decides "valid": on anything it does not accept it returns None and the line parser reads
the file, so every error is the line parser's. tests/loaders/test_loaders.py and tests/attack check that both
give the same Treebank, or the same error.
"""

import hashlib
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, chain, compress, repeat
from operator import add, eq, gt, not_
from pathlib import Path

from srlens.loaders.errors import LoadError

CONLLU_COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
_WORD_ID = re.compile(r"[1-9][0-9]*\Z")
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)\Z")
_EMPTY_ID = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)\Z")
SENT_ID_COMMENT = re.compile(r"#\s*sent_id\s*=\s*(.*?)\s*\Z")
TEXT_COMMENT = re.compile(r"#\s*text\s*=\s?(.*?)\Z")


@dataclass
class Treebank:
    """`sentences` maps a column name to its values; the token lines are kept as they are in the file, each
    with its sentence and line number, and `tokens` splits them into the ten columns when asked (a load
    has DuckDB split them: store.insert_lines)."""

    sentences: dict = field(
        default_factory=lambda: {"sent_idx": [], "sent_id": [], "text": [], "comments": [], "first_line": []}
    )
    token_lines: list = field(default_factory=list)  # ten tab-separated columns each, without the line end
    token_sent_idx: list = field(default_factory=list)
    token_line_no: list = field(default_factory=list)
    words: int = 0
    sha256: str = ""

    @property
    def sentence_count(self):
        return len(self.sentences["sent_idx"])

    @cached_property
    def tokens(self):
        """Column lists of the token lines: sent_idx, line_no and the ten CoNLL-U columns."""
        fields = "\t".join(self.token_lines).split("\t") if self.token_lines else []
        columns = {name: fields[k::10] for k, name in enumerate(CONLLU_COLUMNS)}
        return {"sent_idx": self.token_sent_idx, "line_no": self.token_line_no, **columns}


def read_text(path):
    """The file's text and the sha256 of its bytes; bad encodings and NUL bytes are reported with their line."""
    data = Path(path).read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise LoadError(path, "the file is UTF-16 (it starts with a UTF-16 byte order mark): save it as UTF-8", line=1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise LoadError(path, f"invalid UTF-8 (byte 0x{data[err.start]:02x})", line=line) from None
    if "\n" not in text and text.count("\r") > 1:
        raise LoadError(path, "the lines end with CR only (old Mac style): save the file with LF or CRLF line ends")
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise LoadError(path, "NUL byte: this is not a text file (or not UTF-8)", line=line)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\ufeff" in text:  # invisible, and it turns '# sent_id' or '1' into something else
        line = text.count("\n", 0, text.index("\ufeff")) + 1
        raise LoadError(
            path, "a byte order mark (U+FEFF) inside the file, e.g. from joining files: remove it", line=line
        )
    return text, hashlib.sha256(data).hexdigest()


def split_lines(text):
    """The lines of `text` without their ends (LF or CRLF)."""
    lines = text.split("\n")  # not splitlines(): \x0b, \x1c, U+2028 ... are not line ends in these formats
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def split_blocks(path, text, strict=True):
    """Yield (first_line_no, [lines]) per blank-line separated block.

    strict (CoNLL-U): every sentence is followed by exactly one empty line. Any other blank line
    (before the first sentence, a second one in a row, one holding spaces) is an error naming it.
    Otherwise (sr blocks) any number of blank or whitespace-only lines separate blocks.
    """
    if not text.strip():
        raise LoadError(path, "the file is empty")
    lines = split_lines(text)
    block, start, count, previous = [], None, 0, None  # previous: the last block, to name it in errors
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if start is None:
                start = number
            block.append(line)
            continue
        if strict and line:
            raise LoadError(
                path,
                "a line of only whitespace: a blank line must be empty",
                number,
                _block_sent_id(block or previous, count + bool(block)),
            )
        if block:
            count += 1
            yield start, block
            previous, block, start = block, [], None
        elif strict:
            if previous is None:
                raise LoadError(path, "blank line before the first sentence", number)
            raise LoadError(
                path,
                "a second blank line in a row: sentences are separated by exactly one empty line",
                number,
                _block_sent_id(previous, count),
            )
    if block:
        if strict:
            raise LoadError(
                path, "the last sentence is not followed by a blank line", len(lines), _block_sent_id(block, count + 1)
            )
        yield start, block


def _block_sent_id(block, position):
    """How errors name a block: its '# sent_id', else its position (as the reader names it); None for none."""
    if not block:
        return None
    return next((m.group(1) for m in map(SENT_ID_COMMENT.match, block) if m and m.group(1)), str(position))


def comment_sent_id(path, block, first_line):
    """The block's '# sent_id = ...' value, None if it has none; an empty or a second one is an error."""
    found = [(m.group(1), first_line + i) for i, m in enumerate(map(SENT_ID_COMMENT.match, block)) if m]
    if not found:
        return None
    (sent_id, line), *more = found
    if not sent_id:
        raise LoadError(path, "empty '# sent_id ='", line)
    if more:
        raise LoadError(path, f"a second '# sent_id' line (the first is at line {line})", more[0][1], sent_id)
    return sent_id


def read_conllu(path, source=None):
    """Parse and validate a CoNLL-U file into a Treebank; `source` is read_text's result if at hand."""
    source = source or read_text(path)
    treebank = _read_whole_file(*source)
    return treebank if treebank is not None else read_conllu_lines(path, source)


def comment_text(comments):
    """The sentence's text: the first '# text =' comment's value, None without one."""
    return next((m.group(1) for m in map(TEXT_COMMENT.match, comments) if m), None)


def read_conllu_lines(path, source=None):
    """The line parser: read_conllu line by line, each check where the line is; raises the first problem."""
    text, digest = source or read_text(path)
    treebank = Treebank(sha256=digest)
    seen_ids = {}
    blocks = list(split_blocks(path, text))
    for position, (first_line, block) in enumerate(blocks):
        sent_idx = position + 1
        sent_id = comment_sent_id(path, block, first_line) or str(sent_idx)
        if sent_id in seen_ids:
            raise LoadError(
                path,
                f"sent_id already used by the sentence at line {seen_ids[sent_id]}",
                line=first_line,
                sent_id=sent_id,
            )
        seen_ids[sent_id] = first_line
        _check_is_a_whole_sentence(path, blocks, position, sent_id)
        comments = [line for line in block if line.startswith("#")]
        text = comment_text(comments)
        treebank.words += _read_sentence(path, block, first_line, sent_idx, sent_id, treebank)
        s = treebank.sentences
        s["sent_idx"].append(sent_idx)
        s["sent_id"].append(sent_id)
        s["text"].append(text)
        s["comments"].append(comments)
        s["first_line"].append(first_line)
    return treebank


def _check_is_a_whole_sentence(path, blocks, position, sent_id):
    """A stray blank line cuts a sentence in two: name that line, not what each half lacks."""
    first_line, block = blocks[position]
    if all(line.startswith("#") for line in block):
        blank = first_line + len(block)
        if position + 1 < len(blocks):
            raise LoadError(
                path, f"blank line {blank} separates this sentence's comments from its words", blank, sent_id
            )
        raise LoadError(path, "comment lines with no words after them", first_line, sent_id)
    if position + 1 == len(blocks):
        return
    next_line, next_block = blocks[position + 1]
    next_tokens = [line for line in next_block if not line.startswith("#")]
    first_id = next_tokens[0].split("\t", 1)[0] if next_tokens else ""
    goes_on = _WORD_ID.match(first_id) or _RANGE_ID.match(first_id) or _EMPTY_ID.match(first_id)
    if goes_on and not re.match(r"(1|1-[0-9]+|0\.[0-9]+)\Z", first_id):
        raise LoadError(
            path,
            f"blank line {next_line - 1} inside a sentence: its words go on after it (id "
            f"{first_id}), but a blank line ends a sentence",
            next_line - 1,
            sent_id,
        )


def _read_sentence(path, block, first_line, sent_idx, sent_id, treebank):
    """Append the sentence's token lines to `treebank`; return its word count."""
    heads = {}  # word id -> (head, line number)
    ranges = []  # (token id, last word, line number) of each multiword token
    pending_range = None  # a range line seen, whose first word must be the next line
    last_empty = (0, 0)  # (word, decimal) of the last empty node
    in_tokens = False
    for offset, line in enumerate(block):
        line_no = first_line + offset
        if line.startswith("#"):
            if in_tokens:
                raise LoadError(path, "comment line after the first token line", line_no, sent_id)
            continue
        in_tokens = True
        cols = line.split("\t")
        if len(cols) != 10:
            raise LoadError(path, f"expected 10 tab-separated columns, found {len(cols)}", line_no, sent_id)
        if "" in cols:
            raise LoadError(
                path,
                f"column {CONLLU_COLUMNS[cols.index('')].upper()} is empty (CoNLL-U writes _ for no value)",
                line_no,
                sent_id,
            )
        token_id, head = cols[0], cols[6]
        word, multiword, empty = _WORD_ID.match(token_id), _RANGE_ID.match(token_id), _EMPTY_ID.match(token_id)
        last_word = len(heads)
        if pending_range and not (word and int(token_id) == pending_range[0]):
            raise LoadError(
                path,
                f"multiword token {pending_range[2]} is not followed by its first word {pending_range[0]}",
                pending_range[1],
                sent_id,
            )
        pending_range = None
        if word:
            if int(token_id) != last_word + 1:
                raise LoadError(path, f"word id {token_id} out of order (expected {last_word + 1})", line_no, sent_id)
            if not _WORD_ID.match(head) and head != "0":
                raise LoadError(path, f"head {head!r} is not a non-negative integer", line_no, sent_id)
            heads[last_word + 1] = (int(head), line_no)
        elif multiword:
            start, end = map(int, multiword.groups())
            if start >= end:
                raise LoadError(
                    path,
                    f"multiword token {token_id} covers no words (its range must go up, as in {start}-{start + 1})",
                    line_no,
                    sent_id,
                )
            if ranges and start <= ranges[-1][1]:
                raise LoadError(path, f"multiword token {token_id} overlaps {ranges[-1][0]}", line_no, sent_id)
            if start != last_word + 1:
                raise LoadError(
                    path,
                    f"multiword token {token_id} out of order: it belongs right before word "
                    f"{start}, and the next word is {last_word + 1}",
                    line_no,
                    sent_id,
                )
            ranges.append((token_id, end, line_no))
            pending_range = (start, line_no, token_id)
        elif empty:
            after, decimal = map(int, empty.groups())
            expected = last_empty[1] + 1 if last_empty[0] == after else 1
            if after != last_word:
                belongs = "before word 1" if after == 0 else f"right after word {after}"
                here = f"after word {last_word}" if last_word else "before word 1"
                raise LoadError(
                    path,
                    f"empty node {token_id} out of place: it belongs {belongs}, and here it comes {here}",
                    line_no,
                    sent_id,
                )
            if decimal != expected:
                raise LoadError(
                    path, f"empty node {token_id} out of order (expected {after}.{expected})", line_no, sent_id
                )
            last_empty = (after, decimal)
        else:
            raise LoadError(path, f"invalid token id {token_id!r}", line_no, sent_id)
        treebank.token_lines.append(line)
        treebank.token_sent_idx.append(sent_idx)
        treebank.token_line_no.append(line_no)
    if pending_range:
        raise LoadError(
            path,
            f"multiword token {pending_range[2]} is not followed by its first word {pending_range[0]}",
            pending_range[1],
            sent_id,
        )
    for token_id, end, line_no in ranges:
        if end > len(heads):
            raise LoadError(
                path,
                f"multiword token {token_id} covers words up to {end}, but the sentence has {len(heads)} words",
                line_no,
                sent_id,
            )
    _check_tree(path, heads, first_line, sent_id)
    return len(heads)


def _check_tree(path, heads, first_line, sent_id):
    """Heads within 0..n, exactly one root, every word reaches the root."""
    n = len(heads)
    if n == 0:
        raise LoadError(path, "sentence has no words", first_line, sent_id)
    for word, (head, line_no) in heads.items():
        if head > n:
            raise LoadError(path, f"head {head} is beyond the last word ({n})", line_no, sent_id)
        if head == word:
            raise LoadError(path, f"word {word} is its own head", line_no, sent_id)
    roots = [word for word, (head, _) in heads.items() if head == 0]
    if not roots:
        raise LoadError(path, "no word has head 0 (no root)", first_line, sent_id)
    if len(roots) > 1:
        raise LoadError(
            path,
            f"{len(roots)} words have head 0 ({', '.join(map(str, roots))}); a tree has one root",
            heads[roots[1]][1],
            sent_id,
        )
    reaches_root = {0}
    for word in heads:
        path_up = []
        while word not in reaches_root:
            if word in path_up:
                cycle = path_up[path_up.index(word) :]
                raise LoadError(
                    path, "cycle through words " + " -> ".join(map(str, cycle + [word])), heads[word][1], sent_id
                )
            path_up.append(word)
            word = heads[word][0]
        reaches_root.update(path_up)


def _read_whole_file(text, digest):
    """The Treebank of a valid file, read all at once; None for anything else (the line parser then names
    the problem). Every check of the line parser is here, on whole columns: token lines split in one go,
    word ids compared with 1..n of each sentence, heads checked as numbers (0..n, one root, not the word
    itself) and for cycles by pointer doubling."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # CRLF; a CR anywhere else goes to the line parser
        if "\r" in text:
            return None
    if not text.endswith("\n\n") or text.startswith("\n") or "\n\n\n" in text:
        return None  # no blank line before, between (twice) or after the sentences but the one that ends each
    treebank = Treebank(sha256=digest)
    s = treebank.sentences
    token_lines, token_counts, token_first_lines, seen = [], [], [], set()
    line_no = 1
    for sent_idx, block in enumerate(text[:-2].split("\n\n"), start=1):
        lines = block.split("\n")
        k = 0
        while k < len(lines) and lines[k].startswith("#"):
            k += 1
        comments = lines[:k]
        found = [m.group(1) for m in map(SENT_ID_COMMENT.match, comments) if m]
        sent_id = found[0] if found else str(sent_idx)
        if k == len(lines) or len(found) > 1 or not sent_id or sent_id in seen:
            return None
        seen.add(sent_id)
        s["sent_idx"].append(sent_idx)
        s["sent_id"].append(sent_id)
        s["text"].append(comment_text(comments))
        s["comments"].append(comments)
        s["first_line"].append(line_no)
        token_lines += lines[k:]
        token_counts.append(len(lines) - k)
        token_first_lines.append(line_no + k)
        line_no += len(lines) + 1
    n = len(token_lines)
    if list(map(str.count, token_lines, repeat("\t", n))).count(9) != n:
        return None
    fields = "\t".join(token_lines).split("\t")
    if "" in fields:
        return None
    words = _valid_words(fields[0::10], fields[6::10], token_counts)
    if words is None:
        return None
    treebank.words = words
    treebank.token_lines = token_lines
    treebank.token_sent_idx = list(chain.from_iterable(map(repeat, s["sent_idx"], token_counts)))
    ends = map(add, token_first_lines, token_counts)
    treebank.token_line_no = list(chain.from_iterable(map(range, token_first_lines, ends)))
    return treebank


def _valid_words(ids, heads, token_counts):
    """The number of words if the token ids and heads are valid (the line parser's rules), else None.

    Words are the ids made of digits; they must be 1..n in each sentence. The few other lines (multiword
    tokens, empty nodes, anything invalid) are checked one by one in _valid_others."""
    is_word = list(map(str.isdigit, ids))
    others = list(compress(range(len(ids)), map(not_, is_word)))
    starts = list(accumulate(token_counts, initial=0))
    sentence_of = [bisect_right(starts, i) - 1 for i in others]
    counts = list(token_counts)
    for sentence in sentence_of:
        counts[sentence] -= 1  # word counts
    if 0 in counts:
        return None
    numbers = list(map(str, range(max(counts) + 1)))  # "0", "1", ...: word ids and heads as the file writes them
    if list(compress(ids, is_word)) != list(chain.from_iterable(numbers[1 : n + 1] for n in counts)):
        return None
    if not _valid_others(ids, is_word, others, sentence_of, starts, counts):
        return None
    head = list(map(dict(zip(numbers, range(len(numbers)))).get, compress(heads, is_word)))
    if None in head:  # not 0 or [1-9][0-9]* (the line parser's rule), or beyond every sentence's last word
        return None
    word = list(chain.from_iterable(map(range, repeat(1), map(add, counts, repeat(1)))))
    if any(map(gt, head, chain.from_iterable(map(repeat, counts, counts)))) or any(map(eq, head, word)):
        return None  # a head beyond the sentence's last word, or a word its own head
    if head.count(0) != len(counts):  # with every word reaching a root below: one root per sentence
        return None
    return sum(counts) if _every_word_reaches_its_root(head, counts) else None


def _valid_others(ids, is_word, others, sentence_of, starts, counts):
    """Whether the non-word lines are multiword tokens and empty nodes where the line parser accepts them:
    a range a-b (a < b <= n, after the last range's end) right before word a, an empty node k.d right after
    word k, numbered d = 1, 2, ... after it."""
    previous_sentence = None
    for i, sentence in zip(others, sentence_of):
        if sentence != previous_sentence:
            others_before, last_range_end, last_empty, previous_sentence = 0, 0, (0, 0), sentence
        last_word = i - starts[sentence] - others_before
        others_before += 1
        multiword, empty = _RANGE_ID.match(ids[i]), _EMPTY_ID.match(ids[i])
        if multiword:
            start, end = map(int, multiword.groups())
            next_is_word = i + 1 < starts[sentence + 1] and is_word[i + 1]
            if not (next_is_word and last_range_end < start == last_word + 1 < end <= counts[sentence]):
                return False
            last_range_end = end
        elif empty:
            after, decimal = map(int, empty.groups())
            if after != last_word or decimal != (last_empty[1] + 1 if last_empty[0] == after else 1):
                return False
            last_empty = (after, decimal)
        else:
            return False
    return True


def _every_word_reaches_its_root(head, counts):
    """No cycle: each sentence gets a slot for its root (0) before its words, pointing to itself; every
    word points to its head's slot. After k rounds of p = p[p], each slot points 2**k steps up, so after
    enough rounds every word of a tree points to its sentence's root slot, and a word in a cycle never."""
    bases = list(accumulate(map(add, counts, repeat(1)), initial=0))[:-1]
    per_slot = list(chain.from_iterable(map(repeat, bases, map(add, counts, repeat(1)))))
    heads_with_root, start = [], 0
    for n in counts:
        heads_with_root.append(0)
        heads_with_root += head[start : start + n]
        start += n
    up = list(map(add, per_slot, heads_with_root))
    for _ in range(max(counts).bit_length()):
        up = list(map(up.__getitem__, up))
    return up == per_slot
