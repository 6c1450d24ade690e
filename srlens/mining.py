"""Error mining (SPEC section 8) from Python: the failing sentences that contain a subtree.

The query is the analyst recipe sql/examples/suspicious_subtree_examples.sql itself; only its
`params` CTE (the literals an analyst edits) is replaced by bound parameters.
"""

import re

from srlens import sandbox
from srlens.definitions import MINING_VIEWS
from srlens.paths import SQL_EXAMPLES_DIR

EXAMPLES_SQL = SQL_EXAMPLES_DIR / "suspicious_subtree_examples.sql"
VIEWS = MINING_VIEWS

# The recipe's first CTE, `with params as (select ... \n),`: up to the first line starting with `),`.
_PARAMS_CTE = re.compile(r"with params as \(\n.*?\n\),", re.S)
_BOUND_PARAMS = (
    "with params as (\n    select $view::varchar as view, $subtree::varchar as subtree, "
    "$submission_id::varchar as submission_id, $per_submission::integer as per_submission\n),"
)


def examples_query():
    """The recipe's SQL with its literals replaced by $view, $subtree, $submission_id, $per_submission."""
    sql, found = _PARAMS_CTE.subn(lambda _: _BOUND_PARAMS, EXAMPLES_SQL.read_text(), count=1)
    if not found:
        raise RuntimeError(f"{EXAMPLES_SQL} no longer starts with the `with params as (...)` CTE")
    return sql


def subtree_examples(warehouse, view, subtree, submission_id=None, limit=20):
    """Failing sentences containing `subtree` (written as in suspicious_subtrees) under `view`.

    One row per submission and failing sentence, at most `limit` sentences per submission (the
    lowest scores first); `submission_id` restricts to one submission. Columns: submission_id,
    team, run, sent_id, score, threshold, reference_text, output_text, positions (one list of
    analysis positions per occurrence, top word first), subtree_words (the reference forms at
    those positions), suspicion and is_suspicious of the subtree in that submission (NULL when
    the subtree is below mining_min_support there). Runs in the read-only sandbox
    (srlens/sandbox.py); the user's text reaches the SQL only as bound parameters.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r} (one of {', '.join(VIEWS)})")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"limit must be a positive whole number, got {limit!r}")
    query = sandbox.check_read_only(examples_query())
    params = {"view": view, "subtree": subtree, "submission_id": submission_id, "per_submission": limit}
    con = sandbox.connect(warehouse)
    try:
        return sandbox.interruptible(con, lambda: con.execute(query, params).df())
    finally:
        con.close()
