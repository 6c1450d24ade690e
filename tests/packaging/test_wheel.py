"""The installed package works with no checkout: sdist -> wheel -> a fresh venv -> README's steps.

The fresh venv gets the wheel (installed by pip, so its `srlens` command too) and nothing else of
srlens. Its dependencies are the pinned ones of this environment: its site-packages folders, reached
through a .pth file (a line of a .pth adds one folder to sys.path and processes no further .pth files
there, so this environment's editable install of the checkout stays invisible). The commands of
README's "Your own data" block run as written, from a temporary folder outside the checkout, then
status, report and docs.
"""

import os
import re
import shlex
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, SHARED, require_shared
from tests.support.wheel import build_wheel, run

pytestmark = pytest.mark.slow  # the wheel: sdist, wheel, a fresh venv and a build in it

DEMO = REPO / "demo" / "data"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return build_wheel(tmp_path_factory.mktemp("dist"))


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


def readme_own_data_commands():
    """The srlens commands of README's "Your own data" code block, as argument lists."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Your own data\n\n```sh\n(.*?)^```", readme, re.M | re.S).group(1)
    return [shlex.split(line) for line in block.splitlines() if line.startswith("srlens ")]


def test_a_fresh_venv_runs_the_readme_steps_from_elsewhere(wheel, tmp_path):
    require_shared()  # README's `srlens build` parses with stanza: the shared English models
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path).strip())
    deps = [p for p in sys.path if Path(p).name == "site-packages" and Path(p).is_dir()]
    (site / "_srlens_test_deps.pth").write_text("".join(f"{p}\n" for p in deps))
    run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "--quiet", wheel],
        tmp_path,
    )
    package = site / "srlens"
    srlens = venv / "bin" / "srlens"
    assert srlens.is_file()  # the console script, as `. .venv/bin/activate; srlens ...` uses it
    assert run([python, "-c", "import srlens.loaders.load as m; print(m.__file__)"], cwd=tmp_path).strip() == str(
        package / "loaders" / "load.py"
    )

    work = tmp_path / "elsewhere"
    work.mkdir()
    commands = readme_own_data_commands()
    assert [c[:2] for c in commands] == [
        ["srlens", "load-treebank"],
        ["srlens", "load-outputs"],
        ["srlens", "build"],
        ["srlens", "query"],
        ["srlens", "report"],
    ], commands
    # README's file names: a UD treebank and a run as plain text, one sentence a line
    treebank, outputs = commands[0][2], commands[1][2]
    shutil.copy(DEMO / "treebanks" / "en_ewt_demo.conllu", work / treebank)
    run_text = (DEMO / "outputs" / "en_ewt_demo" / "swaps.sr.txt").read_text(encoding="utf-8")
    (work / outputs).write_text(
        "".join(line[len("# text = ") :] + "\n" for line in run_text.splitlines() if line.startswith("# text = ")),
        encoding="utf-8",
    )
    # a user's environment: none of this checkout's settings, srlens's own defaults for dbt
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SRLENS_", "DBT_")) and k not in ("PYTHONPATH", "DO_NOT_TRACK", "VIRTUAL_ENV")
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # . .venv/bin/activate
    env["SRLENS_STANZA_DIR"] = str(SHARED / "stanza")  # offline models (README: SRLENS_STANZA_DIR)
    before = sorted(
        (p.relative_to(package), p.stat().st_mtime_ns) for p in package.rglob("*") if "__pycache__" not in p.parts
    )
    outs = [run([srlens, *command[1:]], cwd=work, env=env) for command in commands]
    assert (work / "warehouse" / "srlens.duckdb").is_file()  # the default warehouse, under the current folder
    assert "en_ewt_test" in outs[3] and "200" in outs[3]  # select * from corpus_stats

    query = [srlens, "query", "select sentences, round(dea, 6) as dea, signature from submission_scores"]
    out = run([*query, "--format", "csv"], cwd=work, env=env).splitlines()
    assert out[0] == "sentences,dea,signature" and out[1].startswith("200,"), out
    signature = out[1].split(",", 2)[2]
    assert re.fullmatch(r"srlens:[^|]+\|proc:stanza-[0-9.]+/en/[0-9a-f]{8}\|bleu:nltk-[0-9.]+/m2\|.*", signature)
    assert f"  signature: {signature}" in run([srlens, "status"], cwd=work, env=env).splitlines()

    run([srlens, "report", "report"], cwd=work, env=env)
    index = (work / "report" / "index.html").read_text(encoding="utf-8")
    assert len(index) > 10_000 and f"signature {signature}" in index
    assert (work / "report" / "report.js").is_file() and any((work / "report" / "runs").glob("*.html"))
    run([srlens, "docs", "site"], cwd=work, env=env)
    assert "sentence_scores" in (work / "site" / "index.html").read_text(encoding="utf-8")

    # dbt's target and logs went beside the warehouse; nothing was written into the package
    assert (work / "warehouse" / ".srlens.duckdb.dbt" / "target").is_dir()
    after = sorted(
        (p.relative_to(package), p.stat().st_mtime_ns) for p in package.rglob("*") if "__pycache__" not in p.parts
    )
    assert after == before
