"""srlens: an error-analysis warehouse for surface realization and NLG outputs.

One import name. The wheel holds the loaders and the UDFs as srlens.loaders and srlens.udfs; in
a source checkout they stay in the repository's top-level folders loaders/ and udfs/, and the
line below lets the same imports find them there (see srlens/paths.py for the data files).
"""

from pathlib import Path as _Path

if not (_Path(__file__).resolve().parent / "loaders").is_dir():
    __path__.append(str(_Path(__file__).resolve().parent.parent))


def __getattr__(name):
    """srlens.connect(path): the read-only sandbox of srlens/sandbox.py, imported (with duckdb) on first use."""
    if name == "connect":
        from srlens.sandbox import connect

        return connect
    raise AttributeError(f"module 'srlens' has no attribute {name!r}")
