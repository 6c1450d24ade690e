"""srlens in a user's environment: ranges, not pins; stanza and torch as the extra `srlens[stanza]`;
the processor a build takes when none is asked for.

The slow test installs the built wheel into a fresh venv as a user would, pip resolving its
dependencies from a wheelhouse of the lock (requirements.txt as wheels, so no index is needed; made
once and kept in ~/.cache/srlens-test), and runs the demo without stanza.
"""

import email.parser
import hashlib
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import duckdb
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from srlens.build import BuildError, build, choose_processor
from srlens.loaders.load import load_outputs, load_treebank
from tests.conftest import FIGURE1, REPO, SHARED, require_shared
from tests.support.wheel import build_wheel, lock_wheelhouse, run

EXTRA = "pip install 'srlens[stanza]'"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(tmp_path_factory.mktemp("dist"))


def wheel_metadata(wheel):
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(archive.read(name).decode())


def lock():
    """requirements.txt: {canonical name: pinned version}."""
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


@pytest.mark.slow  # builds the wheel
def test_the_wheel_declares_ranges_no_python_cap_and_the_stanza_extra(wheel):
    meta = wheel_metadata(wheel)
    requires = [Requirement(r) for r in meta.get_all("Requires-Dist")]
    base = [r for r in requires if r.marker is None]
    assert base and not [r for r in base if any(s.operator == "==" for s in r.specifier)], base
    assert "<" not in meta["Requires-Python"] and meta["Requires-Python"] == ">=3.11"
    assert "stanza" in meta.get_all("Provides-Extra")
    stanza_extra = {r.name for r in requires if r.marker and r.marker.evaluate({"extra": "stanza"})}
    assert {"stanza", "torch"} <= stanza_extra
    assert not {"stanza", "torch", "nltk"} & {r.name for r in base}  # a plain install has none of them
    assert "Programming Language :: Python :: 3.11" in meta.get_all("Classifier")


def test_the_lock_satisfies_every_range():
    """requirements.txt (what make build and CI install) is one point inside pyproject's ranges."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = lock()
    declared = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    for requirement in map(Requirement, declared):
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin is not None, f"{requirement.name} is not in requirements.txt"
        assert requirement.specifier.contains(pin, prereleases=True), f"{requirement} excludes the lock's {pin}"


def one_sentence_warehouse(folder):
    warehouse = folder / "srlens.duckdb"
    load_treebank(warehouse, FIGURE1, "en_figure1")
    run_file = folder / "run.txt"
    run_file.write_text("I enjoyed my time at Franklin High School .\n")
    load_outputs(warehouse, run_file, "en_figure1", "me", "one")
    return warehouse


def test_a_build_asked_for_a_processor_takes_it(tmp_path, monkeypatch):
    warehouse = one_sentence_warehouse(tmp_path)
    monkeypatch.setenv("SRLENS_PROCESSOR", "stanza")
    assert choose_processor(warehouse) == ("stanza", "asked by $SRLENS_PROCESSOR")
    assert choose_processor(warehouse, "aligned") == ("aligned", "asked by --processor aligned")
    monkeypatch.setenv("SRLENS_PROCESSOR", "spacy")
    with pytest.raises(BuildError, match=r"unknown processor 'spacy' from \$SRLENS_PROCESSOR"):
        choose_processor(warehouse)


def test_a_new_warehouse_takes_stanza_with_models_and_a_built_one_keeps_its_processor(tmp_path, monkeypatch, capsys):
    require_shared()
    monkeypatch.delenv("SRLENS_PROCESSOR", raising=False)
    warehouse = one_sentence_warehouse(tmp_path)
    no_models = tmp_path / "no-models"
    no_models.mkdir()
    models = SHARED / "stanza"
    # Never built: stanza where it is installed (here) with models for every corpus's language.
    assert choose_processor(warehouse, stanza_dir=models) == (
        "stanza",
        "a new warehouse, and stanza is installed with models for en",
    )
    no_models_why = "a new warehouse, and stanza has no models for language 'en' (--stanza-dir)"
    assert choose_processor(warehouse, stanza_dir=no_models) == ("aligned", no_models_why)

    monkeypatch.setenv("SRLENS_STANZA_DIR", str(no_models))
    capsys.readouterr()
    build(warehouse, echo=True)
    assert capsys.readouterr().err.splitlines()[0] == f"srlens: processor aligned: {no_models_why}"  # the first line
    # Models now at hand: the warehouse keeps the processor of its figures (make build, then `srlens build`).
    assert choose_processor(warehouse, stanza_dir=models) == ("aligned", "the last build's; --processor changes it")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("select processor from meta.builds").fetchall() == [("aligned",)]
        assert con.execute("select count(*) from sentence_scores").fetchone()[0] == 1
    finally:
        con.close()


def tree_size(folder):
    """Bytes of the files under `folder` (links not followed), as `du -sb` counts them."""
    return sum(p.lstat().st_size for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink())


def file_digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def wheelhouse():
    """The lock as wheels, made once per content of requirements.txt (tests/support/wheel.py)."""
    return lock_wheelhouse()


@pytest.mark.slow
def test_a_plain_install_has_no_torch_and_builds_the_demo_with_aligned(wheel, wheelhouse, tmp_path):
    # a user's environment: none of this checkout's settings (PYTHONPATH would import the checkout)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SRLENS_", "DBT_")) and k not in ("PYTHONPATH", "DO_NOT_TRACK", "VIRTUAL_ENV")
    }
    env["SRLENS_CACHE_DIR"] = os.environ["SRLENS_CACHE_DIR"]  # the suite's own (conftest), not the user's
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python, srlens = venv / "bin" / "python", venv / "bin" / "srlens"
    # --isolated: no pip configuration of this machine (its indexes, links, constraints); only the wheelhouse
    pip = [sys.executable, "-m", "pip", "--python", python, "--isolated", "install", "--quiet", "--no-index"]
    run([*pip, "--find-links", wheelhouse, wheel], cwd=tmp_path, env=env)
    absent = "import importlib.util as u; print([m for m in ('torch', 'stanza', 'nltk') if u.find_spec(m)])"
    assert run([python, "-c", absent], cwd=tmp_path, env=env).strip() == "[]"
    where = run([python, "-c", "import srlens; print(srlens.__file__)"], cwd=tmp_path, env=env).strip()
    assert Path(where).is_relative_to(venv), where  # the wheel's srlens, not this checkout's
    plain_size = tree_size(venv)

    warehouse = tmp_path / "demo" / "srlens.duckdb"
    at = ["--warehouse", warehouse]
    run([srlens, *at, "load-demo"], cwd=tmp_path, env=env)
    built = subprocess.run([srlens, *at, "build"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    assert built.stderr.splitlines()[0] == (
        f"srlens: processor aligned: a new warehouse, and stanza is not installed ({EXTRA} to parse outputs)"
    )
    runs = run([srlens, *at, "query", "select count(*) from submission_scores", "--format", "csv"], tmp_path, env)
    assert runs.splitlines()[1] == "16"  # the demo: 2 corpora x (6 runs + 2 baselines)
    run([srlens, *at, "report", tmp_path / "report"], cwd=tmp_path, env=env)
    assert (tmp_path / "report" / "index.html").stat().st_size > 10_000

    # What needs stanza fails in one line that names the extra, and changes nothing.
    before = (file_digest(warehouse), sorted(p.name for p in warehouse.parent.iterdir()))
    for command, what in (
        (["build", "--processor", "stanza"], "a stanza build (asked by --processor stanza)"),
        (["parse", "--shard", "1/1", tmp_path / "shard.parquet"], "srlens parse"),
    ):
        done = subprocess.run([srlens, *at, *command], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode != 0 and done.stdout == ""
        assert done.stderr.splitlines() == [
            f"srlens: error: {what} needs stanza, which is not installed: {EXTRA} "
            "(or build with --processor aligned, which needs no model)"
        ]
        assert (file_digest(warehouse), sorted(p.name for p in warehouse.parent.iterdir())) == before
    assert not (tmp_path / "shard.parquet").exists()

    # The extra, from the same wheelhouse: stanza and torch (the lock's CPU build) come in.
    run([*pip, "--find-links", wheelhouse, f"srlens[stanza] @ {wheel.as_uri()}"], cwd=tmp_path, env=env)
    assert run([python, "-c", absent], cwd=tmp_path, env=env).strip() == "['torch', 'stanza']"
    full_size = tree_size(venv)
    print(f"\nvenv without pip: {plain_size / 1e6:.0f} MB plain, {full_size / 1e6:.0f} MB with srlens[stanza]")
    assert plain_size < full_size / 2  # torch is most of an environment
    # A built warehouse keeps its processor, stanza or not.
    again = subprocess.run([srlens, *at, "build"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert re.match(r"srlens: processor aligned: the last build's", again.stderr)
