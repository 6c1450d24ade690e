"""Loading treebanks and system runs into the raw tables.

Each load reads and validates the whole input first, then replaces the rows of
that corpus or run in one transaction: a failed load changes nothing, and
loading the same input again leaves one copy. load_treebanks loads several
treebanks in one transaction, reading each in turn inside it (all or none).
load_outputs loads one run; loaders/campaign.py loads many in one process
through the same store_run.
"""

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from srlens.loaders.conllu_reader import CONLLU_COLUMNS, read_conllu
from srlens.loaders.errors import LoadError
from srlens.loaders.human import drop_judgments_of_changed_texts, drop_system_scores, run_text_fingerprint
from srlens.loaders.names import check_name, submission_id
from srlens.loaders.outputs_reader import read_run
from srlens.loaders.store import insert_columns, insert_lines, open_for_write, transaction, utc_now

__all__ = [
    "LoadedRun",
    "guess_language",
    "load_outputs",
    "load_treebank",
    "load_treebanks",
    "reference_sentences",
    "store_run",
    "submission_id",
]


class LoadedRun(NamedTuple):
    """What load_outputs did: sentences matched, sentences missing, human judgments dropped (sentence- and
    system-level)."""

    loaded: int
    missing: int
    judgments_dropped: int


def guess_language(corpus, path):
    """UD naming: 'en_ewt', 'fr_gsd-ud-test.conllu' -> en, fr; 'und' when neither says."""
    for name in (corpus, Path(path).name):
        match = re.match(r"([a-z]{2,3})[_-]", name)
        if match:
            return match.group(1)
    return "und"


def load_treebank(warehouse, path, corpus, language=None, replace=False):
    """Load (or replace) the reference treebank of `corpus`; returns (sentences, words)."""
    return load_treebanks(warehouse, [(path, corpus, language)], replace)[0]


def load_treebanks(warehouse, treebanks, replace=False):
    """Load (or replace) treebanks given as (path, corpus, language or None), all in one transaction: all or
    none. A corpus with text references (loaders/references.py) is replaced only if `replace`. One
    connection and one commit for all make a campaign's treebanks about twice as cheap to load
    as one command each (docs/performance.md, "Loading"). Returns (sentences, words) of each.

    The first file is read before the warehouse is opened, as a single load always was; the others inside
    the transaction, each read by a thread while the previous one is inserted (DuckDB inserts without
    the GIL), so that at most two treebanks are in memory."""
    named, first_seen = [], {}
    for path, corpus, language in treebanks:
        corpus = check_name(corpus, "--corpus")
        if corpus in first_seen:
            raise LoadError(path, f"corpus {corpus!r} again (first from {first_seen[corpus]}); nothing loaded")
        first_seen[corpus] = path
        language = guess_language(corpus, path) if language is None else check_name(language, "--language")
        named.append((path, corpus, language))
    first = read_conllu(named[0][0])
    counts = []
    with open_for_write(warehouse, create=True) as con, transaction(con):
        treebanks = _read_ahead(first, [path for path, _, _ in named[1:]])
        for (path, corpus, language), treebank in zip(named, treebanks, strict=True):
            _refuse_reference_free(con, path, corpus)
            _refuse_text_reference(con, path, corpus, replace)
            _check_runs_still_match(con, path, corpus, treebank.sentences["sent_id"])
            for table in ("raw.treebank_files", "raw.sentences", "raw.tokens"):
                con.execute(f"delete from {table} where corpus = ?", [corpus])
            n = treebank.sentence_count
            insert_columns(con, "raw.sentences", {"corpus": [corpus] * n, **treebank.sentences})
            insert_treebank_tokens(con, "raw.tokens", {"corpus": corpus}, treebank, treebank.token_sent_idx)
            con.execute(
                """insert into raw.treebank_files (corpus, language, source_file, sha256, sentences, words, loaded_at,
                                                    reference) values (?, ?, ?, ?, ?, ?, ?, 'treebank')""",
                [corpus, language, str(path), treebank.sha256, n, treebank.words, utc_now()],
            )
            counts.append((n, treebank.words))
    return counts


def _read_ahead(first, paths):
    """`first`, then the Treebank of each of `paths` in order, each read by a thread while the caller
    works on the one before; a file's error is raised when its turn comes, as if read then."""
    with ThreadPoolExecutor(max_workers=1) as reader:
        treebank = first
        for path in paths:
            upcoming = reader.submit(read_conllu, path)
            yield treebank
            treebank = upcoming.result()
        yield treebank


def _refuse_text_reference(con, path, corpus, replace):
    """Text references are replaced by a treebank only when asked: the corpus's trees would change kind."""
    kind = con.execute("select reference from raw.treebank_files where corpus = ?", [corpus]).fetchone()
    if kind and kind[0] == "text" and not replace:
        raise LoadError(
            path,
            f"corpus {corpus!r} has text references (load-references): --replace replaces them with this "
            "treebank (or load it under another corpus name)",
        )


def _check_runs_still_match(con, path, corpus, sent_ids):
    """Runs already loaded for the corpus point at sentences by position: refuse to move them."""
    runs = con.execute("select count(*) from raw.submissions where corpus = ?", [corpus]).fetchone()[0]
    if not runs:
        return
    old = [
        r[0]
        for r in con.execute(
            "select sent_id from raw.sentences where corpus = ? order by sent_idx", [corpus]
        ).fetchall()
    ]
    if old != list(sent_ids):
        raise LoadError(
            path,
            f"corpus {corpus!r} has {runs} loaded run(s) and this file's sentences differ "
            f"from the loaded treebank's ({len(sent_ids)} vs {len(old)} sentences or other "
            "sent_ids); load it under a new corpus name",
        )


def load_outputs(
    warehouse,
    path,
    corpus,
    team,
    run,
    campaign="default",
    fmt="auto",
    allow_partial=False,
    no_reference=False,
    language=None,
):
    """Load (or replace) one system run (the exact identity campaign, corpus, team, run); returns a LoadedRun.

    no_reference: the corpus has no treebank; it is created by its first run, with `language`
    (see reference_free_sentences).
    """
    campaign, corpus, team, run = (
        check_name(name, argument)
        for name, argument in ((campaign, "--campaign"), (corpus, "--corpus"), (team, "--team"), (run, "--run"))
    )
    if language is not None and not no_reference:
        raise LoadError(path, "--language goes with --no-reference: a run of a treebank has the treebank's language")
    if language is not None:
        language = check_name(language, "--language")
    run_file = read_run(path, fmt)
    with open_for_write(warehouse, create=no_reference) as con:  # a reference-free run may come first
        if no_reference:
            sub_id = submission_id(campaign, corpus, team, run)
            reference = reference_free_sentences(con, path, corpus, language, sub_id, run_file)
            if not reference:
                raise LoadError(path, _no_reference_message(con, corpus))
        else:
            reference = reference_sentences(con, path, corpus)
        return store_run(
            con,
            path,
            run_file,
            reference,
            campaign,
            corpus,
            team,
            run,
            allow_partial,
            reference_free_language=language if no_reference else None,
        )


def reference_sentences(con, path, corpus):
    """The (sent_idx, sent_id) of the corpus's treebank in order, which a run of it is matched against."""
    reference = con.execute(
        "select sent_idx, sent_id from raw.sentences where corpus = ? order by sent_idx", [corpus]
    ).fetchall()
    if not reference:
        raise LoadError(path, _no_reference_message(con, corpus))
    return reference


def store_run(
    con, path, run_file, reference, campaign, corpus, team, run, allow_partial=False, reference_free_language=None
):
    """Match a read run (read_run) with its corpus's `reference` sentences and replace the run's rows in one
    transaction; the names are checked ones. Returns a LoadedRun.

    reference_free_language: the run creates (or confirms) a reference-free corpus of that language, in the
    same transaction. Human judgments of the run whose sentence text the reload changes or removes are
    deleted in the same transaction (loaders/human.py): a judgment describes one text. So are the run's
    system-level human scores when any of its text changes (judgments_dropped counts both).
    """
    sub_id = submission_id(campaign, corpus, team, run)
    rows, matched_by = _match(path, run_file, reference, allow_partial)
    with transaction(con):
        if reference_free_language is not None:
            _create_reference_free_corpus(con, corpus, reference_free_language)
        old_text = run_text_fingerprint(con, sub_id)
        for table in ("raw.submissions", "raw.outputs", "raw.output_tokens"):
            con.execute(f"delete from {table} where submission_id = ?", [sub_id])
        insert_columns(con, "raw.outputs", {"submission_id": [sub_id] * len(rows["sent_idx"]), **rows})
        if run_file.conllu is not None:
            _insert_output_tokens(con, sub_id, run_file, rows)
        missing = sum(rows["is_missing"])
        con.execute(
            "insert into raw.submissions values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                sub_id,
                corpus,
                team,
                run,
                campaign,
                str(path),
                run_file.format,
                matched_by,
                run_file.sha256,
                len(reference) - missing,
                missing,
                utc_now(),
            ],
        )
        dropped = drop_judgments_of_changed_texts(con, campaign, corpus, team, run)
        # A new run, or other text: no score judged it. A new run needs no second fingerprint: a loaded
        # run has one (its reference has sentences), so it differs from None.
        if old_text is None or run_text_fingerprint(con, sub_id) != old_text:
            dropped += drop_system_scores(con, campaign, corpus, team, run)
    return LoadedRun(len(reference) - missing, missing, dropped)


# Reference-free corpora: runs of a corpus without a treebank, matched with each other.


def reference_free_sentences(con, path, corpus, language, sub_id, run_file):
    """The sentences (sent_idx, sent_id) a run of the reference-free corpus is matched against.

    They are the sentences of the corpus's other runs (every run has a row for each). The first
    run defines them: its own sent_ids in file order when every sentence has one, else 1..N. The
    run is then matched by _match with the rules of a treebank's runs.
    """
    if language is None:
        raise LoadError(
            path,
            "--no-reference needs --language (the ISO code of the run's language, e.g. en): "
            "it chooses the rules and the parser",
        )
    language = check_name(language, "--language")
    if con.execute("select count(*) from raw.treebank_files where corpus = ?", [corpus]).fetchone()[0]:
        raise LoadError(path, f"corpus {corpus!r} has a reference treebank: load its runs without --no-reference")
    known = con.execute("select language from raw.reference_free_corpora where corpus = ?", [corpus]).fetchone()
    if known and known[0] != language:
        raise LoadError(path, f"reference-free corpus {corpus!r} has language {known[0]!r}, not {language!r}")
    others = con.execute(
        """
        select distinct o.sent_idx, o.sent_id from raw.outputs o join raw.submissions s using (submission_id)
        where s.corpus = ? and s.submission_id <> ? order by o.sent_idx""",
        [corpus, sub_id],
    ).fetchall()
    if others:
        return others
    ids = run_file.sent_ids
    if ids and all(sent_id is not None for sent_id in ids):
        first = list(dict.fromkeys(ids))  # a repeated id is refused by _match
        return list(enumerate(first, start=1))
    return [(k, str(k)) for k in range(1, len(ids) + 1)]


def _create_reference_free_corpus(con, corpus, language):
    if not con.execute("select count(*) from raw.reference_free_corpora where corpus = ?", [corpus]).fetchone()[0]:
        con.execute("insert into raw.reference_free_corpora values (?, ?, ?)", [corpus, language, utc_now()])


def _no_reference_message(con, corpus):
    known = con.execute("select language from raw.reference_free_corpora where corpus = ?", [corpus]).fetchone()
    if known:
        return f"corpus {corpus!r} is a reference-free corpus: load its runs with --no-reference --language {known[0]}"
    return (
        f"no treebank is loaded for corpus {corpus!r} (load-treebank first; for a corpus without a "
        "treebank, add --no-reference --language xx)"
    )


def _refuse_reference_free(con, path, corpus):
    """A reference-free corpus's runs are matched with each other, not with a treebank: keep them apart."""
    if con.execute("select count(*) from raw.reference_free_corpora where corpus = ?", [corpus]).fetchone()[0]:
        raise LoadError(
            path,
            f"corpus {corpus!r} is a reference-free corpus (runs loaded with --no-reference); "
            "load the treebank under another corpus name",
        )


def _match(path, run_file, reference, allow_partial):
    """Pair run sentences with reference sentences, never by a guess (docs/loading.md, "How a run is matched").

    By sent_id when the run carries ids of the treebank: then every sentence must carry one, once.
    By order when it carries none of them: then the counts must be equal. Anything between is an error.
    """
    ref_idx = {sent_id: idx for idx, sent_id in reference}
    ids, lines = run_file.sent_ids, run_file.line_nos

    def error(message, k=None):
        note = f" {run_file.format_note}" if run_file.format_note else ""
        return LoadError(path, message + note, None if k is None else lines[k], None if k is None else ids[k])

    # Shared-task files number their own sentences 1..N. Such ids are the treebank's only when the
    # treebank has these ids at these positions; if some are not the treebank's, they number the run.
    positional = _numbers_its_positions(ids)
    if positional and any(ref_idx.get(sent_id) != k for k, sent_id in enumerate(ids, start=1)):
        if all(sent_id in ref_idx for sent_id in ids):
            k = next(k for k, sent_id in enumerate(ids) if ref_idx[sent_id] != k + 1)
            raise error(
                f"the run's sent_ids are 1..{len(ids)} in file order, and the treebank has these ids "
                f"in another order (its sentence {ref_idx[ids[k]]} is {ids[k]!r}): they may number the "
                "run's own sentences or name the treebank's, so neither is assumed. Put the run in the "
                "treebank's order",
                k,
            )
        ids = [None] * len(ids)

    known = [k for k, sent_id in enumerate(ids) if sent_id in ref_idx]
    unknown = [k for k, sent_id in enumerate(ids) if sent_id is not None and sent_id not in ref_idx]
    without = [k for k, sent_id in enumerate(ids) if sent_id is None]
    first_use = {}
    repeated = [k for k, sent_id in enumerate(ids) if sent_id is not None and first_use.setdefault(sent_id, k) != k]
    if repeated:
        raise error(
            f"{len(repeated)} sentence(s) repeat a sent_id: "
            + _sample(ids, lines, repeated, lambda k: f", first at line {lines[first_use[ids[k]]]}"),
            repeated[0],
        )
    if known and (unknown or without):
        parts = [f"{len(known)} with the treebank's sent_ids"]
        if unknown:
            parts.append(f"{len(unknown)} with sent_ids the treebank does not have ({_sample(ids, lines, unknown)})")
        if without:
            parts.append(f"{len(without)} without a sent_id (at line {_lines(lines, without)})")
        raise error(
            f"the run's sentences do not all carry the treebank's sent_ids: {'; '.join(parts)}. A run "
            "is matched by sent_id only when every sentence has one of the treebank, else by order",
            (unknown or without)[0],
        )
    if unknown and without:
        raise error(
            f"only some of the run's sentences carry a sent_id: {len(unknown)} do "
            f"({_sample(ids, lines, unknown)}; none of them is in the treebank) and {len(without)} "
            f"do not (at line {_lines(lines, without)})",
            without[0],
        )
    if known:
        by_ref = {ref_idx[sent_id]: k for k, sent_id in enumerate(ids)}
        if len(ids) < len(reference) and not allow_partial:
            raise error(
                f"the run has {len(ids)} sentences and the treebank has {len(reference)} "
                f"(--allow-partial records the {len(reference) - len(ids)} others as missing)"
            )
    else:
        by_ref = {idx: k for k, (idx, _) in enumerate(reference)}
        if len(ids) != len(reference):
            why = (
                "its sent_ids 1..N number its own sentences, so it is matched by order"
                if positional
                else "it carries no sent_id of the treebank, so it is matched by order"
            )
            partial = "; --allow-partial needs the treebank's sent_ids" if len(ids) < len(reference) else ""
            raise error(f"the run has {len(ids)} sentences and the treebank has {len(reference)} ({why}{partial})")
    rows = {"sent_idx": [], "sent_id": [], "text": [], "is_missing": [], "line_no": []}
    for idx, sent_id in reference:
        k = by_ref.get(idx)
        rows["sent_idx"].append(idx)
        rows["sent_id"].append(sent_id)
        rows["text"].append(None if k is None else run_file.texts[k])
        rows["is_missing"].append(k is None)
        rows["line_no"].append(None if k is None else lines[k])
    return rows, "sent_id" if known else "order"


def _numbers_its_positions(ids):
    """True for sent_ids 1, 2, ..., N in file order: the shared tasks' numbering of a run's own sentences."""
    return all(sent_id == str(k) for k, sent_id in enumerate(ids, start=1))


def _sample(ids, lines, ks, more=lambda k: "", shown=3):
    """The first few offending sent_ids with their line numbers, for an error message."""
    text = ", ".join(f"{ids[k]!r} at line {lines[k]}{more(k)}" for k in ks[:shown])
    return text + (f" and {len(ks) - shown} more" if len(ks) > shown else "")


def _lines(lines, ks, shown=3):
    """The line numbers of the first few offending sentences."""
    return ", ".join(str(lines[k]) for k in ks[:shown]) + (f" and {len(ks) - shown} more" if len(ks) > shown else "")


def _insert_output_tokens(con, sub_id, run_file, rows):
    """Token lines of an already parsed run, keyed by the reference sentence they realize."""
    line_to_ref = dict(zip(rows["line_no"], rows["sent_idx"]))
    ref_of_file_idx = [line_to_ref[line] for line in run_file.conllu.sentences["first_line"]]
    treebank = run_file.conllu
    sent_idx = [ref_of_file_idx[file_idx - 1] for file_idx in treebank.token_sent_idx]
    insert_treebank_tokens(con, "raw.output_tokens", {"submission_id": sub_id}, treebank, sent_idx)


def insert_treebank_tokens(con, table, constants, treebank, sent_idx):
    """The token lines of a read CoNLL-U file into raw.tokens or raw.output_tokens (the same columns)."""
    columns = {"sent_idx": sent_idx, "line_no": treebank.token_line_no}
    insert_lines(con, table, constants, columns, treebank.token_lines, CONLLU_COLUMNS)
