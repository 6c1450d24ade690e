"""Incremental builds: after loading runs, only the changed runs are recomputed, and
every table equals what a full rebuild of the same data gives."""

import json
import math
import shutil

import duckdb
import pytest

from srlens.build import build, run_dbt
from srlens.loaders.load import load_outputs, load_treebank
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # several builds and full rebuilds per test

DEMO = REPO / "demo" / "data"
CORPUS = "en_ewt_demo"
RUN_FILES = {run: DEMO / "outputs" / CORPUS / f"{run}.sr.txt" for run in ("swaps", "random", "head_final")}
FRENCH = "fr_gsd_demo"


def last_build(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute("select full_refresh from meta.builds order by started_at desc limit 1").fetchone()[0]
    finally:
        con.close()


def changed_submissions(warehouse):
    return sorted(r[0] for r in query(warehouse, "select submission_id from intermediate.int_changed_submissions"))


def query(warehouse, sql):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def changed_copy(run_file, path):
    """The run with its first output reversed, written to path."""
    lines = run_file.read_text().splitlines()
    first_text = next(i for i, line in enumerate(lines) if line.startswith("# text = "))
    lines[first_text] = "# text = " + " ".join(reversed(lines[first_text][len("# text = ") :].split()))
    path.write_text("\n".join(lines) + "\n")
    return path


def manifest_nodes(warehouse, folder):
    """dbt's nodes (their configs, the tests' metadata): `srlens build` writes no manifest.json
    (--no-write-json), so `dbt parse` writes one into `folder`, with the last build's vars."""
    ((dbt_vars,),) = query(warehouse, "select dbt_vars from meta.builds order by started_at desc limit 1")
    ok, output = run_dbt(["parse", "--vars", dbt_vars], warehouse, folder, echo=False)
    assert ok, output
    return json.loads((folder / "target" / "manifest.json").read_text())["nodes"]


def sentence_scores(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = con.execute("select run, sent_idx, bleu, dea, simple_string_accuracy from sentence_scores").fetchall()
        return {(run, sent_idx): scores for run, sent_idx, *scores in rows}
    finally:
        con.close()


def built_tables(warehouse):
    """Every table dbt built (marts and intermediate models), rows sorted, except the build's own bookkeeping."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        names = con.execute("""select table_schema || '.' || table_name from information_schema.tables
                               where table_schema in ('main', 'intermediate') and table_type = 'BASE TABLE'
                                 and table_name not in ('int_changed_submissions', 'int_changed_corpora',
                                                        'int_changed_scopes')""").fetchall()
        return {name: sorted(con.execute(f"select * from {name}").fetchall(), key=repr) for (name,) in names}
    finally:
        con.close()


def assert_same_values(a, b, where):
    """Equal, floats up to the last bits (DuckDB's parallel sums do not fix the order of additions)."""
    if isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), where
    elif isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        assert len(a) == len(b), where
        for x, y in zip(a, b):
            assert_same_values(x, y, where)
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same_values(a[key], b[key], where)
    else:
        assert a == b, where


@pytest.fixture(scope="module")
def incremental_warehouse(tmp_path_factory):
    """A built warehouse with two runs, then a new run and a reloaded (changed) run, built again."""
    root = tmp_path_factory.mktemp("incremental")
    warehouse = root / "wh.duckdb"
    load_treebank(warehouse, DEMO / "treebanks" / f"{CORPUS}.conllu", CORPUS)
    for run in ("swaps", "random"):
        load_outputs(warehouse, RUN_FILES[run], CORPUS, "perturb", run)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DBT_LOG_LEVEL_FILE", "debug")  # dbt.log with the SQL the builds ran (read below)
        build(warehouse, echo=False, processor="aligned")
        first_scores = sentence_scores(warehouse)

        changed = changed_copy(RUN_FILES["random"], root / "random_changed.sr.txt")
        load_outputs(warehouse, changed, CORPUS, "perturb", "random")
        load_outputs(warehouse, RUN_FILES["head_final"], CORPUS, "perturb", "head_final")
        build(warehouse, echo=False, processor="aligned")
    return warehouse, first_scores


def test_loading_runs_makes_the_next_build_incremental_over_those_runs_only(incremental_warehouse):
    warehouse, _ = incremental_warehouse
    assert last_build(warehouse) is False
    assert changed_submissions(warehouse) == [
        f"default/{CORPUS}/perturb/head_final",
        f"default/{CORPUS}/perturb/random",
    ]


def test_a_build_writes_dbts_run_results_and_no_manifest(incremental_warehouse):
    """srlens.dbt_main writes run_results.json itself under --no-write-json; meta.builds counts from it."""
    warehouse, _ = incremental_warehouse
    target = warehouse.parent / f".{warehouse.name}.dbt" / "target"
    assert not (target / "manifest.json").exists()
    ids = [r["unique_id"] for r in json.loads((target / "run_results.json").read_text())["results"]]
    assert "model.srlens.sentence_scores" in ids
    counts = query(warehouse, "select models, tests from meta.builds order by started_at desc limit 1")
    assert counts == [(sum(i.startswith("model.") for i in ids), sum(i.startswith("test.") for i in ids))]


def test_an_incremental_build_keeps_the_marts_comments_and_writes_only_the_new_tables(incremental_warehouse):
    """persist_docs comments a table when it is created: an incremental mart (rows deleted and inserted)
    keeps the last build's comments, a table mart made again (campaign_trends) gets them again."""
    warehouse, _ = incremental_warehouse
    log = (warehouse.parent / f".{warehouse.name}.dbt" / "logs" / "dbt.log").read_text()
    builds = log.split("running dbt with arguments")
    first, last = builds[-2], builds[-1]
    for build_log, written in ((first, {"sentence_scores", "campaign_trends"}), (last, {"campaign_trends"})):
        commented = {m for m in ("sentence_scores", "campaign_trends") if f'"main"."{m}" is $dbt_comment' in build_log}
        assert commented == written
    uncommented = query(
        warehouse,
        """select table_name, column_name from duckdb_columns()
           where database_name = current_database() and schema_name = 'main' and coalesce(trim(comment), '') = ''""",
    )
    assert uncommented == []
    assert query(warehouse, "select count(*) from duckdb_columns() where table_name = 'sentence_scores'")[0][0] > 10


def test_a_mart_dropped_by_hand_comes_back_whole_with_its_comments_in_an_incremental_build(
    incremental_warehouse, tmp_path
):
    """The next build after a user dropped a mart is incremental (no code changed), yet the mart is
    created anew: with all its rows (its SQL compiles without the changed-runs filter) and with the
    comments persist_docs writes only when a table is created."""
    warehouse, _ = incremental_warehouse
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(warehouse, copy)
    rows = "select * from main.error_examples order by all"
    before = query(copy, rows)
    con = duckdb.connect(str(copy))
    con.execute("drop table main.error_examples")
    con.close()
    build(copy, echo=False, processor="aligned")
    assert last_build(copy) is False
    assert query(copy, rows) == before and len(before) > 0
    ((table_comment,),) = query(
        copy, "select comment from duckdb_tables() where schema_name = 'main' and table_name = 'error_examples'"
    )
    assert table_comment.startswith(
        "One row per run, kind, view, key and rank: the sentences that show where a run fails"
    )
    uncommented = query(
        copy,
        """select column_name from duckdb_columns()
           where schema_name = 'main' and table_name = 'error_examples' and coalesce(trim(comment), '') = ''""",
    )
    assert uncommented == []


def test_an_incremental_build_tests_only_the_changed_runs_rows_where_that_is_the_whole_verdict(
    incremental_warehouse, tmp_path
):
    """Data tests that cost what they guard. In the incremental build, a test of an incremental
    model that is row-wise, or a key holding the column the model is refreshed by (submission_id for a
    per-submission model, corpus for a per-corpus one), reads the changed submissions' (corpora's) rows
    only; every other test reads its whole table."""
    warehouse, _ = incremental_warehouse
    target = warehouse.parent / f".{warehouse.name}.dbt" / "target"
    nodes = manifest_nodes(warehouse, tmp_path)
    restricted, expected, tests = {}, {}, 0
    for result in json.loads((target / "run_results.json").read_text())["results"]:
        test = nodes.get(result["unique_id"])
        if test is None or test["resource_type"] != "test":
            continue
        tests += 1
        meta, model = test["test_metadata"], nodes[test["attached_node"]]["config"]
        refreshed_by = {
            "submission_id": "int_changed_submissions",
            "corpus": "int_changed_corpora",
            "scope": "int_changed_scopes",
        }.get(model["meta"].get("refreshed_by"))
        if (
            model["materialized"] == "incremental"
            and refreshed_by
            and (
                meta["name"] in ("not_null", "accepted_values", "expression_is_true")
                or (meta["name"] == "unique_key" and model["meta"]["refreshed_by"] in meta["kwargs"]["columns"])
            )
        ):
            expected[test["name"]] = refreshed_by
        for changed in ("int_changed_submissions", "int_changed_corpora", "int_changed_scopes"):
            if changed in result["compiled_code"]:
                restricted[test["name"]] = changed
    assert restricted == expected
    assert restricted["unique_key_sentence_scores_submission_id__sent_id"] == "int_changed_submissions"
    assert restricted["unique_key_ensemble_selection_corpus__tuning_corpus"] == "int_changed_corpora"
    key = "unique_key_suspicious_subtrees_summary_scope__scope_value__view__subtree"
    assert restricted[key] == "int_changed_scopes"
    assert restricted["unique_key_submission_scores_submission_id"] == "int_changed_submissions"
    # its key does not hold the corpus (a run's pairs are all of its corpus, but the rule stays simple)
    assert "unique_key_pairwise_significance_metric__submission_a__submission_b" not in restricted
    assert 0 < len(restricted) < tests


def test_an_incremental_build_leaves_the_views_as_they_are_and_still_runs_their_tests(incremental_warehouse, tmp_path):
    """dbt_project/selectors.yml: no code changed since the last build, so no view is created again."""
    warehouse, _ = incremental_warehouse
    target = warehouse.parent / f".{warehouse.name}.dbt" / "target"
    nodes = manifest_nodes(warehouse, tmp_path)
    results = json.loads((target / "run_results.json").read_text())["results"]
    ran = [nodes[r["unique_id"]] for r in results if r["unique_id"] in nodes]  # (not the exposure)
    views = {u for u, n in nodes.items() if n["resource_type"] == "model" and n["config"]["materialized"] == "view"}
    assert "model.srlens.sentence_scores" in {n["unique_id"] for n in ran}
    assert not [n["name"] for n in ran if n["unique_id"] in views]
    view_tests = [n["name"] for n in ran if n["resource_type"] == "test" and n["attached_node"] in views]
    assert "unique_key_stg_outputs_submission_id__sent_idx" in view_tests


def assert_equal_to_a_full_rebuild(warehouse, tmp_path, dbt_vars=None):
    """Every table of the warehouse equals that of a full rebuild of its copy; returns the tables."""
    full = tmp_path / "full.duckdb"
    shutil.copyfile(warehouse, full)
    build(full, echo=False, processor="aligned", dbt_vars=dbt_vars, full_refresh=True)
    assert last_build(full) is True
    incremental, rebuilt = built_tables(warehouse), built_tables(full)
    assert incremental.keys() == rebuilt.keys()
    for name in incremental:
        assert len(incremental[name]) == len(rebuilt[name]), name
        for a, b in zip(incremental[name], rebuilt[name]):
            assert_same_values(a, b, name)
    return incremental


def test_an_incremental_build_equals_a_full_rebuild(incremental_warehouse, tmp_path):
    warehouse, _ = incremental_warehouse
    tables = assert_equal_to_a_full_rebuild(warehouse, tmp_path)
    assert len(tables["main.sentence_scores"]) == 3 * 200


def summary_took_the_added_runs_form(warehouse):
    """Whether the last build aggregated only the added runs' subtrees in suspicious_subtrees_summary."""
    target = warehouse.parent / f".{warehouse.name}.dbt" / "target"
    results = json.loads((target / "run_results.json").read_text())["results"]
    (summary,) = [r for r in results if r["unique_id"] == "model.srlens.suspicious_subtrees_summary"]
    return "added_subtrees" in summary["compiled_code"]


def test_an_added_run_updates_the_other_subtrees_of_its_scopes_in_place(incremental_warehouse, tmp_path):
    """Only runs added: suspicious_subtrees_summary aggregates again the subtrees the added run mined,
    and updates submissions_in_scope and coverage_pct of its scopes' other subtrees. A build that
    kept those rows as they were, or skipped a subtree of the run, would differ from the full rebuild."""
    warehouse = tmp_path / "added.duckdb"
    shutil.copyfile(incremental_warehouse[0], warehouse)
    # a second corpus: the runs of one corpus mine nearly the same subtrees (the reference's)
    load_treebank(warehouse, DEMO / "treebanks" / f"{FRENCH}.conllu", FRENCH)
    load_outputs(warehouse, DEMO / "outputs" / FRENCH / "swaps.sr.txt", FRENCH, "perturb", "swaps")
    build(warehouse, echo=False, processor="aligned")
    summary = (
        "select scope, scope_value, view, subtree, submissions, submissions_in_scope from suspicious_subtrees_summary"
    )
    before = {row[:4]: row[4:] for row in query(warehouse, summary)}
    load_outputs(warehouse, DEMO / "outputs" / FRENCH / "random.sr.txt", FRENCH, "perturb", "random")
    build(warehouse, echo=False, processor="aligned")
    assert last_build(warehouse) is False
    assert summary_took_the_added_runs_form(warehouse)
    added = set(
        query(
            warehouse,
            f"select view, subtree from suspicious_subtrees where submission_id = 'default/{FRENCH}/perturb/random'",
        )
    )
    now = {row[:4]: row[4:] for row in query(warehouse, summary)}
    scope_all = [key for key in now if key[0] == "all"]
    kept = [key for key in scope_all if key[2:] not in added]
    mined = [key for key in scope_all if key[2:] in added]
    assert kept and mined
    # the other subtrees: the same runs mined them, one run more in the scope
    assert all(now[key] == (before[key][0], before[key][1] + 1) for key in kept)
    assert all(now[key][0] == before[key][0] + 1 for key in mined)
    assert_equal_to_a_full_rebuild(warehouse, tmp_path)


def test_a_runs_team_and_campaign_come_and_go_with_it_in_the_mining_summary(incremental_warehouse, tmp_path):
    """suspicious_subtrees_summary is incremental by scope: a run of a new team in a new campaign adds
    those two scopes, and removing the run removes them again (the last build's team and campaign of a
    run are kept in meta.built_submissions). A build that kept the scopes of a removed run would differ
    from the full rebuild."""
    warehouse = tmp_path / "scopes.duckdb"
    shutil.copyfile(incremental_warehouse[0], warehouse)
    scopes = "select distinct scope, scope_value from suspicious_subtrees_summary where scope in ('team', 'campaign')"
    before = sorted(query(warehouse, scopes))
    load_outputs(warehouse, RUN_FILES["swaps"], CORPUS, "loner", "solo", campaign="other")
    build(warehouse, echo=False, processor="aligned")
    assert last_build(warehouse) is False
    assert sorted(query(warehouse, scopes)) == sorted([*before, ("campaign", "other"), ("team", "loner")])
    assert summary_took_the_added_runs_form(warehouse)  # only a run was added
    assert_equal_to_a_full_rebuild(warehouse, tmp_path)
    remove_run(warehouse, f"other/{CORPUS}/loner/solo")
    build(warehouse, echo=False, processor="aligned")
    assert last_build(warehouse) is False
    assert not summary_took_the_added_runs_form(warehouse)  # a removed run: whole scopes again
    assert sorted(query(warehouse, "select * from intermediate.int_changed_scopes")) == sorted(
        [("all", "all"), ("campaign", "other"), ("corpus", CORPUS), ("team", "loner")]
    )
    assert sorted(query(warehouse, scopes)) == before
    assert_equal_to_a_full_rebuild(warehouse, tmp_path)


def test_the_unchanged_run_keeps_its_scores_and_the_changed_run_changes_where_it_changed(incremental_warehouse):
    warehouse, first = incremental_warehouse
    now = sentence_scores(warehouse)
    assert {key: now[key] for key in first if key[0] == "swaps"} == {
        key: v for key, v in first.items() if key[0] == "swaps"
    }
    changed = sorted(key for key in first if key[0] == "random" and first[key] != now[key])
    assert changed == [("random", 1)]  # only the first sentence of the reloaded run was changed
    assert len([key for key in now if key[0] == "head_final"]) == 200


@pytest.mark.parametrize("change", ["var", "treebank"])
def test_a_change_beyond_runs_makes_a_full_build(incremental_warehouse, tmp_path, change):
    warehouse, _ = incremental_warehouse
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(warehouse, copy)
    if change == "treebank":
        load_treebank(copy, DEMO / "treebanks" / "fr_gsd_demo.conllu", "fr_gsd_demo")
        build(copy, echo=False, processor="aligned")
    else:
        build(copy, echo=False, processor="aligned", dbt_vars={"mining_quantile": 0.1})
    assert last_build(copy) is True
    results = json.loads((tmp_path / ".copy.duckdb.dbt" / "target" / "run_results.json").read_text())["results"]
    tested = [r for r in results if r["unique_id"].startswith("test.")]
    assert tested and not any("int_changed_submissions" in r["compiled_code"] for r in tested)  # every row


# Two corpora, French learning its ensemble on English too (var ensemble_tuning_corpus): the
# per-corpus models (macros/incremental_by_corpus.sql) recompute the corpora of the changed runs, and
# the ensembles of the corpora that learn on them.
TUNING = {"ensemble_tuning_corpus": {FRENCH: CORPUS}}
ENGLISH_ALONE, FRENCH_ALONE, FRENCH_ON_ENGLISH = (CORPUS, CORPUS), (FRENCH, FRENCH), (FRENCH, CORPUS)


def per_corpus_rows(warehouse):
    """(table, corpus, tuning_corpus) -> its rows, for the ensembles' candidates and the pairwise tests."""
    rows = {}
    for corpus, tuning in (ENGLISH_ALONE, FRENCH_ALONE, FRENCH_ON_ENGLISH):
        rows["candidates", corpus, tuning] = sorted(
            query(
                warehouse,
                "select * from intermediate.int_ensemble_candidates "
                f"where corpus = '{corpus}' and tuning_corpus = '{tuning}'",
            ),
            key=repr,
        )
        if corpus == tuning:
            rows["pairwise", corpus, tuning] = sorted(
                query(warehouse, f"select * from pairwise_significance where corpus = '{corpus}'"), key=repr
            )
    return rows


def remove_run(warehouse, submission_id):
    """What a user removing a run does: its rows go from the raw tables."""
    con = duckdb.connect(str(warehouse))
    try:
        for table in ("raw.output_tokens", "raw.outputs", "raw.submissions"):
            con.execute(f"delete from {table} where submission_id = ?", [submission_id])
    finally:
        con.close()


@pytest.fixture(scope="module")
def two_corpora(tmp_path_factory):
    """Built in full, then step by step, each step built incrementally and kept as a copy: an English
    run (English is French's tuning corpus) reloaded with other outputs, then a French run removed."""
    root = tmp_path_factory.mktemp("two_corpora")
    warehouse = root / "wh.duckdb"
    for corpus in (CORPUS, FRENCH):
        load_treebank(warehouse, DEMO / "treebanks" / f"{corpus}.conllu", corpus)
    for corpus, runs in ((CORPUS, ("swaps", "random")), (FRENCH, ("swaps", "random", "drops"))):
        for run in runs:
            load_outputs(warehouse, DEMO / "outputs" / corpus / f"{run}.sr.txt", corpus, "perturb", run)
    build(warehouse, echo=False, processor="aligned", dbt_vars=TUNING)
    steps = {"built": root / "built.duckdb"}
    shutil.copyfile(warehouse, steps["built"])

    load_outputs(warehouse, DEMO / "outputs" / CORPUS / "drops.sr.txt", CORPUS, "perturb", "random")
    build(warehouse, echo=False, processor="aligned", dbt_vars=TUNING)
    steps["tuning run changed"] = root / "tuning_run_changed.duckdb"
    shutil.copyfile(warehouse, steps["tuning run changed"])

    remove_run(warehouse, f"default/{FRENCH}/perturb/drops")
    build(warehouse, echo=False, processor="aligned", dbt_vars=TUNING)
    steps["run removed"] = warehouse
    return steps


# step -> (the step before it, the corpora with a changed run, the rows that change, the rows kept)
STEPS = {
    "tuning run changed": (
        "built",
        [CORPUS],
        # French's ensemble on English: the changed English run teaches French's run of the same name
        [("candidates", *ENGLISH_ALONE), ("candidates", *FRENCH_ON_ENGLISH), ("pairwise", *ENGLISH_ALONE)],
        [("candidates", *FRENCH_ALONE), ("pairwise", *FRENCH_ALONE)],
    ),
    "run removed": (
        "tuning run changed",
        [FRENCH],
        [("candidates", *FRENCH_ALONE), ("candidates", *FRENCH_ON_ENGLISH), ("pairwise", *FRENCH_ALONE)],
        [("candidates", *ENGLISH_ALONE), ("pairwise", *ENGLISH_ALONE)],
    ),
}


@pytest.mark.parametrize("step", STEPS)
def test_a_per_corpus_model_recomputes_the_changed_corpora_and_equals_a_full_rebuild(two_corpora, step, tmp_path):
    """A build that kept the rows that change would differ from the full rebuild."""
    previous, changed, moved, kept = STEPS[step]
    warehouse = two_corpora[step]
    assert last_build(warehouse) is False
    assert sorted(r[0] for r in query(warehouse, "select corpus from intermediate.int_changed_corpora")) == changed
    before, now = per_corpus_rows(two_corpora[previous]), per_corpus_rows(warehouse)
    assert all(now[key] for key in moved)
    assert [key for key in moved if now[key] == before[key]] == []
    assert [key for key in kept if now[key] != before[key]] == []
    assert_equal_to_a_full_rebuild(warehouse, tmp_path, dbt_vars=TUNING)


def test_the_marts_constraints_refuse_what_their_data_tests_refused(incremental_warehouse, tmp_path):
    """The marts' not_null, accepted_values and expression_is_true tests are contract constraints
    (docs/building.md, "Data tests"): a row they would have failed is refused when it is written."""
    warehouse, _ = incremental_warehouse
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(warehouse, copy)
    con = duckdb.connect(str(copy))
    try:
        for table, change in (
            ("sentence_scores", "is_missing = null"),  # not_null
            ("sentence_scores", "processing_status = 'parsed'"),  # accepted_values
            ("error_examples", "sent_id = null"),  # expression_is_true (error_examples_complete)
            ("suspicious_subtrees", "c_f_fail = c_f + 1"),  # expression_is_true (suspicious_subtrees_counts_add_up)
        ):
            one_row = f"update {table} set {change} where rowid = (select min(rowid) from {table})"
            with pytest.raises(duckdb.ConstraintException):
                con.execute(one_row)
        con.execute("update sentence_scores set processing_status = 'missing' where rowid = 0")  # an accepted value
    finally:
        con.close()
