"""Building srlens's wheel as pip would from its sdist, and running commands that must succeed."""

import subprocess
import sys
import tarfile

from tests.conftest import REPO


def run(cmd, cwd, env=None):
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def build_wheel(out):
    """The sdist, unpacked, built into a wheel in `out`: what `pip install srlens` from an sdist gives."""
    run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", out], cwd=REPO)
    (sdist,) = out.glob("srlens-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(out / "src", filter="data")
    (source,) = (out / "src").iterdir()
    run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", out], cwd=source)
    (built,) = out.glob("srlens-*.whl")
    return built
