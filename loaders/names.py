"""Names: which ones srlens accepts, and how a name becomes a file name.

A run's identity is (campaign, corpus, team, run); its key is
submission_id = campaign/corpus/team/run. Every name that enters the warehouse
(--corpus, --team, --run, --campaign, --language, a baseline --model, the names
in a judgments CSV) goes through `check_name` first, so that the key stays
readable and two identities never share it:

* after Unicode NFC normalization, a name is made of letters (any script, with
  their combining marks), decimal digits, and `.` `_` `-` `+`;
* it starts with a letter, a digit or `_` (not `.`, which makes `..` and hidden
  files, nor `-` or `+`, which command-line tools read as options);
* it is 1 to 100 characters long.

No name can contain `/`, so the four parts of a submission_id are unambiguous.
Names already in a warehouse written by an older srlens are never checked when
they are read (query, build, report, status); only new loads are.

Where a name reaches the file system (baseline runs, Parquet exports), the
file name is built by `file_in`: each name percent-encoded, whatever the check
let through, and the final path must lie directly in the intended folder.
"""

import hashlib
import re
import unicodedata
from pathlib import Path
from urllib.parse import quote

NAME_MAX = 100
PUNCTUATION = "._-+"
RULES = f"names are letters, digits and . _ - + (at most {NAME_MAX} characters, starting with a letter, a digit or _)"
_ASCII_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
SHOWN_MAX = 40  # characters of a refused name echoed in the error


def submission_id(campaign, corpus, team, run):
    """The key of a run's identity; unambiguous because checked names never contain '/'."""
    return f"{campaign}/{corpus}/{team}/{run}"


class NameRefused(ValueError):
    """A name outside the documented character set; the message names the argument and the character."""


def shown(text):
    """A name as it may be printed: repr() escapes control and format characters, long ones are cut."""
    return repr(text) if len(text) <= SHOWN_MAX else repr(text[:SHOWN_MAX]) + f"... ({len(text)} characters)"


def character(ch):
    """A character as an error names it: 'x' (U+0078), or only U+001B when it is not printable."""
    code = f"U+{ord(ch):04X}"
    if ch == " ":
        return f"' ' ({code}, a space)"
    return f"'{ch}' ({code})" if ch.isprintable() and not ch.isspace() else code


def _letter_or_digit(ch):
    category = unicodedata.category(ch)
    return category[0] == "L" or category == "Nd"


def _allowed(ch):
    return _letter_or_digit(ch) or unicodedata.category(ch)[0] == "M" or ch in PUNCTUATION


def check_name(name, argument):
    """The NFC form of `name`, or NameRefused naming `argument` (e.g. '--team') and the bad character."""
    if not isinstance(name, str):
        raise NameRefused(f"{argument} must be text, not {type(name).__name__}")
    if len(name) <= NAME_MAX and _ASCII_NAME.fullmatch(name):  # the common case, quickly (CSV rows)
        return name
    name = unicodedata.normalize("NFC", name)
    if not name:
        raise NameRefused(f"{argument} is empty; {RULES}")
    if len(name) > NAME_MAX:
        raise NameRefused(f"{argument} {shown(name)} is too long; {RULES}")
    bad = next((ch for ch in name if not _allowed(ch)), None)
    if bad is not None:
        raise NameRefused(f"{argument} {shown(name)}: the character {character(bad)} is not allowed; {RULES}")
    first = name[0]
    if not (first == "_" or _letter_or_digit(first)):
        raise NameRefused(f"{argument} {shown(name)} starts with {character(first)}; {RULES}")
    return name


def corpus_of_file(path):
    """The corpus a file names where a command takes one file per corpus: its name without the
    extension, checked as a name (NameRefused otherwise)."""
    return check_name(Path(path).stem, "the corpus (the file's name without its extension)")


def _encoded(name):
    """Percent-encoding of one name: ASCII letters, digits, '.', '_' and '-' stay, all else is %XX of UTF-8.

    '+' and '%' are encoded, so '+' can join several names; a leading '.' is encoded too.
    """
    text = quote(name, safe="._-")
    return "%2E" + text[1:] if text.startswith(".") else text


def file_in(folder, names, suffix, unique=True):
    """The path of the file for `names` directly inside `folder`, never anywhere else.

    The file name is the names percent-encoded, joined by '+'. With `unique` (several names, e.g.
    a run's identity), a short hash of the exact names follows: it keeps file names of different
    identities apart on case-insensitive file systems and when a long name is cut to fit.
    Raises NameRefused if the result would not be a plain file in `folder`.
    """
    stem = "+".join(_encoded(name) for name in names)
    if unique:
        digest = hashlib.sha256("\0".join(names).encode("utf-8")).hexdigest()[:12]
        stem = f"{stem[:150]}.{digest}"
    file_name = stem + suffix
    folder = Path(folder)
    path = folder / file_name
    if (
        not stem
        or len(file_name.encode("utf-8")) > 255
        or Path(file_name).name != file_name
        or path.resolve().parent != folder.resolve()
    ):
        raise NameRefused(f"{shown('/'.join(names))} would not be a plain file name in {folder}")
    return path
