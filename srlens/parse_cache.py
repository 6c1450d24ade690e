"""dbt's parsed project, shared between warehouses: a new warehouse's first build skips dbt's full parse.

dbt keeps its parse of the project in target/partial_parse.msgpack of a warehouse's work folder, and
reuses it there from the second build on. Parsing the project from scratch takes about 6 s of a first
build (docs/performance.md, "Building"). This module keeps the last such file per
project folder, build vars and warehouse name in the user's cache folder, and gives it to a work folder
that has none. dbt itself decides whether the file fits: it checks its version, the vars, the profile
and every file of the project against what the file was made from, and parses again what changed (or
everything, if the file is unreadable), but not that a file holds what dbt wrote: so only files of the
user's own that no one else may write are used. Any error of the cache is ignored: it only saves time;
`build --full-refresh` does not use it.

Folder: $SRLENS_CACHE_DIR, else $XDG_CACHE_HOME/srlens, else ~/.cache/srlens; at most KEEP files.
"""

import contextlib
import grp
import hashlib
import json
import os
import pwd
import shutil
import stat
import tempfile
from importlib import metadata
from pathlib import Path

PARSE_FILE = "partial_parse.msgpack"
KEEP = 32  # about 1.2 MB each


def cache_folder():
    if os.environ.get("SRLENS_CACHE_DIR"):
        return Path(os.environ["SRLENS_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "srlens"


def cached_parse(project_dir, dbt_vars, building, memory_limit):
    """The cache file for this project folder, these vars and this profile (the copy's name, the memory
    limit: dbt starts again from scratch when the profile differs) and dbt; None if there is no cache
    folder (no home folder)."""
    key = [str(Path(project_dir).resolve()), dbt_vars, Path(building).name, memory_limit, metadata.version("dbt-core")]
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    try:
        return cache_folder() / "dbt-parse" / f"{digest}.msgpack"
    except RuntimeError:  # Path.home() of a user without one
        return None


def trusted(path):
    """dbt builds whatever SQL a parse holds: only a file of this user's that no one else may write."""
    st = path.stat()
    group_writes = st.st_mode & stat.S_IWGRP and not own_group(st.st_gid)
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not (st.st_mode & stat.S_IWOTH or group_writes)


def own_group(gid):
    """A group of the user alone: the user's primary group, named after the user (a "user private
    group", where Debian and Ubuntu's umask 002 makes the files dbt writes group-writable)."""
    try:
        group, user = grp.getgrgid(gid), pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return False
    return gid == os.getgid() and group.gr_name == user and not set(group.gr_mem) - {user}


def give(cached, target_dir):
    """Copy the cached parse into target_dir if it has none."""
    own = Path(target_dir) / PARSE_FILE
    try:
        if cached is None or own.exists() or not cached.exists() or not trusted(cached):
            return
        own.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cached, own)
    except OSError:
        with contextlib.suppress(OSError):
            own.unlink(missing_ok=True)


def keep(cached, target_dir):
    """Store target_dir's parse as the cached one (a whole file or none: written aside, then renamed).
    Only a parse no one else may have written: from the cache it would reach every warehouse the user
    builds next. A cached entry that is not trusted (another's, writable by others, a FIFO that would
    block the read) is replaced, not read."""
    own = Path(target_dir) / PARSE_FILE
    partial = None
    try:
        if cached is None or not own.exists() or not trusted(own):
            return
        if cached.exists() and trusted(cached) and cached.read_bytes() == own.read_bytes():
            os.utime(cached)  # recently used: the last to be dropped
            return
        cached.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=cached.parent, prefix=".partial-")  # mode 0600
        with os.fdopen(fd, "wb") as out, open(own, "rb") as src:
            shutil.copyfileobj(src, out)
        os.replace(partial, cached)
        partial = None
        for old in sorted(cached.parent.glob("*.msgpack"), key=lambda p: p.stat().st_mtime)[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
    finally:
        if partial is not None:
            with contextlib.suppress(OSError):
                os.unlink(partial)
