"""`srlens status`: what a warehouse holds, read-only: corpora, runs, judgments, rules, last build."""

import json
from pathlib import Path

from srlens import build_vars, sandbox
from srlens.loaders.errors import printable

# WarehouseError and require_warehouse are re-exported: report, export and docs import them from here;
# their home is loaders/store.py.
from srlens.loaders.store import OLDEST_READER, STORAGE_VERSION, WarehouseError, require_warehouse  # noqa: F401

# The tag DuckDB gives a file in srlens's storage format (v1.0.0 and v1.1.0 share it).
STORAGE_TAG = "v1.0.0+"


def open_read_only(warehouse, writable_dir=None):
    """A read-only connection to an existing warehouse: the sandbox of srlens/sandbox.py."""
    return sandbox.connect(require_warehouse(warehouse), writable_dir)


def mart_names(con):
    """The tables of the main schema: the marts (SPEC section 11), empty before the first build."""
    return [
        r[0]
        for r in con.execute("""
        select table_name from duckdb_tables()
        where database_name = current_database() and schema_name = 'main' and not internal
        order by table_name""").fetchall()
    ]


def _has(con, schema, table):
    return (
        con.execute(
            """select count(*) from duckdb_tables()
                          where database_name = current_database() and schema_name = ? and table_name = ?""",
            [schema, table],
        ).fetchone()[0]
        > 0
    )


def _frame(con, schema, table, sql):
    """The query's result, or None when the warehouse has no such table (e.g. written by an older srlens)."""
    return con.execute(sql).df() if _has(con, schema, table) else None


def collect(warehouse):
    """Everything `srlens status` shows, as data."""
    con = open_read_only(warehouse)
    try:
        tags = con.execute("select tags from duckdb_databases() where database_name = current_database()").fetchone()[0]
        info = {
            "warehouse": str(warehouse),
            "bytes": Path(warehouse).stat().st_size,
            "storage_version": dict(tags or {}).get("storage_version"),
            "corpora": _frame(
                con,
                "raw",
                "treebank_files",
                """
                select corpus, language, sentences, words, loaded_at
                from raw.treebank_files order by corpus""",
            ),
            "submissions": _frame(
                con,
                "raw",
                "submissions",
                """
                select campaign, corpus, count(*) as runs, sum(sentences)::bigint as sentences,
                       sum(missing)::bigint as missing
                from raw.submissions group by campaign, corpus order by campaign, corpus""",
            ),
            "reference_free": _frame(
                con,
                "raw",
                "reference_free_corpora",
                """
                select c.corpus, c.language, count(s.submission_id) as runs, c.created_at as loaded_at
                from raw.reference_free_corpora c left join raw.submissions s using (corpus)
                group by all order by c.corpus""",
            ),
            "campaign_dates": _frame(
                con,
                "raw",
                "campaign_dates",
                """
                select campaign, date_text as date from raw.campaign_dates order by campaign_date, campaign""",
            ),
            "system_human_scores": _count(con, "raw", "system_human_scores"),
            "rule_parsers": _rule_parsers(con),
            "human_judgments": _count(con, "raw", "human_judgments"),
            "manual_rules": _count(con, "raw", "lambre_manual_rules"),
            "parsed_texts": _count(con, "cache", "parsed_texts"),
            "chunked": _chunked(con),
            "marts": len(mart_names(con)),
            "builds": _frame(con, "meta", "builds", "select * from meta.builds order by started_at"),
        }
        last = info["builds"].iloc[-1] if info["builds"] is not None and len(info["builds"]) else None
        info["last_build"] = last
        info["loads_since_build"] = _loads_since(con, last["started_at"]) if last is not None else None
    finally:
        con.close()
    return info


def _count(con, schema, table):
    return con.execute(f"select count(*) from {schema}.{table}").fetchone()[0] if _has(con, schema, table) else 0


def _rule_parsers(con):
    """Which parser produced the parses whose L'AMBRE rules were checked: (processor, runs) of the
    runs with a rule score, or None before a build that says."""
    if not _has(con, "main", "submission_scores"):
        return None
    return con.execute("""select processor, count(*) from submission_scores where rule_score is not null
                          group by processor order by processor""").fetchall()


def _chunked(con):
    """Output sentences parsed in chunks (too long to parse whole), or None before a build that says."""
    columns = con.execute("""select count(*) from duckdb_columns() where database_name = current_database()
                             and schema_name = 'main' and table_name = 'sentence_scores'
                             and column_name = 'processing_status'""").fetchone()[0]
    if not columns:
        return None
    return con.execute("select count(*) from sentence_scores where processing_status = 'chunked'").fetchone()[0]


def _loads_since(con, started_at):
    """Loads that finished after the build started (loads wait for a running build, so after it)."""
    # One load writes one timestamp: a judgment or rule file counts once, not once per row.
    parts = [
        ("raw", "treebank_files", "corpus", "loaded_at"),
        ("raw", "submissions", "submission_id", "loaded_at"),
        ("raw", "human_judgments", "source_file", "loaded_at"),
        ("raw", "system_human_scores", "source_file", "loaded_at"),
        ("raw", "lambre_manual_rules", "source_file", "loaded_at"),
        ("raw", "campaign_dates", "campaign", "set_at"),
    ]
    return sum(
        con.execute(
            f"select count(distinct ({key}, {at})) from {schema}.{table} where {at} > ?", [started_at]
        ).fetchone()[0]
        for schema, table, key, at in parts
        if _has(con, schema, table)
    )


def _when(value):
    import pandas as pd  # noqa: PLC0415 (the command line imports this module for require_warehouse)

    return f"{pd.Timestamp(value):%Y-%m-%d %H:%M:%S} UTC"


def terminal_safe(frame):
    """A table for the terminal: text from the data (an output sentence, a name in an old warehouse)
    is shown with control characters escaped, so it can never move the cursor or retitle the window.
    CSV and JSON stay as they are: they are data for programs."""
    return frame.rename(columns=printable).map(lambda v: printable(v) if isinstance(v, str) else v)


def _table(frame, indent="  "):
    frame = frame.copy()
    if "loaded_at" in frame:
        frame["loaded_at"] = frame["loaded_at"].map(_when)
    return "\n".join(indent + line for line in terminal_safe(frame).to_string(index=False).splitlines())


def status(warehouse):
    """The status report as text."""
    info = collect(warehouse)
    lines = [
        f"warehouse: {info['warehouse']} ({info['bytes'] / 1e6:.1f} MB, DuckDB storage format "
        f"{info['storage_version'] or 'unknown'})"
    ]
    lines += _reader_lines(info)
    corpora, submissions = info["corpora"], info["submissions"]
    if corpora is None or not len(corpora):
        lines.append("corpora: none loaded (srlens load-treebank FILE --corpus NAME, or srlens load-demo)")
    else:
        lines += [f"corpora: {len(corpora)}", _table(corpora)]
    if submissions is None or not len(submissions):
        lines.append("runs: none loaded (srlens load-outputs FILE --corpus NAME --team T --run R)")
    else:
        lines += [f"runs: {int(submissions['runs'].sum())}, by campaign and corpus", _table(submissions)]
    if info["reference_free"] is not None and len(info["reference_free"]):
        lines += [
            (
                f"reference-free corpora: {len(info['reference_free'])} (runs loaded with --no-reference; "
                "no reference-based scores)"
            ),
            _table(info["reference_free"]),
        ]
    if info["campaign_dates"] is not None and len(info["campaign_dates"]):
        lines.append(
            "campaign dates: "
            + ", ".join(f"{printable(c)} {d}" for c, d in info["campaign_dates"].itertuples(index=False))
        )
    lines.append(f"human judgments: {info['human_judgments']}")
    if info["system_human_scores"]:
        lines.append(f"system-level human scores: {info['system_human_scores']}")
    lines.append(f"manual rules: {info['manual_rules']}")
    lines.append(f"parse cache: {info['parsed_texts']} texts")
    if info["chunked"] is not None:
        lines.append(
            f"long outputs: {info['chunked']} sentences parsed in chunks "
            "(sentence_scores.processing_status = 'chunked')"
        )
    if info["rule_parsers"]:
        lines.append(
            "rule scores (L'AMBRE) parsed by: "
            + ", ".join(f"{printable(p)} ({n} run{'s' if n != 1 else ''})" for p, n in info["rule_parsers"])
            + "; they are only as good as that parser (docs/lambre.md)"
        )
    lines += _build_lines(info)
    return "\n".join(lines) + "\n"


def _reader_lines(info):
    """Which DuckDB releases open the file, as far as the storage tag and the last build tell
    (docs/duckdb-compatibility.md)."""
    tag, last = info["storage_version"], info["last_build"]
    if tag and tag != STORAGE_TAG:
        return [
            f"  readers: DuckDB {tag.strip('v+')} and later only (srlens writes {STORAGE_TAG}, storage version "
            f"{STORAGE_VERSION}, which DuckDB {OLDEST_READER} opens; docs/querying.md, 'Which DuckDB versions can "
            "open it', says how to copy the file into it)"
        ]
    if last is None or tag is None:
        return []
    oldest = last.get("oldest_reader")
    if isinstance(oldest, str):
        return [f"  readers: DuckDB {oldest} and later (the oldest release srlens's builds are tested to open in)"]
    return [
        "  readers: DuckDB 1.4.2 and later; 1.1.0 to 1.4.1 may refuse it (an older srlens built it, "
        "letting DuckDB reuse metadata): srlens build rewrites it for them"
    ]


def _parsed_on(last, models):
    """Where the last build's stanza parsed: the device, or that every text was cached."""
    device = last.get("stanza_device")
    if isinstance(device, str):
        return f"; this build parsed on {device}"
    return "; this build parsed nothing (every text was cached)" if models and "stanza_device" in last else ""


def _build_lines(info):
    last = info["last_build"]
    if last is None:
        if info["marts"]:  # built by an srlens from before builds were recorded
            return [f"last build: not recorded ({info['marts']} marts present); srlens build records one"]
        return ["last build: not built yet; run srlens build"]
    dbt_vars = json.loads(last["dbt_vars"])
    models = dbt_vars.get("stanza_processors") or {}
    # The vars a user set to something else than the default (a build passes dbt every var).
    user_vars = {
        v.name: dbt_vars[v.name] for v in build_vars.user_vars() if v.name in dbt_vars and dbt_vars[v.name] != v.default
    }
    lines = [
        f"last build: {_when(last['started_at'])}, {last['seconds']:.1f} s, "
        f"{'full' if last.get('full_refresh', True) else 'incremental (changed runs only)'}, "
        f"processor {last['processor']}, {last['models']} models and {last['tests']} tests",
        "  stanza models: "
        + (
            ", ".join(f"{lang} {pid}" for lang, pid in sorted(models.items()))
            or "none (no output was parsed by stanza)"
        )
        + _parsed_on(last, models),
        f"  versions: srlens {last['srlens_version']}, dbt-core {last['dbt_version']}, duckdb {last['duckdb_version']}",
        "  signature: "
        + (
            last.get("signature")
            if isinstance(last.get("signature"), str)
            else "not recorded (built before srlens recorded signatures)"
        ),
    ]
    if user_vars:
        lines.append("  vars: " + ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(user_vars.items())))
    loads = info["loads_since_build"]
    lines.append(
        f"  stale: {loads} load{'s' if loads != 1 else ''} since the last build; run srlens build"
        if loads
        else "  up to date: nothing loaded since the last build"
    )
    return lines
