"""Which models another dbt adapter could run (docs/campaigns.md).

The project is built once on an empty scratch warehouse. Each model's compiled SQL (DuckDB
dialect) must translate with sqlglot to Spark SQL that parses again. The models that call a
Python UDF, and the places where sqlglot's Spark SQL would still be wrong, are listed here
explicitly, so that adding one is a decision and docs/campaigns.md stays true.
"""

import json
import re
from pathlib import Path

import duckdb
import pytest
import sqlglot
from sqlglot import ErrorLevel, exp

from srlens import udfs
from srlens.build import DBT_PROJECT_DIR, prepare, run_dbt

pytestmark = pytest.mark.slow  # a build of its own (on an empty warehouse)

SCALING_MD = Path(__file__).resolve().parents[2] / "docs" / "campaigns.md"
MODELS = sorted(p.stem for p in (DBT_PROJECT_DIR / "models").rglob("*.sql"))

# Model -> the Python UDFs it calls. Another engine needs each of these (docs/campaigns.md).
UDF_MODELS = {
    "bucket_scores": {"srlens_bleu_from_stats", "srlens_sacrebleu_corpus_bleu", "srlens_chrf_from_stats"},
    "ensemble_selection": {"srlens_bleu_from_stats"},
    "entropy_dea_correlation": {"srlens_spearman"},
    "int_ensemble_runs": {"srlens_bleu_from_stats"},
    "int_output_words_aligned": {"srlens_aligned_words"},
    "int_pair_resample_sums": {"srlens_resample_sums"},
    "int_sacrebleu_stats": {"srlens_sacrebleu_stats", "srlens_sacrebleu_sentence_bleu", "srlens_chrf_from_stats"},
    "int_sentence_bleu_stats": {"srlens_bleu_from_stats"},
    "int_sentence_flux_weight": {"srlens_mean_flux_weight"},
    "int_sentence_accuracies": {"srlens_accuracy_counts"},
    "int_submission_intervals": {"srlens_bleu_from_stats", "srlens_sacrebleu_corpus_bleu", "srlens_chrf_from_stats"},
    "int_submission_resample_sums": {"srlens_resample_sums"},
    "metric_correlations": {"srlens_spearman_pairs"},
    "pairwise_significance": {
        "srlens_bleu_from_stats",
        "srlens_pair_tests",
        "srlens_sacrebleu_corpus_bleu",
        "srlens_chrf_from_stats",
    },
    "projectivity_tests": {"srlens_mannwhitney"},
    "submission_scores": {"srlens_bleu_from_stats", "srlens_sacrebleu_corpus_bleu", "srlens_chrf_from_stats"},
    "system_correlations": {"srlens_system_correlation"},
}

# Where sqlglot's Spark SQL parses but would not do what the DuckDB SQL does, so the parse check
# cannot see it; each needs per-adapter SQL (docs/campaigns.md explains them):
#   order dropped   list(x order by y) becomes collect_list(x), which has no order
#   two generators  two unnest() in one SELECT become two explode(); Spark allows one
#   function name   a DuckDB function sqlglot does not know is copied unchanged
SPARK_GAPS = {
    "entropy_dea_correlation": {"order dropped"},
    "int_aligned_sentences": {"order dropped"},
    "int_ensemble_candidates": {"function list_sum", "order dropped"},
    "int_aligned_vocabulary": {"order dropped"},
    "int_lambre_argstruct_candidates": {"order dropped"},
    "error_examples": {"order dropped"},
    "int_lambre_checks": {"function list_has_all"},
    "int_pair_resample_sums": {"function hash", "order dropped", "two generators"},
    "int_output_lemmas": {"function generate_subscripts"},
    "int_scored_outputs": {"order dropped"},
    "int_dea_edges": {"function error", "function generate_subscripts", "function list_position"},
    "int_sentence_bleu_stats": {"function error", "function list_position", "two generators"},
    "int_sentence_flux_weight": {"order dropped"},
    "int_submission_resample_sums": {"function hash", "order dropped", "two generators"},
    "int_subtrees": {"order dropped", "function error"},
    "metric_correlations": {"order dropped"},
    "pairwise_significance": {"order dropped", "two generators"},
    "projectivity_tests": {"order dropped"},
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """name -> manifest node of every model, compiled as on a first build (is_incremental() false).

    `dbt run` rather than `dbt compile`: int_corr_sentence_values and int_mining_sentences read
    sentence_scores' columns while compiling, so they must see it built, as in `srlens build`.
    The raw tables are empty, so the run is quick.
    """
    root = tmp_path_factory.mktemp("portability")
    warehouse = root / "srlens.duckdb"
    dbt_vars, _ = prepare(warehouse, "aligned", None, False)
    ok, output = run_dbt(["run", "--vars", json.dumps(dbt_vars)], warehouse, root / "dbt", echo=False)
    assert ok, output[-3000:]
    manifest = json.loads((root / "dbt" / "target" / "manifest.json").read_text())
    return {n["name"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model"}


@pytest.fixture(scope="module")
def udf_names():
    """The functions udfs.register_all adds to a DuckDB connection."""
    con = duckdb.connect()
    try:
        builtin = {r[0] for r in con.execute("select function_name from duckdb_functions()").fetchall()}
        udfs.register_all(con)
        return {r[0] for r in con.execute("select function_name from duckdb_functions()").fetchall()} - builtin
    finally:
        con.close()


def duckdb_tree(node):
    return sqlglot.parse_one(node["compiled_code"], read="duckdb", error_level=ErrorLevel.RAISE)


def spark_sql(node):
    statements = sqlglot.transpile(
        node["compiled_code"],
        read="duckdb",
        write="spark",
        error_level=ErrorLevel.RAISE,
        unsupported_level=ErrorLevel.RAISE,
    )
    assert len(statements) == 1
    return statements[0]


def calls(tree):
    """Names of the functions sqlglot does not know (UDFs among them), lower case."""
    return {f.name.lower() for f in tree.find_all(exp.Anonymous)}


def aggregate_orders(tree):
    """ORDER BYs inside aggregates (not a query's or a window's own)."""
    return sum(
        1
        for o in tree.find_all(exp.Order)
        if not isinstance(o.parent, (exp.Select, exp.Window, exp.SetOperation, exp.Subquery))
    )


def test_every_model_file_is_compiled(compiled):
    assert sorted(compiled) == MODELS


def test_udf_models_are_the_listed_ones(compiled, udf_names):
    assert {"srlens_bleu_from_stats", "srlens_spearman"} <= udf_names  # the registry is read, not empty
    found = {}
    for name, node in compiled.items():
        used = calls(duckdb_tree(node)) & udf_names
        if used:
            found[name] = used
    assert found == UDF_MODELS
    plain = set(compiled) - set(found)
    assert len(plain) >= 40, sorted(plain)  # most of the project is plain SQL (docs/campaigns.md)


@pytest.mark.parametrize("model", MODELS)
def test_model_sql_parses_as_spark(compiled, model):
    """Plain models must be Spark SQL after translation; UDF models too, apart from the UDF call."""
    spark = spark_sql(compiled[model])
    sqlglot.parse_one(spark, read="spark", error_level=ErrorLevel.RAISE)


def spark_gaps(node, udf_names):
    duck = duckdb_tree(node)
    spark = sqlglot.parse_one(spark_sql(node), read="spark")
    gaps = {f"function {name}" for name in calls(spark) - udf_names}
    if aggregate_orders(spark) < aggregate_orders(duck):
        gaps.add("order dropped")
    if any(sum(1 for e in select.expressions if e.find(exp.Explode)) > 1 for select in spark.find_all(exp.Select)):
        gaps.add("two generators")
    return gaps


def test_known_spark_gaps(compiled, udf_names):
    found = {name: spark_gaps(node, udf_names) for name, node in compiled.items()}
    assert {name: gaps for name, gaps in found.items() if gaps} == SPARK_GAPS


def test_scaling_doc_lists_every_model(compiled):
    """docs/campaigns.md's table: one row per model; layer, materialization, UDFs and gaps as found."""
    rows = {}
    for line in SCALING_MD.read_text().splitlines():
        match = re.match(r"\|\s*`(\w+)`\s*\|(.*)\|\s*$", line)
        if match and match.group(1) in compiled:
            rows[match.group(1)] = [c.strip() for c in match.group(2).split("|")]
    assert sorted(rows) == MODELS
    for name, cells in rows.items():
        node = compiled[name]
        assert cells[0] == node["fqn"][1], name  # layer
        assert cells[1] == node["config"]["materialized"], name
        assert set(re.findall(r"srlens_\w+", cells[2])) == UDF_MODELS.get(name, set()), name
        assert {g.strip() for g in cells[3].split(",")} - {"—"} == SPARK_GAPS.get(name, set()), name
