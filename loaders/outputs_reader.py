"""Readers for one system run: plain text, shared-task blocks, or CoNLL-U."""

import re
from dataclasses import dataclass, field

from srlens.loaders.conllu_reader import (
    SENT_ID_COMMENT,
    TEXT_COMMENT,
    comment_sent_id,
    read_conllu,
    read_text,
    split_blocks,
    split_lines,
)
from srlens.loaders.errors import LoadError

FORMATS = ("auto", "text", "sr", "conllu")
# A CoNLL-U word line: an integer id and ten tab-separated columns. Only such a line makes a file CoNLL-U:
# a stray tab-rich line of plain text is not one.
_WORD_LINE = re.compile(r"[1-9][0-9]*(\t[^\t]*){9}\Z")


@dataclass
class RunFile:
    """Sentences of a run in file order; sent_ids are None for plain text."""

    format: str
    sent_ids: list = field(default_factory=list)
    texts: list = field(default_factory=list)
    line_nos: list = field(default_factory=list)
    conllu: object = None  # the parsed Treebank for --format conllu
    sha256: str = ""
    format_note: str = ""  # with --format auto: which format was guessed and why, for error messages


def detect_format(text):
    """(format, why): conllu if a line is a CoNLL-U word line, else sr if a line is a '# text =' comment,
    else text."""
    lines = split_lines(text)
    for number, line in enumerate(lines, start=1):
        if _WORD_LINE.match(line):
            return "conllu", f"line {number} is a CoNLL-U word line"
    for number, line in enumerate(lines, start=1):
        if TEXT_COMMENT.match(line):
            return "sr", f"line {number} is a '# text =' comment"
    return "text", "no line is a CoNLL-U word line or a '# text =' comment"


def read_run(path, fmt="auto", source=None):
    """`source`: the file's (text, sha256) from read_text when the caller has read it already."""
    if fmt not in FORMATS:
        raise LoadError(path, f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    text, digest = source or read_text(path)
    if not text.strip():
        raise LoadError(path, "the file is empty")
    note = ""
    if fmt == "auto":
        fmt, why = detect_format(text)
        others = " or ".join(f"--format {f}" for f in FORMATS[1:] if f != fmt)
        note = f"(read as {fmt} because {why}; to read it otherwise, give {others})"
    reader = {"text": _read_plain, "sr": _read_sr, "conllu": _read_conllu}[fmt]
    try:
        run = reader(path, (text, digest))
    except LoadError as err:
        if note:
            raise err.with_note(note) from None
        raise
    run.sha256 = digest
    run.format_note = note
    return run


def _read_plain(path, source):
    """One sentence a line; an empty line is an empty output, not a separator."""
    lines = source[0].split("\n")
    if lines[-1] == "":
        lines.pop()
    run = RunFile("text")
    for number, line in enumerate(lines, start=1):
        run.sent_ids.append(None)
        run.texts.append(line.rstrip("\r").strip())
        run.line_nos.append(number)
    return run


def _read_sr(path, source):
    """Blocks of '# sent_id = ...' and '# text = ...' separated by blank lines."""
    run = RunFile("sr")
    # Unlike CoNLL-U, a missing final blank line or a doubled one loses nothing here.
    text = source[0].rstrip("\r\n") + "\n\n"
    blocks = list(split_blocks(path, text, strict=False))
    for position, (first_line, block) in enumerate(blocks):
        sent_id = comment_sent_id(path, block, first_line)
        texts = [m.group(1) for m in map(TEXT_COMMENT.match, block) if m]
        other = [line for line in block if not line.startswith("#")]
        if other:
            raise LoadError(
                path,
                f"unexpected line {other[0][:60]!r} in a '# sent_id'/'# text' block",
                first_line + block.index(other[0]),
                sent_id,
            )
        next_block = blocks[position + 1][1] if position + 1 < len(blocks) else []
        if (
            sent_id is not None
            and not texts
            and next_block
            and not any(SENT_ID_COMMENT.match(line) for line in next_block)
        ):
            blank = first_line + len(block)  # a stray blank line cut the block in two
            raise LoadError(
                path, f"blank line {blank} separates this block's '# sent_id' from its '# text'", blank, sent_id
            )
        if sent_id is None or len(texts) != 1:
            raise LoadError(
                path,
                f"a block needs exactly one '# sent_id =' and one '# text =' line "
                f"(found {int(sent_id is not None)} and {len(texts)})",
                first_line,
                sent_id,
            )
        run.sent_ids.append(sent_id)
        run.texts.append(texts[0].strip())
        run.line_nos.append(first_line)
    return run


def _read_conllu(path, source):
    treebank = read_conllu(path, source)
    tokens = treebank.tokens
    run = RunFile("conllu", conllu=treebank)
    words_by_sentence = {}
    for sent_idx, token_id, form in zip(tokens["sent_idx"], tokens["id"], tokens["form"]):
        if "." not in token_id:  # surface tokens: words and multiword ranges
            words_by_sentence.setdefault(sent_idx, []).append((token_id, form))
    s = treebank.sentences
    for sent_idx, sent_id, text, first_line, comments in zip(
        s["sent_idx"], s["sent_id"], s["text"], s["first_line"], s["comments"]
    ):
        has_id = any(SENT_ID_COMMENT.match(c) for c in comments)
        run.sent_ids.append(sent_id if has_id else None)
        run.texts.append(text if text is not None else _surface(words_by_sentence[sent_idx]))
        run.line_nos.append(first_line)
    return run


def _surface(tokens):
    """Space-joined surface forms: a multiword range replaces the words it covers."""
    out, skip_to = [], 0
    for token_id, form in tokens:
        if "-" in token_id:
            out.append(form)
            skip_to = int(token_id.split("-")[1])
        elif int(token_id) > skip_to:
            out.append(form)
    return " ".join(out)
