"""The output folders of `srlens report` and `srlens docs`: the one check before writing into one.

A command writes only into a folder that is new, empty, or marked as its own by an earlier run (a
marker file): a folder of the user's, the root folder, or the warehouse's folder is refused, and so
is a symbolic link where the command writes a file (it would write through it, e.g. over the
warehouse). Each command has its own marker, so one never replaces the other's pages.
"""

from pathlib import Path


class OutDirError(ValueError):
    """An output folder a command will not write into: one line saying which and why."""


def check_out_dir(out, marker, what, warehouse=None, writes=()):
    """Refuse `out` unless it is new, empty or holds `marker`; `writes` are the names written into it.
    `what` names the folder in messages (e.g. 'report folder')."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutDirError(f"{what} {out}: is a file; name a folder")
    real = out.resolve()
    if real == Path(real.anchor):
        raise OutDirError(f"{what} {out}: is the root folder; name a folder of its own")
    if warehouse is not None and real == Path(warehouse).resolve().parent:
        raise OutDirError(f"{what} {out}: holds the warehouse {warehouse}; name a folder of its own")
    if out.is_dir() and not (out / marker).is_file() and any(out.iterdir()):
        raise OutDirError(
            f"{what} {out}: holds files srlens did not write (no {marker} marker); "
            "name a new or empty folder, or delete this one"
        )
    for name in (marker, *writes):
        if (out / name).is_symlink():
            raise OutDirError(f"{what} {out}: {name} is a symbolic link, which srlens never writes through; delete it")
