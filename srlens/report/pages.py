"""The run and sentence pages of a report, written by two processes: the report's process takes
the runs from the first on, the overview's worker (overview.serve), once index.html is drawn, the
last runs. A run is written by the side that first creates its claim file in CLAIMS (O_EXCL): the
report's process stops at the first run the worker claimed, so no page is written twice."""

import os
import sys

from srlens.report import runs, sentences
from srlens.report.markup import slug
from srlens.report.queries import RUN_QUERIES, ByRun

CLAIMS = ".claims"  # in the staging folder; deleted before the report is moved into place
QUERY_SECONDS = 1.0  # about what the worker's run queries take before its first page


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
            page = runs.run_page(run, rows, f"index.html#{anchor}")
            write_file(f"{staging}/{runs.run_file(sid)}", page)
            if rows["examples"]:
                (staging / runs.sentence_dir(sid)).mkdir(exist_ok=True)  # a failed worker may have made it
            for sent_idx, text in sentences.sentence_pages(run, rows):
                write_file(f"{staging}/{runs.sentence_file(sid, sent_idx)}", text)
            written += 1
    finally:
        for stream in streams.values():
            stream.close()
    return written


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
