"""Every relative link of README, CHANGELOG and docs/ leads to a file, and every #anchor to a heading.

A backticked path to a file of the repository (`tests/...`, `bench/...`) names one that exists; a file
that is gone (CHANGELOG, history) is named without backticks.
"""

import re
from pathlib import Path

import pytest

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PAGES = sorted([REPO / "README.md", REPO / "CHANGELOG.md", *(REPO / "docs").glob("*.md")])

# [text](target) and ![alt](target); a title after the target ("...") is allowed
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
# A word of inline code that is a path in the repository, from its root.
REPO_PATH = re.compile(r"(?:tests|bench|srlens|loaders|udfs|dbt_project|sql|demo|docs)/[^\s`]*")
# Wildcards and placeholders stand for many files, not one.
PLACEHOLDER = re.compile(r"[*?<>{}$]|NAME")


def prose(text):
    """The text without code blocks and inline code, where a bracket is no link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(page):
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats."""
    seen, ids = {}, set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        ids.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return ids


def relative_links(page):
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not checked
            yield target


def repo_paths(page):
    """The repository paths named in a page's inline code (not in code blocks, which show commands)."""
    for code in INLINE_CODE.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        for word in code.strip("`").split():
            match = REPO_PATH.fullmatch(word.split("::")[0].rstrip(".,:;)"))
            if match and not PLACEHOLDER.search(word):
                yield match.group(0)


def test_the_pages_are_found():
    names = {p.relative_to(REPO).as_posix() for p in PAGES}
    assert {"README.md", "docs/loading.md", "docs/building.md", "docs/querying.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page):
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_backticked_repo_path_exists(page):
    assert [path for path in repo_paths(page) if not (REPO / path).exists()] == []


def test_the_checker_sees_a_path_that_moved(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Run `pytest tests/cli/test_doc_links.py::test_x -q` and `tests/test_doc_links.py`;\n"
        "`bench/NAME.py` and `tests/*/test_*.py` are patterns; tests/plain.py is prose.\n"
        "```sh\npython bench/gone.py\n```\n",
        encoding="utf-8",
    )
    assert list(repo_paths(page)) == ["tests/cli/test_doc_links.py", "tests/test_doc_links.py"]
    assert [p for p in repo_paths(page) if not (REPO / p).exists()] == ["tests/test_doc_links.py"]


def test_the_checker_sees_a_broken_link_and_a_missing_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## A heading, with `code` (and more)\n\n"
        "[ok](#a-heading-with-code-and-more) [gone](nowhere.md) [bad](#no-such)\n"
        "```sh\n[in code](ignored.md)\n```\n`[inline](ignored.md)` [web](https://example.org)\n",
        encoding="utf-8",
    )
    assert list(relative_links(page)) == ["#a-heading-with-code-and-more", "nowhere.md", "#no-such"]
    assert "a-heading-with-code-and-more" in anchors(page)
    assert "no-such" not in anchors(page)
