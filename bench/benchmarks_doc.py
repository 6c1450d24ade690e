"""Shared by the bench scripts: write one section of docs/benchmarks.md."""

from pathlib import Path

BENCHMARKS_MD = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(title, body, path=BENCHMARKS_MD):
    """Replace (or append) the '## title' section, leaving the other sections as they are."""
    text = path.read_text() if path.exists() else "# Benchmarks\n\nFigures written by the scripts in `bench/`.\n"
    marker = f"## {title}\n"
    head, _, rest = text.partition(marker)
    tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
    path.write_text(head.rstrip("\n") + "\n\n" + marker + "\n" + body.rstrip("\n") + "\n" + tail)
