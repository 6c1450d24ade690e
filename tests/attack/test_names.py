"""Attacks on names: run identities never collide and no name becomes a path
as given.

Every hostile name is refused with one line that names the argument, before anything is
written: the whole folder tree around the warehouse (the warehouse file included) is
byte-identical afterwards, and files planted where today's path building would land are
never replaced.
"""

import hashlib
import itertools
import os
import shutil
import unicodedata
from pathlib import Path

import duckdb
import pytest

from srlens import baseline
from srlens.cli import main
from srlens.export import export_parquet
from srlens.loaders.errors import LoadError
from srlens.loaders.human import load_human
from srlens.loaders.load import load_outputs, load_treebank
from srlens.loaders.rules import load_rules

TREEBANK = """# sent_id = s1
# text = Dogs bark.
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# sent_id = s2
# text = Old cats sleep.
1\tOld\told\tADJ\tJJ\t_\t2\tamod\t_\t_
2\tcats\tcat\tNOUN\tNNS\t_\t3\tnsubj\t_\t_
3\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""
RUN = "Dogs bark .\nOld cats sleep .\n"

# Names that would reach outside the warehouse folder or the terminal as given. ESCAPE climbs
# from <warehouse folder>/baselines/<campaign>/<corpus>/<team>/ (where run files went) to the
# test's root folder; ABSOLUTE is replaced by a real absolute path outside the warehouse folder.
ABSOLUTE = "<absolute>"
ESCAPE = "../../../../../planted"
HOSTILE = {
    "dotdot": "..",
    "climb": ESCAPE,
    "absolute": ABSOLUTE,
    "slash": "a/b",
    "backslash": "a\\..\\b",
    "nul": "a\x00b",
    "newline": "a\nb",
    "terminal_escape": "\x1b[2J\x1b[31mred",
    "bidi_override": "abc\u202egpj",
    "long": "x" * 300,
    "empty": "",
    "hidden": ".hidden",
    "space": "a b",
}


def tree(root):
    """Every path under root: file -> sha256, symlink -> its target, folder -> 'dir'."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A warehouse folder: a treebank, one run, a trained baseline model and one generated baseline run."""
    root = tmp_path_factory.mktemp("names")
    wh = root / "srlens.duckdb"
    (root / "tiny.conllu").write_text(TREEBANK)
    (root / "run.txt").write_text(RUN)
    load_treebank(wh, root / "tiny.conllu", "tiny")
    load_outputs(wh, root / "run.txt", "tiny", "t", "r")
    baseline.train(wh, "tiny", "m")
    baseline.generate(wh, "tiny", "hall_nemec", model_name="m", input="form")
    return root


@pytest.fixture
def site(template, tmp_path):
    """A fresh copy of the template in <tmp>/wh, with planted files outside it that must survive."""
    shutil.copytree(template, tmp_path / "wh")
    (tmp_path / "outside").mkdir()
    (tmp_path / "planted.sr").write_text("planted\n")
    (tmp_path / "outside" / "planted.sr").write_text("planted\n")
    return tmp_path


def hostile(kind, root):
    return str(root / "outside" / "planted") if HOSTILE[kind] == ABSOLUTE else HOSTILE[kind]


def command(slot, name, wh_dir):
    """argv of a command with `name` in the argument `slot` and valid values elsewhere."""
    tb, run = str(wh_dir / "tiny.conllu"), str(wh_dir / "run.txt")
    step, argument = slot
    values = {
        "load-treebank": {"--corpus": "tiny2", "--language": "en"},
        "load-outputs": {"--corpus": "tiny", "--team": "t", "--run": "r2", "--campaign": "c"},
        "baseline train": {"--treebank": "tiny", "--model": "m2"},
        "baseline generate": {"--corpus": "tiny", "--team": "baseline", "--run": "g", "--campaign": "default"},
    }[step]
    values[argument] = name
    head = {
        "load-treebank": ["load-treebank", tb],
        "load-outputs": ["load-outputs", run],
        "baseline train": ["baseline", "train"],
        "baseline generate": ["baseline", "generate"],
    }[step]
    tail = ["--model", "m", "--input", "form"] if step == "baseline generate" else []
    return ["--warehouse", str(wh_dir / "srlens.duckdb"), *head, *itertools.chain.from_iterable(values.items()), *tail]


SLOTS = [
    ("load-treebank", "--corpus"),
    ("load-treebank", "--language"),
    ("load-outputs", "--corpus"),
    ("load-outputs", "--team"),
    ("load-outputs", "--run"),
    ("load-outputs", "--campaign"),
    ("baseline train", "--treebank"),
    ("baseline train", "--model"),
    ("baseline generate", "--corpus"),
    ("baseline generate", "--team"),
    ("baseline generate", "--run"),
    ("baseline generate", "--campaign"),
]


@pytest.mark.parametrize("slot", SLOTS, ids=lambda s: f"{s[0]} {s[1]}".replace(" ", "_"))
@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_name_is_refused_in_one_line_and_changes_nothing(site, slot, kind, capsys):
    name = hostile(kind, site)
    before = tree(site)
    assert main(command(slot, name, site / "wh")) == 2
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"srlens: error: {slot[1]} "), err
    assert err.rstrip("\n").isprintable(), err  # no control, escape or bidi character reaches the terminal
    assert tree(site) == before


def test_a_refused_name_names_the_character_safely():
    from srlens.loaders.names import NameRefused, check_name

    for name, shown in [
        ("a/b", "the character '/' (U+002F)"),
        ("a\x1b[2Jb", "the character U+001B"),
        ("a\x00b", "the character U+0000"),
        ("a b", "the character ' ' (U+0020, a space)"),
        ("abc\u202egpj", "the character U+202E"),
        ("..", "starts with '.' (U+002E)"),
        ("x" * 101, "is too long"),
    ]:
        with pytest.raises(NameRefused) as err:
            check_name(name, "--team")
        assert str(err.value).startswith("--team ") and shown in str(err.value), str(err.value)
        assert str(err.value).isprintable()


def submissions(wh):
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return {
            r[0]: r[1:]
            for r in con.execute(
                "select submission_id, campaign, corpus, team, run, sha256 from raw.submissions"
            ).fetchall()
        }
    finally:
        con.close()


def test_identities_never_share_a_key_and_a_reload_replaces_only_its_own(site):
    wh = site / "wh" / "srlens.duckdb"
    run = site / "wh" / "run.txt"
    other = site / "other.txt"
    other.write_text("bark Dogs .\nsleep cats Old .\n")
    # The pair: team a/b with run c, and team a with run b/c, made one key. Both are refused.
    for team, name in [("a/b", "c"), ("a", "b/c")]:
        before = tree(site)
        with pytest.raises(ValueError, match="the character '/'"):
            load_outputs(wh, run, "tiny", team, name)
        assert tree(site) == before
    # Look-alike identities that stay apart, and real shared-task names (SR'19 teams, run 1).
    pairs = [
        (("a", "b.c"), ("a.b", "c")),
        (("a", "b+c"), ("a+b", "c")),
        (("a", "b-c"), ("a-b", "c")),
        (("a", "b_c"), ("a_b", "c")),
        (("BME-UW", "1"), ("bme-uw", "1")),
        (("DipInfo-UniTo", "1"), ("Müller", "中文")),
    ]
    identities = [identity for pair in pairs for identity in pair]
    for team, name in identities:
        load_outputs(wh, run, "tiny", team, name, campaign="sr19")
    loaded = submissions(wh)
    for team, name in identities:
        assert loaded[f"sr19/tiny/{team}/{name}"][:4] == ("sr19", "tiny", team, name)
    # Reloading one identity replaces it alone; the same name in NFD is the same identity.
    load_outputs(wh, other, "tiny", unicodedata.normalize("NFD", "Müller"), "中文", campaign="sr19")
    after = submissions(wh)
    assert len(after) == len(loaded)
    changed = {key for key in after if after[key] != loaded[key]}
    assert changed == {"sr19/tiny/Müller/中文"}


def test_file_names_of_distinct_identities_are_distinct_even_without_case():
    from srlens.loaders.names import file_in, submission_id

    names = ["a", "A", "b", "a.b", "a_b", "a+b", "a-b", "a__b", "a%2Bb", "é", "e"]
    identities = list(itertools.product(names, repeat=4))
    folder = Path("/nonexistent/baselines")
    ids = {submission_id(*identity) for identity in identities}
    files = {file_in(folder, identity, ".sr") for identity in identities}
    assert len(ids) == len(files) == len(identities)
    assert len({f.name.casefold() for f in files}) == len(identities)  # macOS, Windows
    assert all(f.parent == folder for f in files)
    longest = file_in(folder, ["中" * 100] * 4, ".sr")  # 3,600 characters percent-encoded
    assert longest.parent == folder and len(longest.name.encode()) <= 255
    assert longest != file_in(folder, ["中" * 100] * 3 + ["中" * 99], ".sr")


def test_baseline_run_files_stay_in_the_baselines_folder(site):
    wh = site / "wh" / "srlens.duckdb"
    paths = [
        baseline.generate(wh, "tiny", name, model_name="m", input="form", team=team)
        for team, name in [("BME-UW", "1"), ("bme-uw", "1"), ("a", "b.c"), ("a.b", "c")]
    ]
    assert len(set(paths)) == 4
    for path in paths:
        assert path.parent == site / "wh" / "baselines" and path.is_file()
    con = duckdb.connect(str(wh), read_only=True)
    recorded = dict(con.execute("select submission_id, path from baseline.runs").fetchall())
    con.close()
    assert recorded["default/tiny/bme-uw/1"] == str(paths[1])


def test_baseline_never_writes_through_a_planted_symlink(site):
    from srlens.loaders.names import NameRefused

    wh = site / "wh" / "srlens.duckdb"
    target = baseline.run_path(wh, "tiny", "g")
    target.parent.mkdir(exist_ok=True)
    target.symlink_to(site / "outside" / "planted.sr")
    before = tree(site)
    with pytest.raises(NameRefused, match="would not be a plain file name"):
        baseline.generate(wh, "tiny", "g", model_name="m", input="form")
    assert tree(site) == before


def write_csv(path, rows, header=("campaign", "corpus", "team", "run", "annotator", "sent_id", "criterion", "score")):
    path.write_text("\n".join(",".join(map(str, row)) for row in [header, *rows]) + "\n")
    return path


def test_judgment_rows_with_bad_names_are_listed_and_change_nothing(site):
    wh = site / "wh" / "srlens.duckdb"
    bad = write_csv(
        site / "human.csv",
        [
            ["default", "tiny", "t", "r", "a1", "s1", "fluency", 3],  # fine
            ["default", "tiny", "a/b", "r", "a1", "s1", "fluency", 3],  # line 3
            ["default", "tiny", "t", "r\x1b[2J", "a1", "s1", "fluency", 3],  # line 4
            ["..", "tiny", "t", "r", "a1", "s1", "fluency", 3],
        ],
    )  # line 5
    before = tree(site)
    with pytest.raises(LoadError) as err:
        load_human(wh, bad)
    message = err.value.message
    assert err.value.line == 3 and message.startswith("3 problem(s): "), message
    assert "line 3: team 'a/b': the character '/' (U+002F)" in message
    assert "line 4: run 'r\\x1b[2J': the character U+001B" in message
    assert "line 5: campaign '..' starts with '.'" in message
    assert str(err.value).isprintable()
    assert tree(site) == before


@pytest.mark.parametrize(
    "cells, refused",
    [
        (("de", "agreement", "amod/../x", "ADJ", "NOUN", "Case", "both"), "deprel 'amod/../x'"),
        (("de", "agreement", "amod\x1b[2J", "ADJ", "NOUN", "Case", "both"), "deprel 'amod\\x1b[2J'"),
        (("de", "agreement", "nmod';drop", "ADJ", "NOUN", "Case", "both"), "deprel \"nmod';drop\""),
    ],
)
def test_rule_ids_are_made_of_checked_names(site, cells, refused):
    wh = site / "wh" / "srlens.duckdb"
    rules = site / "rules.csv"
    rules.write_text("language,kind,deprel,dep_upos,head_upos,feature,side,enabled\n" + ",".join(cells) + ",false\n")
    before = tree(site)
    with pytest.raises(LoadError) as err:
        load_rules(wh, rules)
    assert err.value.line == 2 and refused in err.value.message, err.value.message
    assert tree(site) == before


@pytest.mark.parametrize("table", ["../../planted", "/abs/planted", "a\nb", "x" * 300, ".hidden"])
def test_export_refuses_a_table_name_that_is_not_a_name(tmp_path, table, capsys):
    wh = tmp_path / "wh" / "srlens.duckdb"
    wh.parent.mkdir()
    con = duckdb.connect(str(wh))
    con.execute("create table sentence_scores as select 1 as x")
    con.execute(f'create table "{table}" as select 1 as x')
    con.close()
    (tmp_path / "planted.parquet").write_text("planted\n")
    before = tree(tmp_path)
    assert main(["--warehouse", str(wh), "export-parquet", str(tmp_path / "wh" / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("srlens: error: table of the main schema "), err
    assert err.rstrip("\n").isprintable()
    assert tree(tmp_path) == before  # not even the output folder


def test_export_never_writes_through_a_planted_symlink(tmp_path):
    wh = tmp_path / "srlens.duckdb"
    con = duckdb.connect(str(wh))
    con.execute("create table sentence_scores as select 1 as x")
    con.close()
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "planted.parquet").write_text("planted\n")
    (out / "sentence_scores.parquet").symlink_to(tmp_path / "planted.parquet")
    before = tree(tmp_path)
    with pytest.raises(ValueError, match="would not be a plain file name"):
        export_parquet(wh, out)
    assert tree(tmp_path) == before


def test_names_of_an_older_warehouse_stay_readable_but_are_not_loaded_again(site, capsys):
    """An older srlens took any name. Such a run is still read; loading it again under that name is refused."""
    wh = site / "wh" / "srlens.duckdb"
    con = duckdb.connect(str(wh))
    for table in ("raw.submissions", "raw.outputs"):
        con.execute(
            f"update {table} set submission_id = 'default/tiny/my team/r' where submission_id = 'default/tiny/t/r'"
        )
    con.execute("update raw.submissions set team = 'my team' where submission_id = 'default/tiny/my team/r'")
    con.close()
    assert main(["--warehouse", str(wh), "status"]) == 0
    capsys.readouterr()
    before = tree(site)
    assert (
        main(
            [
                "--warehouse",
                str(wh),
                "load-outputs",
                str(site / "wh" / "run.txt"),
                "--corpus",
                "tiny",
                "--team",
                "my team",
                "--run",
                "r",
            ]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        "srlens: error: --team 'my team': the character ' ' (U+0020, a space) is not allowed; names are "
        "letters, digits and . _ - + (at most 100 characters, starting with a letter, a digit or _)\n"
    )
    assert tree(site) == before
