"""Readers for one system run: plain text, shared-task blocks, or CoNLL-U."""

from dataclasses import dataclass, field

from srlens.loaders.conllu_reader import SENT_ID_COMMENT, TEXT_COMMENT, read_conllu, read_text, split_blocks
from srlens.loaders.errors import LoadError

FORMATS = ("auto", "text", "sr", "conllu")


@dataclass
class RunFile:
    """Sentences of a run in file order; sent_ids are None for plain text."""

    format: str
    sent_ids: list = field(default_factory=list)
    texts: list = field(default_factory=list)
    line_nos: list = field(default_factory=list)
    conllu: object = None  # the parsed Treebank for --format conllu
    sha256: str = ""


def detect_format(text):
    """conllu if any line has ten tab-separated columns, sr if it has '# text =' lines, else text."""
    lines = text.split("\n", 2000)[:2000]
    if any(line.count("\t") == 9 for line in lines):
        return "conllu"
    if any(TEXT_COMMENT.match(line) for line in lines):
        return "sr"
    return "text"


def read_run(path, fmt="auto"):
    if fmt not in FORMATS:
        raise LoadError(path, f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    text, digest = read_text(path)
    if not text.strip():
        raise LoadError(path, "the file is empty")
    if fmt == "auto":
        fmt = detect_format(text)
    run = {"text": _read_plain, "sr": _read_sr, "conllu": _read_conllu}[fmt](path, (text, digest))
    run.sha256 = digest
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
    # Unlike CoNLL-U, a missing final blank line loses nothing here.
    text = source[0].rstrip("\r\n") + "\n\n"
    for first_line, block in split_blocks(path, text):
        ids = [m.group(1) for m in map(SENT_ID_COMMENT.match, block) if m]
        texts = [m.group(1) for m in map(TEXT_COMMENT.match, block) if m]
        other = [line for line in block if not line.startswith("#")]
        sent_id = ids[0] if ids else None
        if other:
            raise LoadError(path, f"unexpected line {other[0][:60]!r} in a '# sent_id'/'# text' block",
                            first_line + block.index(other[0]), sent_id)
        if len(ids) != 1 or len(texts) != 1:
            raise LoadError(path, f"a block needs exactly one '# sent_id =' and one '# text =' line "
                            f"(found {len(ids)} and {len(texts)})", first_line, sent_id)
        run.sent_ids.append(sent_id)
        run.texts.append(texts[0].strip())
        run.line_nos.append(first_line)
    _check_unique_ids(path, run)
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
            s["sent_idx"], s["sent_id"], s["text"], s["first_line"], s["comments"]):
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


def _check_unique_ids(path, run):
    seen = {}
    for sent_id, line in zip(run.sent_ids, run.line_nos):
        if sent_id in seen:
            raise LoadError(path, f"sent_id repeated (first at line {seen[sent_id]})", line, sent_id)
        seen[sent_id] = line

