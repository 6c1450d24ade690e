"""Building srlens's wheel as pip would from its sdist, the lock as wheels, and running commands that
must succeed."""

import hashlib
import shutil
import subprocess
import sys
import tarfile

from tests.conftest import REPO
from tests.support.old_readers import cache_dir


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


def lock_wheelhouse():
    """requirements.txt as wheels (pip wheel builds those published only as sources), made once per
    content of the lock and kept in the suite's cache ($SRLENS_TEST_CACHE, tests/support/old_readers.py):
    a user's install resolves from it with --no-index, so it needs no index and takes the lock's versions."""
    lock = (REPO / "requirements.txt").read_bytes()
    house = cache_dir() / f"wheelhouse-{hashlib.sha256(lock).hexdigest()[:16]}"
    if house.is_dir():
        return house
    partial = house.with_name(house.name + ".partial")  # an interrupted pip wheel is never taken for a made one
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "-r", REPO / "requirements.txt", "-w", partial], cwd=partial)
    partial.rename(house)
    return house
