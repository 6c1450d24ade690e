"""The installed package works with no checkout: sdist -> wheel -> a fresh venv -> load, build, query, report.

The fresh venv gets the wheel and nothing else of srlens. Its dependencies are the pinned ones of
this environment, reached through a .pth line (a line of a .pth adds one folder to sys.path and
processes no further .pth files there, so this environment's editable install of the checkout
stays invisible). Everything runs from a temporary folder outside the checkout.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

DEMO = REPO / "demo" / "data"


def run(cmd, cwd, env=None):
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The sdist, unpacked, built into a wheel: what `pip install srlens` from an sdist gives."""
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", out], cwd=REPO)
    (sdist,) = out.glob("srlens-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(out / "src", filter="data")
    (source,) = (out / "src").iterdir()
    run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", out], cwd=source)
    (built,) = out.glob("srlens-*.whl")
    return built


def test_the_wheel_has_one_import_name_and_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    dist_info = {top for top in tops if top.endswith(".dist-info")}
    assert tops == {"srlens"} | dist_info and len(dist_info) == 1, tops  # no top-level loaders/ or udfs/
    for needed in (
        "srlens/loaders/load.py",
        "srlens/udfs/plugin.py",
        "srlens/sql/raw_schema.sql",
        "srlens/dbt_project/dbt_project.yml",
        "srlens/dbt_project/profiles.yml",
        "srlens/demo_data/manifest.csv",
        "srlens/demo_data/LICENSE.txt",
        "srlens/report/assets/report.js",
        "srlens/report/assets/report.css",
    ):
        assert needed in names, needed
    assert not [n for n in names if "/target/" in n or "/logs/" in n or "__pycache__" in n]


def test_a_fresh_venv_runs_load_build_query_and_report_from_elsewhere(wheel, tmp_path):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    site = Path(
        run(
            [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path
        ).strip()
    )
    (site / "_srlens_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target", site, wheel],
        cwd=tmp_path,
    )
    python = venv / "bin" / "python"
    package = site / "srlens"
    assert run([python, "-c", "import srlens.loaders.load as m; print(m.__file__)"], cwd=tmp_path).strip() == str(
        package / "loaders" / "load.py"
    )

    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(DEMO / "treebanks" / "en_ewt_demo.conllu", work / "ref.conllu")
    shutil.copy(DEMO / "outputs" / "en_ewt_demo" / "swaps.sr.txt", work / "run.sr")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SRLENS_DBT_PROJECT")}
    env["SRLENS_WAREHOUSE"] = str(work / "w.duckdb")
    before = sorted(
        (p.relative_to(package), p.stat().st_mtime_ns) for p in package.rglob("*") if "__pycache__" not in p.parts
    )
    srlens = [python, "-m", "srlens.cli"]
    run([*srlens, "load-treebank", "ref.conllu", "--corpus", "en_test"], cwd=work, env=env)
    run([*srlens, "load-outputs", "run.sr", "--corpus", "en_test", "--team", "t", "--run", "swaps"], cwd=work, env=env)
    run([*srlens, "build", "--processor", "aligned"], cwd=work, env=env)
    out = run(
        [*srlens, "query", "select sentences, round(dea, 6) as dea from submission_scores", "--format", "csv"],
        cwd=work,
        env=env,
    )
    assert out.splitlines()[0] == "sentences,dea" and out.splitlines()[1].startswith("200,")
    run([*srlens, "report", "report"], cwd=work, env=env)
    assert (work / "report" / "index.html").stat().st_size > 10_000
    assert (work / "report" / "report.js").is_file() and any((work / "report" / "runs").glob("*.html"))
    # dbt's target and logs went beside the warehouse; nothing was written into the package
    after = sorted(
        (p.relative_to(package), p.stat().st_mtime_ns) for p in package.rglob("*") if "__pycache__" not in p.parts
    )
    assert after == before
