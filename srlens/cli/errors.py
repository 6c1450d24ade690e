"""How a failed command is told to the user: the errors that are theirs to fix, and database errors
in one line with what to do."""

import sys

from srlens.loaders.errors import LoadError

# The errors that are the user's to fix: one line, exit code 2. Each is looked up only if its module
# was imported: a module that never ran raised nothing, and importing them all would make every
# command pay for duckdb, pyarrow and dbt.
USER_ERRORS = (
    ("srlens.build", "BuildError"),
    ("srlens.sandbox", "QueryRefused"),
    ("srlens.processing", "ProcessingError"),
    ("srlens.baseline", "BaselineError"),
)


def user_errors():
    imported = (getattr(sys.modules[module], name) for module, name in USER_ERRORS if module in sys.modules)
    return (LoadError, ValueError, OSError, *imported)


def describe(err, warehouse):
    """A database error as one line, with what to do for the usual causes."""
    import duckdb  # noqa: PLC0415 (an error happened: the command had imported it, if it used it)

    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    line = first if isinstance(err, duckdb.Error) else f"{type(err).__name__}: {first}"
    if isinstance(err, duckdb.CatalogException) and _not_built(warehouse):
        line += " (the warehouse is not built yet: run srlens build)"
    elif isinstance(err, duckdb.PermissionException):
        line += " (queries read the warehouse only: no other file, extension or setting)"
    elif "Conflicting lock" in first:
        line += " (another program has the warehouse open, e.g. a BI tool or a load: close it or wait)"
    return line


def _not_built(warehouse):
    import duckdb  # noqa: PLC0415

    from srlens import sandbox  # noqa: PLC0415
    from srlens.status import mart_names  # noqa: PLC0415

    try:
        con = sandbox.connect(warehouse)
    except (duckdb.Error, OSError):
        return False
    try:
        return not mart_names(con)
    finally:
        con.close()
