"""Loading human judgments (SPEC section 10, `srlens load-human FILE`).

The file is CSV with a header naming at least annotator, team, run, corpus,
sent_id, criterion and score; a campaign column is optional (default
'default', like load-outputs). Other columns are ignored. One row is one
score given by one annotator to one output sentence on one criterion.

All of it is validated before anything is written: a score that is not a
finite number, an empty field, the same judgment twice, or a judgment naming a
corpus, run or sentence that is not loaded is an error (all offenders are
listed, with line numbers), never dropped.

Replacement: the file replaces, in one transaction, every judgment of each
(campaign, corpus, team, run, annotator, criterion) set it contains. So loading
the same file twice leaves one copy, a corrected file replaces its
predecessor whatever its name, and files split by annotator or by run add up.
An annotator's judgments of a run on a criterion therefore belong in one file.

A judgment describes one text: the sha256 of the output text it judged is kept
(text_sha256). When a reload of the run changes or removes that text,
load_outputs deletes the judgment in its own transaction
(`drop_judgments_of_changed_texts`), and the build never attaches a judgment
whose hash is not the output's.

The campaign, corpus, team and run of every row must be valid names
(loaders/names.py), like the arguments of load-outputs.

System level (`load-human FILE --level system`, `load_system_human`):
one score per run and criterion (campaign, corpus, team, run, criterion, score,
optional orientation higher|lower, and no other column: a sentence-level file
is refused), validated the same way; a file replaces the
(run, criterion) scores it names. docs/lambre.md says how they are used.
"""

import csv
import io
import math
import re

from srlens.loaders.conllu_reader import read_text
from srlens.loaders.errors import LoadError
from srlens.loaders.names import NameRefused, check_name, submission_id
from srlens.loaders.store import insert_columns, open_for_write, transaction, utc_now

REQUIRED = ("annotator", "team", "run", "corpus", "sent_id", "criterion", "score")
OPTIONAL = {"campaign": "default"}
REPLACEMENT_KEY = ("campaign", "corpus", "team", "run", "annotator", "criterion")
SHOWN = 10  # offenders listed in one error message


# A decimal number in ASCII digits (e.g. 5, -0.25, 1e3): float() also takes 1_000, fullwidth digits, inf and nan.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_score(text):
    """The score `text` as a finite float, or None when it is not a plain decimal number."""
    if not _NUMBER.fullmatch(text):
        return None
    score = float(text)
    return score if math.isfinite(score) else None


def _error(path, problems):
    """One LoadError listing the first offenders; its line is the first offender's."""
    problems = sorted(problems)
    shown = "; ".join(f"line {line}: {text}" for line, text in problems[:SHOWN])
    more = f"; ... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return LoadError(path, f"{len(problems)} problem(s): {shown}{more}", problems[0][0])


def read_human_csv(path):
    """Column lists of the judgments in `path` (criterion and all fields stripped), validated."""
    text, _ = read_text(path)
    if not text.strip():
        raise LoadError(path, "the file is empty")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        return _read_rows(path, reader)
    except csv.Error as err:  # e.g. a quoted field never closed
        raise LoadError(path, f"malformed CSV: {err}", reader.line_num) from None


def read_header(path, reader, required, optional, columns, others_ignored=False):
    """The header's first row: {name: index} of the known columns (required and optional names,
    stripped, lower-cased). Refused in one line naming the file (line 1): a required column absent,
    a column named twice (which one holds the value?), and, unless `others_ignored`, a column
    the file cannot have. `columns` says what the file has, for the message. The one header check
    of the CSV loaders (human judgments, system-level scores, campaign manifests)."""
    header = [name.strip().lower() for name in next(reader, [])]
    absent = [name for name in required if name not in header]
    if absent:
        raise LoadError(path, f"the header lacks the column(s) {', '.join(absent)} ({columns})", 1)
    known = (*required, *optional)
    duplicated = sorted({name for name in header if header.count(name) > 1 and (name in known or not others_ignored)})
    if duplicated:
        raise LoadError(path, f"the header names {', '.join(map(repr, duplicated))} more than once", 1)
    unknown = [name for name in header if name not in known]
    if unknown and not others_ignored:
        unknown = ", ".join(map(repr, unknown))
        raise LoadError(path, f"the header has the column(s) {unknown}, unknown here ({columns})", 1)
    return {name: header.index(name) for name in known if name in header}, len(header)


def _read_rows(path, reader):
    position, width = read_header(
        path, reader, REQUIRED, OPTIONAL, f"needs {', '.join(REQUIRED)}; campaign is optional", others_ignored=True
    )
    columns = {name: [] for name in (*REPLACEMENT_KEY, "sent_id", "score", "line_no")}
    problems, seen = [], {}
    for row in reader:
        line = reader.line_num
        if not any(field.strip() for field in row):
            continue  # blank line
        if len(row) != width:
            problems.append((line, f"expected {width} fields, found {len(row)}"))
            continue
        values = {name: row[i].strip() for name, i in position.items()}
        for name, default in OPTIONAL.items():
            values[name] = values.get(name) or default
        empty = [name for name in REQUIRED if not values[name]]
        if empty:
            problems.append((line, f"empty {', '.join(empty)}"))
            continue
        try:
            for name in ("campaign", "corpus", "team", "run"):
                values[name] = check_name(values[name], name)
        except NameRefused as err:
            problems.append((line, str(err)))
            continue
        score = parse_score(values["score"])
        if score is None:
            problems.append((line, f"score {values['score']!r} is not a number"))
            continue
        key = (
            values["campaign"],
            values["corpus"],
            values["team"],
            values["run"],
            values["annotator"],
            values["criterion"].lower(),
            values["sent_id"],
        )  # criteria compare lower-cased
        if key in seen:
            problems.append(
                (
                    line,
                    f"the same judgment as line {seen[key]} (annotator {values['annotator']!r}, "
                    f"sentence {values['sent_id']!r}, criterion {values['criterion']!r})",
                )
            )
            continue
        seen[key] = line
        for name in (*REPLACEMENT_KEY, "sent_id"):
            columns[name].append(values[name])
        columns["score"].append(score)
        columns["line_no"].append(line)
    if problems:
        raise _error(path, problems)
    if not columns["score"]:
        raise LoadError(path, "the file has a header but no judgments")
    return columns


def _unknown_references(con, columns):
    """(line, text) for every judgment whose corpus, run or sentence is not loaded."""
    corpora = {r[0] for r in con.execute("select corpus from raw.treebank_files").fetchall()}
    reference_free = {r[0] for r in con.execute("select corpus from raw.reference_free_corpora").fetchall()}
    runs = {r[0] for r in con.execute("select submission_id from raw.submissions").fetchall()}
    wanted = set(zip(columns["corpus"], columns["sent_id"]))
    sentences = {}
    for corpus in {c for c, _ in wanted if c in corpora}:
        sentences[corpus] = {
            r[0] for r in con.execute("select sent_id from raw.sentences where corpus = ?", [corpus]).fetchall()
        }
    for corpus in {c for c, _ in wanted if c in reference_free}:  # its sentences are its runs'
        sentences[corpus] = {
            r[0]
            for r in con.execute(
                "select distinct o.sent_id from raw.outputs o join raw.submissions s using (submission_id) "
                "where s.corpus = ?",
                [corpus],
            ).fetchall()
        }
    corpora |= reference_free
    missing_outputs = {
        tuple(r) for r in con.execute("select submission_id, sent_id from raw.outputs where is_missing").fetchall()
    }
    problems = []
    for i, line in enumerate(columns["line_no"]):
        campaign, corpus, team, run, sent_id = (
            columns[name][i] for name in ("campaign", "corpus", "team", "run", "sent_id")
        )
        sub_id = submission_id(campaign, corpus, team, run)
        if corpus not in corpora:
            problems.append((line, f"unknown corpus {corpus!r}"))
        elif sent_id not in sentences[corpus]:
            problems.append((line, f"unknown sentence {sent_id!r} of corpus {corpus!r}"))
        elif sub_id not in runs:
            problems.append((line, f"unknown run {sub_id!r} (campaign/corpus/team/run)"))
        elif (sub_id, sent_id) in missing_outputs:
            problems.append((line, f"run {sub_id!r} has no output for sentence {sent_id!r}"))
    return problems


def load_human(warehouse, path):
    """Load (or replace) the human judgments of a CSV file; returns the number of judgments."""
    import pyarrow as pa  # noqa: PLC0415 (load-outputs imports this module: it stays free of pyarrow)

    columns = read_human_csv(path)
    n = len(columns["score"])
    with open_for_write(warehouse) as con:
        problems = _unknown_references(con, columns)
        if problems:
            raise _error(path, problems)
        keys = sorted({tuple(columns[name][i] for name in REPLACEMENT_KEY) for i in range(n)})
        judged = pa.table(
            {
                **columns,
                "submission_id": [
                    submission_id(*(columns[name][i] for name in ("campaign", "corpus", "team", "run")))
                    for i in range(n)
                ],
            }
        )
        with transaction(con):
            con.register(
                "_srlens_human_keys", pa.table({name: [k[j] for k in keys] for j, name in enumerate(REPLACEMENT_KEY)})
            )
            try:
                con.execute("""
                    delete from raw.human_judgments h using _srlens_human_keys k
                    where h.campaign = k.campaign and h.corpus = k.corpus and h.team = k.team
                      and h.run = k.run and h.annotator = k.annotator
                      and lower(h.criterion) = lower(k.criterion)""")
            finally:
                con.unregister("_srlens_human_keys")
            _insert_with_text_hash(con, judged, str(path), utc_now())
    return n


def _insert_with_text_hash(con, judged, source_file, loaded_at):
    """Insert the judgments with the sha256 of the output text each one judges."""
    con.register("_srlens_judgments", judged)
    try:
        inserted = con.execute(
            """
            insert into raw.human_judgments (campaign, corpus, team, run, annotator, sent_id, criterion, score,
                                             source_file, line_no, loaded_at, text_sha256)
            select j.campaign, j.corpus, j.team, j.run, j.annotator, j.sent_id, j.criterion, j.score,
                   $source_file, j.line_no, $loaded_at, sha256(o.text)
            from _srlens_judgments j
            join raw.outputs o on o.submission_id = j.submission_id and o.sent_id = j.sent_id
            where not o.is_missing""",
            {"source_file": source_file, "loaded_at": loaded_at},
        ).fetchone()[0]
    finally:
        con.unregister("_srlens_judgments")
    if inserted != judged.num_rows:  # _unknown_references checked every output exists: never happens
        raise RuntimeError(f"{judged.num_rows - inserted} judgments found no output text")


def drop_judgments_of_changed_texts(con, campaign, corpus, team, run):
    """Delete the run's judgments whose text the run no longer has (changed or missing); returns how many.

    load_outputs calls it inside its transaction, after the new outputs are in. A judgment without
    a hash (written by an older srlens and not matched to a text since) goes too.
    """
    return con.execute(
        """
        delete from raw.human_judgments h
        where h.campaign = $campaign and h.corpus = $corpus and h.team = $team and h.run = $run
          and not coalesce(h.text_sha256 = (
              select sha256(o.text) from raw.outputs o
              where o.submission_id = $submission_id and o.sent_id = h.sent_id), false)""",
        {
            "campaign": campaign,
            "corpus": corpus,
            "team": team,
            "run": run,
            "submission_id": submission_id(campaign, corpus, team, run),
        },
    ).fetchone()[0]


def run_text_fingerprint(con, sub_id):
    """A hash of the run's sentence texts in order (NULL for a run not loaded): what a system-level
    human score judged. The file's own hash would also change with its format or its parses."""
    return con.execute(
        """select sha256(string_agg(sent_idx || chr(31) || coalesce(text, chr(30)), chr(29) order by sent_idx))
           from raw.outputs where submission_id = ?""",
        [sub_id],
    ).fetchone()[0]


def drop_system_scores(con, campaign, corpus, team, run):
    """Delete the run's system-level human scores; returns how many. load_outputs calls it inside its
    transaction when a reload changes the run's text: a score describes the outputs it judged."""
    return con.execute(
        """delete from raw.system_human_scores
           where campaign = ? and corpus = ? and team = ? and run = ?""",
        [campaign, corpus, team, run],
    ).fetchone()[0]


# System-level scores (`load-human FILE --level system`): one score per run and criterion.

SYSTEM_REQUIRED = ("campaign", "corpus", "team", "run", "criterion", "score")
SYSTEM_KEY = ("campaign", "corpus", "team", "run", "criterion")
ORIENTATIONS = ("higher", "lower")


def read_system_csv(path):
    """Column lists of a system-level CSV (criterion lower-cased, orientation 'higher' unless given), validated."""
    text, _ = read_text(path)
    if not text.strip():
        raise LoadError(path, "the file is empty")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        position, width = read_header(
            path,
            reader,
            SYSTEM_REQUIRED,
            ("orientation",),
            f"a system-level file has the columns {', '.join(SYSTEM_REQUIRED)} and optionally orientation, "
            "one score per run; judgments of sentences are loaded without --level system",
        )
        columns = {name: [] for name in (*SYSTEM_KEY, "score", "orientation", "line_no")}
        problems, seen, orientation_of = [], {}, {}
        for row in reader:
            line = reader.line_num
            if not any(field.strip() for field in row):
                continue
            if len(row) != width:
                problems.append((line, f"expected {width} fields, found {len(row)}"))
                continue
            values = {name: row[i].strip() for name, i in position.items()}
            empty = [name for name in SYSTEM_REQUIRED if not values[name]]
            if empty:
                problems.append((line, f"empty {', '.join(empty)}"))
                continue
            try:
                for name in ("campaign", "corpus", "team", "run"):
                    values[name] = check_name(values[name], name)
            except NameRefused as err:
                problems.append((line, str(err)))
                continue
            score = parse_score(values["score"])
            if score is None:
                problems.append((line, f"score {values['score']!r} is not a number"))
                continue
            criterion = values["criterion"].lower()
            orientation = (values.get("orientation") or "higher").lower()
            if orientation not in ORIENTATIONS:
                problems.append((line, f"orientation {values['orientation']!r} is not higher or lower"))
                continue
            if orientation_of.setdefault(criterion, (orientation, line))[0] != orientation:
                problems.append(
                    (
                        line,
                        f"criterion {criterion!r} is {orientation!r} here and "
                        f"{orientation_of[criterion][0]!r} at line {orientation_of[criterion][1]}",
                    )
                )
                continue
            key = (values["campaign"], values["corpus"], values["team"], values["run"], criterion)
            if key in seen:
                problems.append((line, f"the same run and criterion as line {seen[key]}"))
                continue
            seen[key] = line
            for name, value in zip(SYSTEM_KEY, key):
                columns[name].append(value)
            columns["score"].append(score)
            columns["orientation"].append(orientation)
            columns["line_no"].append(line)
    except csv.Error as err:
        raise LoadError(path, f"malformed CSV: {err}", reader.line_num) from None
    if problems:
        raise _error(path, problems)
    if not columns["score"]:
        raise LoadError(path, "the file has a header but no scores")
    return columns


def load_system_human(warehouse, path):
    """Load (or replace) system-level human scores; returns the number of scores.

    Every run named must be loaded. A criterion keeps one orientation in the warehouse: a file
    that gives another than the one already recorded is refused (load both files again to change it).
    """
    import pyarrow as pa  # noqa: PLC0415 (load-outputs imports this module: it stays free of pyarrow)

    columns = read_system_csv(path)
    n = len(columns["score"])
    with open_for_write(warehouse) as con:
        runs = {r[0] for r in con.execute("select submission_id from raw.submissions").fetchall()}
        problems = []
        for i, line in enumerate(columns["line_no"]):
            sub_id = submission_id(*(columns[name][i] for name in ("campaign", "corpus", "team", "run")))
            if sub_id not in runs:
                problems.append((line, f"unknown run {sub_id!r} (campaign/corpus/team/run)"))
        keys = pa.table({name: columns[name] for name in SYSTEM_KEY})
        con.register("_srlens_system_keys", keys)
        try:
            recorded = dict(
                con.execute("""
                select distinct criterion, orientation from raw.system_human_scores h
                where not exists (select 1 from _srlens_system_keys k where k.campaign = h.campaign
                                  and k.corpus = h.corpus and k.team = h.team and k.run = h.run
                                  and k.criterion = h.criterion)""").fetchall()
            )
            for i, line in enumerate(columns["line_no"]):
                before = recorded.get(columns["criterion"][i])
                if before and before != columns["orientation"][i]:
                    problems.append(
                        (
                            line,
                            f"criterion {columns['criterion'][i]!r} is recorded as {before!r} "
                            f"by other files, not {columns['orientation'][i]!r}",
                        )
                    )
            if problems:
                raise _error(path, problems)
            with transaction(con):
                con.execute("""
                    delete from raw.system_human_scores h using _srlens_system_keys k
                    where h.campaign = k.campaign and h.corpus = k.corpus and h.team = k.team
                      and h.run = k.run and h.criterion = k.criterion""")
                insert_columns(
                    con,
                    "raw.system_human_scores",
                    {**columns, "source_file": [str(path)] * n, "loaded_at": [utc_now()] * n},
                )
        finally:
            con.unregister("_srlens_system_keys")
    return n
