"""The run and sentence pages of a report, written by two processes: the report's process takes
the runs from the first on, the overview's worker (overview.serve), once index.html is drawn, the
last runs. A run is written by the side that first creates its claim file in CLAIMS (O_EXCL): the
report's process stops at the first run the worker claimed, so no page is written twice.

A run's pages are a function of its rows, its index anchor and the report's code: their fingerprint
is written into the run's page, and a report written over an earlier one (an incremental build
changed a few runs) links the earlier pages of a run whose fingerprint is unchanged into the new
report (hard links: the earlier report stays whole until the swap) instead of drawing them again."""

import contextlib
import hashlib
import os
import shutil
import sys
from pathlib import Path

from srlens.report import runs, sentences
from srlens.report.markup import slug
from srlens.report.queries import RUN_QUERIES, ByRun

CLAIMS = ".claims"  # in the staging folder; deleted before the report is moved into place
QUERY_SECONDS = 1.0  # about what the worker's run queries take before its first page
# the report's code: a page drawn by other code is drawn again
CODE = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py")))).hexdigest()
FINGERPRINT = "<!-- srlens report inputs {} -->\n"  # the run page's second line


def make_folders(staging):
    for folder in ("runs", "sentences", CLAIMS):
        (staging / folder).mkdir(parents=True)


def claim(staging, submission_id):
    """True if this process now owns the run: its claim file did not exist and was created."""
    try:
        os.close(os.open(staging / CLAIMS / slug(submission_id), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def write_runs(con, staging, all_runs, start, stop, anchors, claimed=False):
    """The pages of all_runs[start:stop] (the rows of SQL_RUNS), in order; with claimed=False each
    run is claimed first and the first run claimed by the other process ends the loop. Returns the
    number of runs written."""
    part = all_runs[start:stop]
    if not part:
        return 0
    bounds = {"first": part[0]["submission_id"], "last": part[-1]["submission_id"]}
    streams = {name: ByRun(con, sql, **params, **bounds) for name, (sql, params) in RUN_QUERIES.items()}
    written = 0
    try:
        for number, run in enumerate(part, start + 1):
            sid = run["submission_id"]
            if not claimed and not claim(staging, sid):
                break
            print(f"report: run {number}/{len(all_runs)} {sid}", file=sys.stderr)
            rows = {name: stream.take(sid) for name, stream in streams.items()}
            anchor = anchors.get((run["campaign"], run["corpus"]), "")
            inputs = FINGERPRINT.format(hashlib.sha256(repr((CODE, run, rows, anchor)).encode()).hexdigest())
            written += 1
            if link_earlier_pages(staging, sid, inputs):
                continue
            page = runs.run_page(run, rows, f"index.html#{anchor}")
            head, _, rest = page.partition("\n")
            # pages a failed worker or a failed link left: they may be links to the earlier report's
            shutil.rmtree(staging / runs.sentence_dir(sid), ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(staging / runs.run_file(sid))
            write_file(f"{staging}/{runs.run_file(sid)}", f"{head}\n{inputs}{rest}")
            if rows["examples"]:
                (staging / runs.sentence_dir(sid)).mkdir()
            for sent_idx, text in sentences.sentence_pages(run, rows):
                write_file(f"{staging}/{runs.sentence_file(sid, sent_idx)}", text)
    finally:
        for stream in streams.values():
            stream.close()
    return written


def link_earlier_pages(staging, submission_id, inputs):
    """Link the run's pages of the report in staging's parent folder into staging, if that report drew
    them from the same inputs; False (nothing linked that stays) otherwise."""
    earlier = staging.parent
    page = earlier / runs.run_file(submission_id)
    try:
        with open(page, "rb") as f:
            if f.read(len(inputs) + 64).partition(b"\n")[2][: len(inputs)] != inputs.encode():
                return False
        folder = earlier / runs.sentence_dir(submission_id)
        names = os.listdir(folder) if folder.is_dir() else []
        if names:
            (staging / runs.sentence_dir(submission_id)).mkdir(exist_ok=True)
        for name in names:
            os.link(folder / name, staging / runs.sentence_dir(submission_id) / name)
        os.link(page, staging / runs.run_file(submission_id))
    except OSError:  # no earlier page, or no hard links here: the pages are drawn (write_runs removes any linked)
        return False
    return True


def write_file(path, text):
    """Path.write_text(text, encoding="utf-8") without its layers (a Path, a text stream, a buffer),
    which cost more than the write itself for the report's 32,000 small pages."""
    data = memoryview(text.encode())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def worker_share(staging, all_runs, elapsed):
    """The index in all_runs of the first of the last runs that the worker claims once index.html is
    drawn: about half of those the report's process has not claimed yet, less what it writes while
    the worker runs its queries, so that both end together. elapsed: seconds since the report's
    process started on its pages (and the worker on index.html)."""
    done = len(os.listdir(staging / CLAIMS))
    left = len(all_runs) - done
    rate = done / max(elapsed, 1e-3)  # runs a second of the report's process
    share = max(0, round((left - rate * QUERY_SECONDS) / 2))
    start = len(all_runs)
    while start > len(all_runs) - share and claim(staging, all_runs[start - 1]["submission_id"]):
        start -= 1
    return start
