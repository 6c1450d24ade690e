"""Strict CoNLL-U reader producing column lists ready for a bulk insert.

It keeps every line (comments, multiword-token ranges, empty nodes) and checks
what the warehouse relies on: ten columns, integer word ids 1..n in order,
integer heads within the sentence, exactly one root, no cycle, valid UTF-8,
and a blank line after every sentence. Any problem raises LoadError naming
the file, line and sentence.
"""

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from srlens.loaders.errors import LoadError

CONLLU_COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
_WORD_ID = re.compile(r"[1-9][0-9]*\Z")
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)\Z")
_EMPTY_ID = re.compile(r"(0|[1-9][0-9]*)\.[1-9][0-9]*\Z")
SENT_ID_COMMENT = re.compile(r"#\s*sent_id\s*=\s*(.*?)\s*\Z")
TEXT_COMMENT = re.compile(r"#\s*text\s*=\s?(.*?)\Z")


@dataclass
class Treebank:
    """Column lists: `sentences` and `tokens` map a column name to its values."""

    sentences: dict = field(default_factory=lambda: {
        "sent_idx": [], "sent_id": [], "text": [], "comments": [], "first_line": []})
    tokens: dict = field(default_factory=lambda: {
        "sent_idx": [], "line_no": [], **{c: [] for c in CONLLU_COLUMNS}})
    words: int = 0
    sha256: str = ""

    @property
    def sentence_count(self):
        return len(self.sentences["sent_idx"])


def read_text(path):
    """The file's text and the sha256 of its bytes; invalid UTF-8 is reported with its line number."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise LoadError(path, f"invalid UTF-8 (byte 0x{data[err.start]:02x})", line=line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, hashlib.sha256(data).hexdigest()


def split_blocks(path, text):
    """Yield (first_line_no, [lines]) per blank-line separated block."""
    if not text.strip():
        raise LoadError(path, "the file is empty")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if lines[-1].strip():
        raise LoadError(path, "the last sentence is not followed by a blank line", line=len(lines))
    block, start = [], None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if start is None:
                start = number
            block.append(line)
        elif block:
            yield start, block
            block, start = [], None


def read_conllu(path, source=None):
    """Parse and validate a CoNLL-U file into a Treebank; `source` is read_text's result if at hand."""
    text, digest = source or read_text(path)
    treebank = Treebank(sha256=digest)
    seen_ids = {}
    for first_line, block in split_blocks(path, text):
        sent_idx = treebank.sentence_count + 1
        comments = [line for line in block if line.startswith("#")]
        sent_id = next((m.group(1) for m in map(SENT_ID_COMMENT.match, comments) if m), None) or str(sent_idx)
        if sent_id in seen_ids:
            raise LoadError(path, f"sent_id already used by the sentence at line {seen_ids[sent_id]}",
                            line=first_line, sent_id=sent_id)
        seen_ids[sent_id] = first_line
        text = next((m.group(1) for m in map(TEXT_COMMENT.match, comments) if m), None)
        treebank.words += _read_sentence(path, block, first_line, sent_idx, sent_id, treebank.tokens)
        s = treebank.sentences
        s["sent_idx"].append(sent_idx)
        s["sent_id"].append(sent_id)
        s["text"].append(text)
        s["comments"].append(comments)
        s["first_line"].append(first_line)
    return treebank


def _read_sentence(path, block, first_line, sent_idx, sent_id, tokens):
    """Append the sentence's token lines to `tokens`; return its word count."""
    heads = {}  # word id -> (head, line number)
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
        token_id, head = cols[0], cols[6]
        if _WORD_ID.match(token_id):
            expected = len(heads) + 1
            if int(token_id) != expected:
                raise LoadError(path, f"word id {token_id} out of order (expected {expected})", line_no, sent_id)
            if not _WORD_ID.match(head) and head != "0":
                raise LoadError(path, f"head {head!r} is not a non-negative integer", line_no, sent_id)
            heads[expected] = (int(head), line_no)
        elif not (_RANGE_ID.match(token_id) or _EMPTY_ID.match(token_id)):
            raise LoadError(path, f"invalid token id {token_id!r}", line_no, sent_id)
        tokens["sent_idx"].append(sent_idx)
        tokens["line_no"].append(line_no)
        for name, value in zip(CONLLU_COLUMNS, cols):
            tokens[name].append(value)
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
        raise LoadError(path, f"{len(roots)} words have head 0 ({', '.join(map(str, roots))}); "
                        "a tree has one root", heads[roots[1]][1], sent_id)
    reaches_root = {0}
    for word in heads:
        path_up = []
        while word not in reaches_root:
            if word in path_up:
                cycle = path_up[path_up.index(word):]
                raise LoadError(path, "cycle through words " + " -> ".join(map(str, cycle + [word])),
                                heads[word][1], sent_id)
            path_up.append(word)
            word = heads[word][0]
        reaches_root.update(path_up)
