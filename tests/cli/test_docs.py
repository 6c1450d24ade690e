"""A warehouse that documents itself: column comments in DuckDB, contracts, the docs site, real data tests."""

import json
import re
import shutil

import duckdb
import pytest
import yaml

from srlens.build import run_dbt
from srlens.docs import last_build_vars, write_docs
from srlens.paths import DBT_PROJECT_DIR
from tests.support.commands import cli

MART_YML = sorted((DBT_PROJECT_DIR / "models" / "marts").glob("_*.yml"))
MARTS = sorted(p.stem for p in (DBT_PROJECT_DIR / "models" / "marts").glob("*.sql"))


def mart_columns(con):
    return con.execute("""
        select c.table_name, c.column_name, c.comment, t.comment
        from duckdb_columns() c
        join duckdb_tables() t using (database_name, schema_name, table_name)
        where c.database_name = current_database() and c.schema_name = 'main'
        order by c.table_name, c.column_index""").fetchall()


def test_every_mart_column_has_a_comment_in_the_warehouse(warehouse_con):
    rows = mart_columns(warehouse_con)
    assert {r[0] for r in rows} == set(MARTS)
    undocumented = [f"{table}.{column}" for table, column, comment, _ in rows if not (comment or "").strip()]
    assert undocumented == []
    assert all((table_comment or "").strip() for *_, table_comment in rows)
    comments = {(t, c): comment for t, c, comment, _ in rows}
    # the shared docs blocks are rendered, not left as jinja
    assert not any("{{" in comment for comment in comments.values())
    assert comments["sentence_scores", "dea"].startswith("Dependency edge accuracy (SPEC 3)")
    assert comments["sentence_scores", "submission_id"].startswith("The run:")


def test_every_mart_declares_its_columns_with_a_type_in_yml():
    declared = {}
    for path in MART_YML:
        for model in yaml.safe_load(path.read_text()).get("models", []):
            declared[model["name"]] = model.get("columns", [])
    for mart in MARTS:
        assert declared.get(mart), f"{mart} has no columns in models/marts/_*.yml"
        for column in declared[mart]:
            assert column.get("data_type") and column.get("description"), f"{mart}.{column['name']}"
    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    assert project["models"]["srlens"]["marts"]["+contract"] == {"enforced": True}


def test_every_mart_description_starts_with_its_grain():
    """An analyst reads first what one row is ("One row per run and ..."), before joining or summing."""
    descriptions = {}
    for path in MART_YML:
        for model in yaml.safe_load(path.read_text()).get("models", []):
            descriptions[model["name"]] = (model.get("description") or "").strip()
    assert [m for m in MARTS if not descriptions.get(m, "").startswith("One row per ")] == []


def test_no_test_that_cannot_fail():
    """No accepted_values on a boolean (a column or an expression): a NULL passes it, and `[true]` on
    an expression is expression_is_true spelled so that it reads as a value check. No unique key made
    of a concatenated string: a NULL part makes the whole key NULL, which unique ignores."""
    for path in sorted(DBT_PROJECT_DIR.glob("models/**/_*.yml")):
        text = path.read_text()
        for model in yaml.safe_load(text).get("models", []):
            tests = list(model.get("data_tests", []))
            for column in model.get("columns", []):
                tests += [
                    {name: {**(args or {}), "column_name": column["name"]}}
                    if isinstance(args, dict)
                    else {name: {"column_name": column["name"]}}
                    for t in column.get("data_tests", [])
                    for name, args in ([(t, None)] if isinstance(t, str) else t.items())
                ]
            for test in tests:
                if isinstance(test, str):
                    continue
                for name, args in test.items():
                    values = ((args or {}).get("arguments") or {}).get("values", [])
                    assert not (name == "accepted_values" and any(isinstance(v, bool) for v in values)), (
                        path.name,
                        model["name"],
                        test,
                    )
                    assert not (name == "unique" and "||" in str((args or {}).get("column_name", ""))), (
                        path.name,
                        model["name"],
                        test,
                    )


def test_the_docs_site_is_one_offline_page(built_warehouse, tmp_path):
    page = write_docs(built_warehouse, tmp_path / "docs")
    html = page.read_text(encoding="utf-8")
    # the manifest and the catalog are inlined: marts, column descriptions, the report's exposure
    assert "model.srlens.sentence_scores" in html and "exposure.srlens.report" in html
    assert "Dependency edge accuracy (SPEC 3)" in html
    # no script, style, font or image from the network
    external = re.findall(
        r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", html, re.IGNORECASE
    )
    assert external == []
    assert not re.search(r"""@import\s+(url\()?["']?(https?:)?//|url\(["']?(https?:)?//""", html)
    # dbt's usage tracking (a script from a CDN) is never switched on, and its address is gone
    assert "cloudfront.net" not in html and "&&r.turn_on_tracking()" not in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


@pytest.mark.slow  # dbt docs twice
def test_a_second_docs_run_replaces_its_page_only(built_warehouse, tmp_path):
    out = tmp_path / "site"
    out.mkdir()  # an empty folder is taken
    page = write_docs(built_warehouse, out)
    page.write_text("an older page")
    (out / "notes.txt").write_text("the user's notes beside the page")
    assert write_docs(built_warehouse, out) == page and "model.srlens.sentence_scores" in page.read_text()
    assert sorted(p.name for p in out.iterdir()) == [".srlens-docs", "index.html", "notes.txt"]


def test_docs_need_a_built_warehouse(tmp_path):
    warehouse = tmp_path / "empty.duckdb"
    duckdb.connect(str(warehouse)).close()
    with pytest.raises(Exception, match="not built yet"):
        write_docs(warehouse, tmp_path / "docs")


@pytest.mark.slow  # dbt's data tests on copies
def test_the_key_tests_fail_on_a_duplicate_and_on_a_null_key(built_warehouse, tmp_path):
    """unique_key is one query per key that sees a duplicate whose nullable part is NULL and a NULL in
    a key column, and a duplicate of a string key among the mining marts' thousands of rows (it groups
    by a hash of the key first); the tests of the unchanged marts still pass."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(built_warehouse, copy)
    con = duckdb.connect(str(copy))
    try:
        con.execute("insert into error_examples select * from error_examples where view is null limit 1")
        con.execute("update dea_by_relation set relation = null where rowid = (select min(rowid) from dea_by_relation)")
        for mart in ("suspicious_subtrees", "suspicious_subtrees_summary"):
            assert con.execute(f"select count(*) from {mart}").fetchone()[0] > 1000
            con.execute(f"insert into {mart} select * from {mart} where rowid = (select max(rowid) // 2 from {mart})")
        # a subtree numbered twice (what int_subtrees' key rests on): the same string with another form_id
        support = "intermediate.int_subtree_support"
        con.execute(
            f"insert into {support} select corpus, view, subtree, sentences, form_id + 10000000 "
            f"from {support} where rowid = (select max(rowid) // 2 from {support})"
        )
    finally:
        con.close()
    ok, output = run_dbt(
        [
            "test",
            "--select",
            "error_examples",
            "dea_by_relation",
            "sentence_scores",
            "suspicious_subtrees",
            "suspicious_subtrees_summary",
            "int_subtree_support",
            "--vars",
            json.dumps(last_build_vars(copy)),
        ],
        copy,
        tmp_path / "dbt",
        echo=False,
    )
    assert not ok
    failed = set(re.findall(r"FAIL \d+ (\S+)", output))
    assert any(name.startswith("unique_key_error_examples") for name in failed), output[-3000:]
    assert any(name.startswith("unique_key_dea_by_relation") for name in failed), output[-3000:]
    assert "unique_key_suspicious_subtrees_submission_id__view__subtree" in failed, output[-3000:]
    assert "unique_key_suspicious_subtrees_summary_scope__scope_value__view__subtree" in failed, output[-3000:]
    assert "unique_key_int_subtree_support_corpus__view__subtree" in failed, output[-3000:]
    assert not any("sentence_scores" in name for name in failed)


# D6: srlens docs OUT_DIR wrote OUT_DIR/index.html into any folder (a report's, '/') and through a link
# planted there (over the warehouse).


def docs_folder_with_linked_index(tmp_path, demo_wh):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").symlink_to(demo_wh)
    return tmp_path / "site", "holds files srlens did not write (no .srlens-docs marker)"


def marked_docs_folder_with_linked_index(tmp_path, demo_wh):
    folder, _ = docs_folder_with_linked_index(tmp_path, demo_wh)
    (folder / ".srlens-docs").write_text("")
    return folder, "index.html is a symbolic link, which srlens never writes through"


def report_folder(tmp_path, demo_wh):
    (tmp_path / "rep").mkdir()
    for name in (".srlens-report", "index.html"):
        (tmp_path / "rep" / name).write_text("the report")
    return tmp_path / "rep", "holds files srlens did not write (no .srlens-docs marker)"


@pytest.mark.parametrize(
    "folder",
    [
        docs_folder_with_linked_index,
        marked_docs_folder_with_linked_index,
        report_folder,
        lambda tmp_path, demo_wh: ("/", "is the root folder"),
        lambda tmp_path, demo_wh: (tmp_path, f"holds the warehouse {demo_wh}"),
        lambda tmp_path, demo_wh: (demo_wh, "is a file; name a folder"),
    ],
)
def test_docs_write_only_into_their_own_folder(demo_wh, tmp_path, capsys, folder):
    out, message = folder(tmp_path, demo_wh)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code, _, err = cli(capsys, "--warehouse", demo_wh, "docs", out)
    assert code == 2 and err.startswith(f"srlens: error: docs folder {out}: {message}")
    assert err.count("\n") == 1
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
