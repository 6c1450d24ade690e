"""What the command modules share: how names are explained, and how a line reaches the user."""

import sys
from pathlib import Path

from srlens.loaders.errors import printable

# What a name may hold (loaders/names.py), for the help of the options that take one.
NAMES = "a name: letters, digits and . _ - +"
CORPUS_WITH_SEVERAL_FILES = "--corpus goes with one file: with several, each file's stem names its corpus"


def announce(path, large=5_000_000):
    """A large file takes seconds to read and check: say so before the wait (stderr)."""
    size = Path(path).stat().st_size if Path(path).is_file() else 0
    if size >= large:
        say(f"reading and checking {path} ({size / 1e6:.0f} MB)", file=sys.stderr)


def say(text, file=None):
    """Print one line that may hold names from the user (files, corpora, runs): never raw escape codes."""
    print(printable(text), file=file)
