"""Loading many runs in one process: a campaign's folder or manifest, or several files of one run.

Shared tasks publish their submissions as a folder tree, team / run / one file per corpus:

    CAMPAIGN_DIR/TEAM/RUN/CORPUS.EXT      e.g. sr19/ims/1/en_ewt.txt

The corpus is the file's stem (the name without its last extension). The extension names the
format when it is one (.text, .sr, .conllu); any other (.txt, none) is detected from the content as
load-outputs --format auto does. Hidden files and folders (starting with '.') are skipped; anything
else that is not a run file at that depth is a problem, named: a file elsewhere, an empty team or run
folder, a folder at file depth, a FIFO, a broken link or a link to a folder (links are not followed
into folders; a link to a regular file is read as that file).

A CSV manifest says the same explicitly, one run file a row:

    file,corpus,team,run[,format][,campaign]   (paths relative to the real manifest's folder)

Any other column, or a column named twice, refuses the manifest (loaders/human.py read_header); a
campaign column is checked, not obeyed: each row's campaign must be --campaign (or empty).

Before anything is loaded, the whole layout or manifest is checked: names (loaders/names.py),
files, formats, corpora with a loaded treebank, one file per (corpus, team, run). Any problem
refuses it all, naming every offender (by manifest line, or by path). Then each file is loaded as
its own run, through loaders/load.py's store_run, in its own transaction, in one process and one
connection: a run whose content is bad (an error naming file, line and sentence, as load-outputs
names it) is not loaded and the others are; loading the same campaign again replaces each run, so
it leaves one copy of each.
"""

import csv
import io
import os
import sys
from pathlib import Path
from typing import NamedTuple

from srlens.loaders.conllu_reader import read_text
from srlens.loaders.errors import LoadError, printable
from srlens.loaders.human import read_header
from srlens.loaders.load import LoadedRun, reference_sentences, store_run
from srlens.loaders.names import NameRefused, check_name, corpus_of_file
from srlens.loaders.outputs_reader import FORMATS, read_run
from srlens.loaders.store import interrupted, open_for_write, stop_point

MANIFEST_COLUMNS = ("file", "corpus", "team", "run")
MANIFEST_OPTIONAL = ("format", "campaign")  # campaign: must be --campaign
SHOWN = 10  # problems listed in one error message


class Submission(NamedTuple):
    """One file to load as one run of one corpus; `where` names it in messages (a path, or a manifest line)."""

    path: Path
    corpus: str
    team: str
    run: str
    fmt: str
    where: str
    line: int = None  # its manifest line, if any


class Outcome(NamedTuple):
    """What happened to one submission: `loaded` (a LoadedRun) or the `error` that kept it out."""

    submission: Submission
    loaded: LoadedRun = None
    error: Exception = None


def format_of(path):
    """The format an extension names (.text, .sr, .conllu), else auto (detected from the content)."""
    suffix = Path(path).suffix[1:]
    return suffix if suffix in FORMATS and suffix != "auto" else "auto"


def from_directory(root):
    """The submissions of a campaign folder TEAM/RUN/CORPUS.EXT (see the module's docstring)."""
    root = Path(root)
    submissions, problems = [], []
    for relative, problem in _walk(root):
        if problem:
            problems.append((None, str(relative), problem))
            continue
        try:
            team = check_name(relative.parts[0], "the team folder")
            run = check_name(relative.parts[1], "the run folder")
            corpus = corpus_of_file(relative)
        except NameRefused as err:
            problems.append((None, str(relative), str(err)))
            continue
        submissions.append(Submission(root / relative, corpus, team, run, format_of(relative), str(relative)))
    if not submissions and not problems:
        problems.append((None, str(root), "no run files (expected TEAM/RUN/CORPUS.EXT)"))
    return submissions, problems


def _walk(root, relative=Path()):
    """(relative path, None) for each run file under root, (relative path, what is wrong) for anything else
    that is not hidden. Nothing is skipped unsaid: linked folders are not followed (a link could lead
    out of the campaign, or in a circle), so a link is a run file only if it leads to a regular file."""
    entries = sorted(os.scandir(root / relative), key=lambda entry: entry.name)
    depth = len(relative.parts) + 1
    if depth > 1 and not any(not e.name.startswith(".") for e in entries):
        yield relative, f"an empty {('team', 'run')[depth - 2]} folder (delete it, or add its run files)"
    for entry in entries:
        path = relative / entry.name
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            if not (root / path).exists():
                yield path, "a broken symbolic link"
            elif (root / path).is_dir():
                yield path, "a symbolic link to a folder: linked folders are not followed (copy it, or use a manifest)"
            elif not (root / path).is_file():
                yield path, "a symbolic link to something that is not a regular file"
            elif depth != 3:
                yield path, "a file not at TEAM/RUN/CORPUS.EXT (move it, or use a manifest)"
            else:
                yield path, None
        elif entry.is_dir(follow_symlinks=False):
            if depth == 3:
                yield path, "a folder where a run file should be (TEAM/RUN/CORPUS.EXT)"
            else:
                yield from _walk(root, path)
        elif not entry.is_file(follow_symlinks=False):
            yield path, "not a regular file (a FIFO, socket or device)"
        elif depth != 3:
            yield path, "a file not at TEAM/RUN/CORPUS.EXT (move it, or use a manifest)"
        else:
            yield path, None


def from_manifest(manifest, campaign):
    """The submissions of a CSV manifest: file, corpus, team, run and optionally format and campaign (which
    must then be `campaign`, the --campaign given); bad rows named by line. Paths are relative to the
    real manifest's folder (through a link to a manifest, the folder of the manifest it leads to), and
    become absolute: a run's source_file then names its file from any working folder."""
    manifest = Path(manifest)
    folder = manifest.resolve().parent
    text, _ = read_text(manifest)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    submissions, problems = [], []
    try:
        position, width = read_header(
            manifest,
            reader,
            MANIFEST_COLUMNS,
            MANIFEST_OPTIONAL,
            f"a manifest has the columns {', '.join(MANIFEST_COLUMNS)} "
            f"and optionally {' and '.join(MANIFEST_OPTIONAL)}",
        )
        for row in reader:
            line = reader.line_num
            if not any(field.strip() for field in row):
                continue
            problem = _manifest_row(folder, row, line, width, position, campaign, submissions)
            if problem:
                problems.append((line, f"line {line}", problem))
    except csv.Error as err:
        raise LoadError(manifest, f"malformed CSV: {err}", reader.line_num) from None
    if not submissions and not problems:
        problems.append((None, str(manifest), "the manifest names no run file"))
    return submissions, problems


def _manifest_row(folder, row, line, width, position, campaign, submissions):
    """Append the row's submission; returns what is wrong with it instead, if anything."""
    if len(row) != width:
        return f"expected {width} fields, found {len(row)}"
    values = {name: row[i].strip() for name, i in position.items()}
    empty = [name for name in MANIFEST_COLUMNS if not values[name]]
    if empty:
        return f"empty {', '.join(empty)}"
    try:
        corpus, team, run = (check_name(values[name], name) for name in ("corpus", "team", "run"))
        given = check_name(values["campaign"], "campaign") if values.get("campaign") else campaign
    except NameRefused as err:
        return str(err)
    if given != campaign:
        return f"campaign {given!r} is not --campaign {campaign!r} (a manifest's campaign column must agree with it)"
    fmt = values.get("format") or "auto"
    if fmt not in FORMATS:
        return f"format {fmt!r} is not one of {', '.join(FORMATS)}"
    path = folder / values["file"]
    if not path.is_file():
        return f"no file {values['file']!r} (paths are relative to the manifest's folder)"
    submissions.append(Submission(path, corpus, team, run, fmt, f"line {line}", line))
    return None


def from_files(paths, team, run, fmt="auto"):
    """load-outputs with several files: one team/run's outputs for several corpora, each corpus a file's stem."""
    submissions, problems = [], []
    team, run = check_name(team, "--team"), check_name(run, "--run")
    for path in map(Path, paths):
        if not path.is_file():
            problems.append((None, str(path), "no such file"))
            continue
        try:
            corpus = corpus_of_file(path)
        except NameRefused as err:
            problems.append((None, str(path), str(err)))
            continue
        submissions.append(Submission(path, corpus, team, run, fmt, str(path)))
    return submissions, problems


def _check(source, submissions, problems, corpora, reference_free=()):
    """Add the problems that need the warehouse (corpora) or every row (a run given twice); raise them all."""
    problems = list(problems)
    first = {}
    for s in submissions:
        if s.corpus in reference_free:
            problems.append(
                (
                    s.line,
                    s.where,
                    f"corpus {s.corpus!r} has no treebank (reference-free): load its runs one by one with "
                    "load-outputs --no-reference",
                )
            )
        elif s.corpus not in corpora:
            problems.append((s.line, s.where, f"no treebank is loaded for corpus {s.corpus!r} (load-treebank first)"))
        other = first.setdefault((s.corpus, s.team, s.run), s)
        if other is not s:
            problems.append(
                (s.line, s.where, f"run {s.team}/{s.run} of corpus {s.corpus!r} again (first at {other.where})")
            )
    if not problems:
        return
    problems.sort(key=lambda p: (p[0] or 0, p[1]))
    if source is None and len(problems) == 1:  # several files for load-outputs: name the file itself
        raise LoadError(problems[0][1], f"{problems[0][2]}; nothing loaded")
    shown = "; ".join(f"{where}: {what}" for _, where, what in problems[:SHOWN])
    more = f"; ... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    raise LoadError(
        source if source is not None else "load-outputs",
        f"{len(problems)} problem(s), nothing loaded: {shown}{more}",
        problems[0][0],
    )


def load_submissions(warehouse, campaign, submissions, problems=(), source=None, allow_partial=False):
    """Load each submission as its own run (campaign, corpus, team, run); returns an Outcome for each.

    `problems` (line or None, where, what) found in the layout, with those found here (corpora without
    a treebank, a run given twice), refuse everything in one LoadError before anything is loaded.
    Then one connection for all, one transaction per run. The treebank's sentence ids are read once per
    corpus. Bad content of a run (LoadError, or a file that cannot be read) is recorded in its
    Outcome and the next run goes on; anything else stops here, the runs before it staying loaded.
    Ctrl-C prints the table of the runs done so far, then raises KeyboardInterrupt.
    """
    from tqdm import tqdm  # noqa: PLC0415 (only the commands that load many runs show a bar)

    campaign = check_name(campaign, "--campaign")
    outcomes = []
    with open_for_write(warehouse) as con:
        corpora = {r[0] for r in con.execute("select corpus from raw.treebank_files").fetchall()}
        reference_free = {r[0] for r in con.execute("select corpus from raw.reference_free_corpora").fetchall()}
        _check(source, submissions, problems, corpora, reference_free)
        references = {}
        try:
            for s in tqdm(submissions, desc="loading runs", unit="run", file=sys.stderr, disable=None):
                stop_point("run")
                try:
                    run_file = read_run(s.path, s.fmt)
                    if s.corpus not in references:
                        references[s.corpus] = reference_sentences(con, s.path, s.corpus)
                    loaded = store_run(
                        con, s.path, run_file, references[s.corpus], campaign, s.corpus, s.team, s.run, allow_partial
                    )
                    outcomes.append(Outcome(s, loaded=loaded))
                except (LoadError, OSError) as err:
                    outcomes.append(Outcome(s, error=err))
        except BaseException as err:
            if not interrupted(err):
                raise
            sys.stdout.write(summary_table(outcomes))  # what is loaded; the run in progress was rolled back
            raise KeyboardInterrupt from None
    return outcomes


def load_campaign(warehouse, source, campaign, allow_partial=False):
    """`srlens load-campaign`: a campaign folder or a CSV manifest (a file); returns the Outcomes."""
    source = Path(source)
    campaign = check_name(campaign, "--campaign")
    if source.is_dir():
        submissions, problems = from_directory(source)
    elif source.is_file():
        submissions, problems = from_manifest(source, campaign)
    else:
        raise LoadError(source, "no such folder or manifest file")
    return load_submissions(warehouse, campaign, submissions, problems, source, allow_partial)


def load_files(warehouse, paths, team, run, campaign="default", fmt="auto", allow_partial=False):
    """`srlens load-outputs FILE FILE ...`: each file a corpus (its stem) of one team/run; returns the Outcomes."""
    submissions, problems = from_files(paths, team, run, fmt)
    return load_submissions(warehouse, campaign, submissions, problems, None, allow_partial)


def summary_table(outcomes):
    """The table printed at the end: team, run, corpus, sentences and status, one line per run."""
    rows = [("team", "run", "corpus", "sentences", "status")]
    for o in outcomes:
        s = o.submission
        if o.error is not None:
            rows.append((s.team, s.run, s.corpus, "-", "failed"))
            continue
        notes = [f"{o.loaded.missing} missing"] if o.loaded.missing else []
        if o.loaded.judgments_dropped:
            notes.append(f"{o.loaded.judgments_dropped} human judgments dropped (their text changed)")
        rows.append((s.team, s.run, s.corpus, str(o.loaded.loaded), ", ".join(["loaded", *notes])))
    rows = [tuple(printable(cell) for cell in row) for row in rows]
    widths = [max(len(row[k]) for row in rows) for k in range(5)]
    return "".join(
        "  ".join(cell.rjust(w) if k == 3 else cell.ljust(w) for k, (cell, w) in enumerate(zip(row, widths))).rstrip()
        + "\n"
        for row in rows
    )


def finish(outcomes, source):
    """Print the summary table (stdout) and each failure (stderr); a LoadError when any run failed."""
    sys.stdout.write(summary_table(outcomes))
    failed = [o for o in outcomes if o.error is not None]
    for o in failed:
        print(printable(f"srlens: error: {o.error}"), file=sys.stderr)
    if failed:
        raise LoadError(
            source if source is not None else "load-outputs",
            f"{len(failed)} of {len(outcomes)} runs not loaded (errors above), {len(outcomes) - len(failed)} loaded",
        )
