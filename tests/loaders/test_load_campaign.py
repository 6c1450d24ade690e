"""load-campaign and load-outputs of several files: many runs in one process, each its own all-or-nothing load,
on real treebank text (slices of the UD test files in the shared folder); and a light command line."""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pytest

from srlens.cli import main
from srlens.loaders.load import load_treebank
from tests.conftest import REPO, SHARED, require_shared, table_snapshot
from tests.support.commands import RUNS, campaign_folder, cli, runs_of
from tests.support.processes import Running, process_state

EN, FR = 12, 8  # sentences of each slice


def _blocks(conllu_path, n):
    """The first n sentence blocks of a UD file, as (sent_id, text, block)."""
    blocks = [b for b in conllu_path.read_text(encoding="utf-8").split("\n\n") if b.strip()][:n]
    return [
        (re.search(r"^# sent_id = (.*)$", b, re.M).group(1), re.search(r"^# text = (.*)$", b, re.M).group(1), b)
        for b in blocks
    ]


@pytest.fixture
def corpora(tmp_path):
    """A warehouse with en_ewt and fr_gsd: the first sentences of the UD test files; returns (warehouse, sentences)."""
    require_shared()
    warehouse = tmp_path / "wh.duckdb"
    sentences = {}
    for corpus, path, n in (
        ("en_ewt", SHARED / "ud/en_ewt/en_ewt-ud-test.conllu", EN),
        ("fr_gsd", SHARED / "ud/fr_gsd/fr_gsd-ud-test.conllu", FR),
    ):
        sentences[corpus] = _blocks(path, n)
        treebank = tmp_path / f"{corpus}.conllu"
        treebank.write_text("\n\n".join(b for _, _, b in sentences[corpus]) + "\n\n", encoding="utf-8")
        load_treebank(warehouse, treebank, corpus)
    return warehouse, sentences


def _text_run(sentences, change=lambda k, text: text):
    """One sentence a line, in the treebank's order (matched by order)."""
    return "".join(change(k, text) + "\n" for k, (_, text, _) in enumerate(sentences))


def _sr_run(sentences):
    """'# sent_id'/'# text' blocks in reverse order: matched by the treebank's ids, not by position."""
    return "\n".join(f"# sent_id = {sent_id}\n# text = {text.upper()}\n" for sent_id, text, _ in reversed(sentences))


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _campaign_files(sentences):
    """Three runs of two teams, in the three formats: {relative path: text}."""
    return {
        "ims/1/en_ewt.txt": _text_run(sentences["en_ewt"], lambda k, t: f"{t} run1"),
        "ims/1/fr_gsd.sr": _sr_run(sentences["fr_gsd"]),
        "ims/2/en_ewt.txt": _text_run(sentences["en_ewt"], lambda k, t: t.lower()),
        "adapt/base/en_ewt.conllu": "\n\n".join(b for _, _, b in sentences["en_ewt"]) + "\n\n",
    }


def _loaded(warehouse):
    """{submission_id: (format, matched_by, sentences, missing, [output texts in treebank order])}."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        subs = con.execute(
            "select submission_id, format, matched_by, sentences, missing from raw.submissions"
        ).fetchall()
        return {
            sub_id: (
                fmt,
                by,
                n,
                missing,
                [
                    r[0]
                    for r in con.execute(
                        "select text from raw.outputs where submission_id = ? order by sent_idx", [sub_id]
                    ).fetchall()
                ],
            )
            for sub_id, fmt, by, n, missing in subs
        }
    finally:
        con.close()


def _expected(sentences):
    en, fr = [t for _, t, _ in sentences["en_ewt"]], [t for _, t, _ in sentences["fr_gsd"]]
    return {
        "sr19/en_ewt/ims/1": ("text", "order", EN, 0, [f"{t} run1" for t in en]),
        "sr19/fr_gsd/ims/1": ("sr", "sent_id", FR, 0, [t.upper() for t in fr]),
        "sr19/en_ewt/ims/2": ("text", "order", EN, 0, [t.lower() for t in en]),
        "sr19/en_ewt/adapt/base": ("conllu", "sent_id", EN, 0, en),
    }


def _cli(capsys, *args):
    code = main(list(map(str, args)))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_campaign_folder_loads_every_run_with_its_team_run_corpus_and_format(corpora, tmp_path, capsys):
    warehouse, sentences = corpora
    for relative, text in _campaign_files(sentences).items():
        _write(tmp_path / "sr19" / relative, text)
    _write(tmp_path / "sr19" / ".hidden" / "x" / "notes.txt", "skipped: hidden")
    code, out, err = _cli(capsys, "--warehouse", warehouse, "load-campaign", tmp_path / "sr19", "--campaign", "sr19")
    assert (code, err) == (0, "")
    assert _loaded(warehouse) == _expected(sentences)
    # The CoNLL-U run keeps its token lines, keyed by the reference sentence (here: the same sentence).
    con = duckdb.connect(str(warehouse), read_only=True)
    tokens = con.execute(
        "select count(*) from raw.output_tokens where submission_id = 'sr19/en_ewt/adapt/base'"
    ).fetchone()[0]
    con.close()
    assert tokens == sum(
        len([line for line in b.split("\n") if line and not line.startswith("#")]) for _, _, b in sentences["en_ewt"]
    )
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["team", "run", "corpus", "sentences", "status"]
    assert sorted(rows[1:]) == sorted(
        [
            ["ims", "1", "en_ewt", str(EN), "loaded"],
            ["ims", "1", "fr_gsd", str(FR), "loaded"],
            ["ims", "2", "en_ewt", str(EN), "loaded"],
            ["adapt", "base", "en_ewt", str(EN), "loaded"],
        ]
    )


def test_a_manifest_loads_the_same_as_the_folder(corpora, tmp_path, capsys):
    warehouse, sentences = corpora
    files = _campaign_files(sentences)
    for k, text in enumerate(files.values()):
        _write(tmp_path / "subs" / f"file{k}.data", text)  # names and extensions say nothing here
    rows = ["file,corpus,team,run,format"]
    for k, relative in enumerate(files):
        team, run, name = relative.split("/")
        corpus, ext = name.split(".")
        rows.append(f"subs/file{k}.data,{corpus},{team},{run},{'' if ext == 'txt' else ext}")
    manifest = _write(tmp_path / "sr19.csv", "\n".join(rows) + "\n")
    code, _, err = _cli(capsys, "--warehouse", warehouse, "load-campaign", manifest, "--campaign", "sr19")
    assert (code, err) == (0, "")
    assert _loaded(warehouse) == _expected(sentences)


def test_a_bad_run_is_named_and_kept_out_the_others_load_and_a_second_load_leaves_one_copy(corpora, tmp_path, capsys):
    warehouse, sentences = corpora
    root = tmp_path / "sr19"
    _write(root / "ims/1/en_ewt.txt", _text_run(sentences["en_ewt"]))
    _write(root / "ims/1/fr_gsd.sr", _sr_run(sentences["fr_gsd"]))
    # The bad run repeats the sent_id of its first block in its third block, which starts on line 7.
    bad = _sr_run(sentences["fr_gsd"]).split("\n\n")
    first_id = sentences["fr_gsd"][-1][0]
    bad[2] = re.sub(r"# sent_id = .*", f"# sent_id = {first_id}", bad[2])
    _write(root / "adapt/1/fr_gsd.sr", "\n\n".join(bad))
    # A good earlier version of the bad run stays as it was: its new load is all or nothing.
    earlier = _write(tmp_path / "earlier.txt", _text_run(sentences["fr_gsd"]))
    assert (
        _cli(
            capsys,
            "--warehouse",
            warehouse,
            "load-outputs",
            earlier,
            "--corpus",
            "fr_gsd",
            "--team",
            "adapt",
            "--run",
            "1",
            "--campaign",
            "sr19",
        )[0]
        == 0
    )
    before = _loaded(warehouse)["sr19/fr_gsd/adapt/1"]

    for _attempt in range(2):  # the second, identical load leaves one copy of each run
        code, out, err = _cli(capsys, "--warehouse", warehouse, "load-campaign", root, "--campaign", "sr19")
        assert code == 2
        lines = err.strip().splitlines()
        assert lines[0] == (
            f"srlens: error: {root / 'adapt/1/fr_gsd.sr'}:7 (sentence {first_id}): 1 sentence(s) "
            f"repeat a sent_id: {first_id!r} at line 7, first at line 1"
        )
        assert lines[1] == f"srlens: error: {root}: 1 of 3 runs not loaded (errors above), 2 loaded"
        assert ["adapt", "1", "fr_gsd", "-", "failed"] in [line.split() for line in out.splitlines()]
        loaded = _loaded(warehouse)
        assert sorted(loaded) == ["sr19/en_ewt/ims/1", "sr19/fr_gsd/adapt/1", "sr19/fr_gsd/ims/1"]
        assert loaded["sr19/fr_gsd/adapt/1"] == before
        assert loaded["sr19/fr_gsd/ims/1"][4] == [t.upper() for _, t, _ in sentences["fr_gsd"]]
        con = duckdb.connect(str(warehouse), read_only=True)
        assert con.execute("select count(*) from raw.outputs").fetchone()[0] == EN + 2 * FR  # one copy of each
        con.close()


@pytest.mark.parametrize(
    "row, problem",
    [
        ("missing.txt,en_ewt,ims,1,", "line 3: no file 'missing.txt' (paths are relative to the manifest's folder)"),
        ("run.txt,de_gsd,ims,1,", "line 3: no treebank is loaded for corpus 'de_gsd' (load-treebank first)"),
        ("run.txt,en_ewt,ims/x,1,", "line 3: team 'ims/x': the character '/' (U+002F) is not allowed"),
        ("run.txt,en_ewt,ims,1,xml", "line 3: format 'xml' is not one of auto, text, sr, conllu"),
        ("run.txt,en_ewt,ims", "line 3: expected 5 fields, found 3"),
        ("run.txt,en_ewt,ok,1,sr", "line 3: run ok/1 of corpus 'en_ewt' again (first at line 2)"),
    ],
)
def test_a_bad_manifest_row_is_named_by_line_and_nothing_is_loaded(corpora, tmp_path, capsys, row, problem):
    warehouse, sentences = corpora
    _write(tmp_path / "run.txt", _text_run(sentences["en_ewt"]))
    manifest = _write(tmp_path / "m.csv", f"file,corpus,team,run,format\nrun.txt,en_ewt,ok,1,text\n{row}\n")
    before = table_snapshot(warehouse)
    code, out, err = _cli(capsys, "--warehouse", warehouse, "load-campaign", manifest, "--campaign", "c")
    assert code == 2 and out == ""
    assert err.startswith(f"srlens: error: {manifest}:3: 1 problem(s), nothing loaded: {problem}")
    assert table_snapshot(warehouse) == before


def test_a_bad_folder_layout_names_every_offender_and_loads_nothing(corpora, tmp_path, capsys):
    warehouse, sentences = corpora
    root = tmp_path / "c"
    _write(root / "ims/1/en_ewt.txt", _text_run(sentences["en_ewt"]))
    _write(root / "ims/1/en_ewt.sr", _sr_run(sentences["en_ewt"]))
    _write(root / "README.txt", "not a run")
    _write(root / "ims/1 x/en_ewt.txt", _text_run(sentences["en_ewt"]))
    before = table_snapshot(warehouse)
    code, _, err = _cli(capsys, "--warehouse", warehouse, "load-campaign", root, "--campaign", "c")
    assert code == 2
    assert err.startswith(
        f"srlens: error: {root}: 3 problem(s), nothing loaded: README.txt: a file not at "
        "TEAM/RUN/CORPUS.EXT (move it, or use a manifest); ims/1 x/en_ewt.txt: the run folder "
        "'1 x': the character ' ' (U+0020, a space) is not allowed"
    )
    assert "ims/1/en_ewt.txt: run ims/1 of corpus 'en_ewt' again (first at ims/1/en_ewt.sr)" in err
    assert table_snapshot(warehouse) == before


def test_load_outputs_of_several_files_loads_each_corpus_of_one_run(corpora, tmp_path, capsys):
    warehouse, sentences = corpora
    en = _write(tmp_path / "out/en_ewt.txt", _text_run(sentences["en_ewt"]))
    fr = _write(tmp_path / "out/fr_gsd.txt", _text_run(sentences["fr_gsd"], lambda k, t: "" if k == 2 else t))
    code, out, err = _cli(
        capsys, "--warehouse", warehouse, "load-outputs", en, fr, "--team", "t", "--run", "r", "--campaign", "c"
    )
    assert (code, err) == (0, "")
    loaded = _loaded(warehouse)
    assert loaded["c/en_ewt/t/r"][4] == [t for _, t, _ in sentences["en_ewt"]]
    assert loaded["c/fr_gsd/t/r"][4] == [("" if k == 2 else t) for k, (_, t, _) in enumerate(sentences["fr_gsd"])]
    assert len(out.splitlines()) == 3  # the table: header and two runs
    before = table_snapshot(warehouse)
    code, _, err = _cli(
        capsys, "--warehouse", warehouse, "load-outputs", en, fr, "--corpus", "en_ewt", "--team", "t", "--run", "r2"
    )
    assert code == 2 and "--corpus goes with one file" in err
    code, _, err = _cli(capsys, "--warehouse", warehouse, "load-outputs", en, "--team", "t", "--run", "r2")
    assert code == 2 and "needs --corpus" in err
    other = _write(tmp_path / "out/de_gsd.txt", "x\n")
    code, _, err = _cli(capsys, "--warehouse", warehouse, "load-outputs", en, other, "--team", "t", "--run", "r2")
    assert code == 2
    assert err == (
        f"srlens: error: {other}: no treebank is loaded for corpus 'de_gsd' (load-treebank first); nothing loaded\n"
    )
    assert table_snapshot(warehouse) == before


HEAVY = ("pandas", "pyarrow", "numpy", "duckdb", "scipy", "matplotlib", "dbt", "stanza", "nltk", "torch")


def _imported_by(code):
    """The heavy top-level modules a fresh interpreter has imported after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_command_line_imports_no_heavy_module_until_a_command_needs_it():
    assert _imported_by("import srlens.cli\nsrlens.cli.parser().format_help()") == []


def test_loading_runs_imports_duckdb_only(corpora, tmp_path):
    warehouse, sentences = corpora
    _write(tmp_path / "c/t/r/en_ewt.txt", _text_run(sentences["en_ewt"]))
    _write(tmp_path / "c/t/r/fr_gsd.conllu", "\n\n".join(b for _, _, b in sentences["fr_gsd"]) + "\n\n")
    run = (
        f"from srlens.cli import main\n"
        f"assert main(['--warehouse', {str(warehouse)!r}, 'load-outputs', {str(tmp_path / 'c/t/r/en_ewt.txt')!r}, "
        f"'--corpus', 'en_ewt', '--team', 't', '--run', 'one']) == 0\n"
        f"assert main(['--warehouse', {str(warehouse)!r}, 'load-campaign', {str(tmp_path / 'c')!r}, "
        f"'--campaign', 'c']) == 0"
    )
    assert _imported_by(run) == ["duckdb"]


def test_large_inserts_go_in_chunks_and_keep_every_row(corpora, tmp_path, monkeypatch):
    from srlens.loaders import store

    warehouse, sentences = corpora
    monkeypatch.setattr(store, "INSERT_ROWS", 7)  # the slices' 12 sentences and their tokens span many chunks
    load_treebank(warehouse, tmp_path / "en_ewt.conllu", "en_ewt_again")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:

        def rows(corpus):
            return (
                con.execute(
                    "select * exclude (corpus) from raw.sentences where corpus = ? order by sent_idx", [corpus]
                ).fetchall(),
                con.execute(
                    "select * exclude (corpus) from raw.tokens where corpus = ? order by line_no", [corpus]
                ).fetchall(),
            )

        assert rows("en_ewt_again") == rows("en_ewt")
        assert [s[1] for s in rows("en_ewt_again")[0]] == [sent_id for sent_id, _, _ in sentences["en_ewt"]]
    finally:
        con.close()


# Several treebanks in one load-treebank: one transaction for all (loaders/load.py load_treebanks).


def _raw_rows(warehouse, corpora):
    """Sentences, tokens and treebank files of `corpora` (loaded_at left out), as one load leaves them."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return [
            sorted(con.execute(f"select * exclude ({skip}) from raw.{t} where corpus in ?", [corpora]).fetchall())
            for t, skip in (("sentences", "corpus"), ("tokens", "corpus"), ("treebank_files", "loaded_at"))
        ]
    finally:
        con.close()


def test_several_treebanks_load_as_one_load_each(corpora, tmp_path, capsys):
    warehouse, sentences = corpora
    together = tmp_path / "together.duckdb"
    files = [str(tmp_path / "en_ewt.conllu"), str(tmp_path / "fr_gsd.conllu")]
    code, out, _ = _cli(capsys, "--warehouse", together, "load-treebank", *files)
    assert code == 0
    words = {  # lines whose id is a number
        corpus: sum(line.split("\t")[0].isdigit() for _, _, block in blocks for line in block.split("\n"))
        for corpus, blocks in sentences.items()
    }
    assert out == (
        f"loaded {EN} sentences ({words['en_ewt']} words) as corpus en_ewt\n"
        f"loaded {FR} sentences ({words['fr_gsd']} words) as corpus fr_gsd\n"
    )
    assert _raw_rows(together, ["en_ewt", "fr_gsd"]) == _raw_rows(warehouse, ["en_ewt", "fr_gsd"])


def test_a_bad_file_among_several_treebanks_loads_none_of_them(corpora, tmp_path, capsys):
    warehouse, sentences = corpora
    good = _write(tmp_path / "new/de_one.conllu", "\n\n".join(b for _, _, b in sentences["en_ewt"]) + "\n\n")
    bad = _write(tmp_path / "new/en_ewt.conllu", "\n\n".join(b for _, _, b in sentences["en_ewt"]) + "\n")
    before = table_snapshot(warehouse)
    code, _, err = _cli(capsys, "--warehouse", warehouse, "load-treebank", good, bad)
    assert code == 2 and err.startswith(f"srlens: error: {bad}:") and "not followed by a blank line" in err
    assert table_snapshot(warehouse) == before
    code, _, err = _cli(capsys, "--warehouse", warehouse, "load-treebank", good, bad, "--corpus", "x")
    assert (code, err) == (
        2,
        "srlens: error: --corpus goes with one file: with several, each file's stem names its corpus\n",
    )
    assert table_snapshot(warehouse) == before


# D1: the folder walk skipped linked folders, broken links, FIFOs and folders at file depth, and exited 0.


def add_linked_team(root):
    outside = root.parent / "ext" / "1"
    outside.mkdir(parents=True)
    shutil.copy(RUNS / "drops.sr.txt", outside / "en_ewt_demo.sr")
    (root / "symteam").symlink_to(outside.parent)
    return "symteam", "a symbolic link to a folder: linked folders are not followed"


def add_linked_run(root):
    outside = root.parent / "runfolder"
    outside.mkdir()
    shutil.copy(RUNS / "drops.sr.txt", outside / "en_ewt_demo.sr")
    (root / "ims" / "2").symlink_to(outside)
    return "ims/2", "a symbolic link to a folder: linked folders are not followed"


def add_broken_link(root):
    (root / "ims" / "2").mkdir()
    (root / "ims" / "2" / "en_ewt_demo.sr").symlink_to(root.parent / "nonexistent")
    return "ims/2/en_ewt_demo.sr", "a broken symbolic link"


def add_fifo(root):
    (root / "ims" / "2").mkdir()
    os.mkfifo(root / "ims" / "2" / "en_ewt_demo.sr")
    return "ims/2/en_ewt_demo.sr", "not a regular file (a FIFO, socket or device)"


def add_folder_at_file_depth(root):
    (root / "ims" / "3" / "en_ewt_demo").mkdir(parents=True)
    return "ims/3/en_ewt_demo", "a folder where a run file should be"


def add_empty_run_folder(root):
    (root / "ims" / "4").mkdir()
    return "ims/4", "an empty run folder"


@pytest.mark.parametrize(
    "add",
    [add_linked_team, add_linked_run, add_broken_link, add_fifo, add_folder_at_file_depth, add_empty_run_folder],
)
def test_the_campaign_folder_walk_names_what_it_cannot_load_and_loads_nothing(demo_wh, tmp_path, capsys, add):
    root = campaign_folder(tmp_path / "camp")
    where, what = add(root)
    before = table_snapshot(demo_wh)
    code, out, err = cli(capsys, "--warehouse", demo_wh, "load-campaign", root, "--campaign", "sr19")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"srlens: error: {root}: 1 problem(s), nothing loaded: {where}: {what}")
    assert table_snapshot(demo_wh) == before


def test_a_link_to_a_run_file_is_read_as_that_file(demo_wh, tmp_path, capsys):
    root = campaign_folder(tmp_path / "camp")
    (root / "ims" / "2").mkdir()
    (root / "ims" / "2" / "en_ewt_demo.sr").symlink_to(RUNS / "drops.sr.txt")
    code, _, err = cli(capsys, "--warehouse", demo_wh, "load-campaign", root, "--campaign", "sr19")
    assert (code, err) == (0, "")
    assert runs_of(demo_wh) == ["sr19/en_ewt_demo/ims/1", "sr19/en_ewt_demo/ims/2"]


# D4: a manifest with a column it cannot have, or a column named twice, was read anyway (unknown
# columns ignored, the first of two taken).


@pytest.mark.parametrize(
    "header, row, message",
    [
        ("file,file,corpus,team,run", "A.sr,B.sr,en_ewt_demo,ims,1", "1: the header names 'file' more than once"),
        ("file,corpus,team,run,camp", "A.sr,en_ewt_demo,ims,1,x", "1: the header has the column(s) 'camp', unknown"),
        ("file,corpus,team,run,", "A.sr,en_ewt_demo,ims,1,", "1: the header has the column(s) '', unknown"),
        (
            "file,corpus,team,run,campaign",
            "A.sr,en_ewt_demo,ims,1,sr18",
            "2: 1 problem(s), nothing loaded: line 2: campaign 'sr18' is not --campaign 'sr19'",
        ),
    ],
)
def test_a_manifest_column_that_is_unknown_twice_or_disagrees_is_refused(
    demo_wh, tmp_path, capsys, header, row, message
):
    shutil.copy(RUNS / "swaps.sr.txt", tmp_path / "A.sr")
    shutil.copy(RUNS / "drops.sr.txt", tmp_path / "B.sr")
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"{header}\n{row}\n", encoding="utf-8")
    before = table_snapshot(demo_wh)
    code, out, err = cli(capsys, "--warehouse", demo_wh, "load-campaign", manifest, "--campaign", "sr19")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"srlens: error: {manifest}:{message}")
    assert table_snapshot(demo_wh) == before


def test_a_manifest_campaign_column_that_agrees_loads(demo_wh, tmp_path, capsys):
    shutil.copy(RUNS / "swaps.sr.txt", tmp_path / "A.sr")
    shutil.copy(RUNS / "drops.sr.txt", tmp_path / "B.sr")
    manifest = tmp_path / "m.csv"
    manifest.write_text("file,corpus,team,run,campaign\nA.sr,en_ewt_demo,ims,1,sr19\nB.sr,en_ewt_demo,ims,2,\n")
    code, _, err = cli(capsys, "--warehouse", demo_wh, "load-campaign", manifest, "--campaign", "sr19")
    assert (code, err) == (0, "")
    assert runs_of(demo_wh) == ["sr19/en_ewt_demo/ims/1", "sr19/en_ewt_demo/ims/2"]


# D9: messages about reference-free corpora said what was not true ("load-treebank first").


def test_load_campaign_says_a_reference_free_corpus_has_no_treebank(reference_free_wh, tmp_path, capsys):
    root = campaign_folder(tmp_path / "camp")
    shutil.copy(RUNS / "drops.sr.txt", root / "ims" / "1" / "mt.sr")
    before = table_snapshot(reference_free_wh)
    code, _, err = cli(capsys, "--warehouse", reference_free_wh, "load-campaign", root, "--campaign", "sr19")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        f"srlens: error: {root}: 1 problem(s), nothing loaded: ims/1/mt.sr: corpus 'mt' has no treebank "
        "(reference-free): load its runs one by one with load-outputs --no-reference"
    )
    assert table_snapshot(reference_free_wh) == before


# D10: Python's date syntax beyond ASCII decimals (fullwidth digits) was accepted.


@pytest.mark.parametrize("date", ["２０１９", "2019-０６", "٢٠١٩"])
def test_a_campaign_date_is_in_ascii_digits(demo_wh, capsys, date):
    before = table_snapshot(demo_wh)
    code, _, err = cli(capsys, "--warehouse", demo_wh, "campaign", "sr19", "--date", date)
    assert code == 2 and err == f"srlens: error: campaign date {date!r}: expected YYYY, YYYY-MM or YYYY-MM-DD\n"
    assert table_snapshot(demo_wh) == before


# D11: a manifest reached through a link read its files beside the link, and source_file was relative
# to the working folder.


def test_a_linked_manifest_reads_the_files_beside_the_real_one(demo_wh, tmp_path, capsys, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(RUNS / "swaps.sr.txt", real / "A.sr")
    (real / "m.csv").write_text("file,corpus,team,run\nA.sr,en_ewt_demo,ims,1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(RUNS / "drops.sr.txt", elsewhere / "A.sr")  # another file of the same name beside the link
    (elsewhere / "m.csv").symlink_to(real / "m.csv")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "--warehouse", demo_wh, "load-campaign", "elsewhere/m.csv", "--campaign", "sr19")
    assert (code, err) == (0, "")
    con = duckdb.connect(str(demo_wh), read_only=True)
    source, sha256 = con.execute("select source_file, sha256 from raw.submissions").fetchone()
    con.close()
    assert source == str(real / "A.sr")
    assert sha256 == hashlib.sha256((RUNS / "swaps.sr.txt").read_bytes()).hexdigest()


# D8: Ctrl-C during load-campaign left no table of what was loaded.


def test_ctrl_c_during_load_campaign_lists_the_runs_loaded(demo_wh, tmp_path):
    root = campaign_folder(tmp_path / "camp")
    for run, text in (("2", "drops"), ("3", "random"), ("4", "head_final")):
        (root / "ims" / run).mkdir()
        shutil.copy(RUNS / f"{text}.sr.txt", root / "ims" / run / "en_ewt_demo.sr")
    argv = ["--warehouse", demo_wh, "load-campaign", root, "--campaign", "sr19"]
    load = Running(*argv, cwd=tmp_path, SRLENS_TEST_STOP_AT="run")
    load.wait_stopped()  # before the first run
    load.proc.send_signal(signal.SIGCONT)
    while load.proc.poll() is None and process_state(load.proc.pid) == "T":
        time.sleep(0.01)  # it leaves the stop at once
    # Ctrl-C before the second run, and again before the next run if that one was lost (DuckDB may
    # swallow a SIGINT that comes while it runs a short query); never twice while it is handled.
    while load.proc.poll() is None:
        if process_state(load.proc.pid) == "T":
            load.proc.send_signal(signal.SIGINT)
            load.proc.send_signal(signal.SIGCONT)
            while load.proc.poll() is None and process_state(load.proc.pid) == "T":
                time.sleep(0.01)
        time.sleep(0.01)
    assert load.finish() == 130
    assert load.stderr().endswith("srlens: interrupted\n")
    table = [line.split() for line in load.proc.stdout.read().splitlines()]
    assert table[0] == ["team", "run", "corpus", "sentences", "status"]
    assert table[1] == ["ims", "1", "en_ewt_demo", "200", "loaded"]
    # the table lists exactly the runs that are loaded: none lost, none claimed
    assert runs_of(demo_wh) == [f"sr19/en_ewt_demo/ims/{row[1]}" for row in table[1:] if row[-1] == "loaded"]
