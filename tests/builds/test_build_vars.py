"""Attacks on the build's vars (--var KEY=VALUE): each is declared once with its type and range,
checked before dbt starts, and reaches the SQL only as a number or a quoted string literal."""

import hashlib
import json
import re

import duckdb
import pytest

from srlens import build_vars
from srlens.build import build
from srlens.cli import main, parse_var
from srlens.loaders.load import load_outputs, load_treebank
from srlens.paths import DBT_PROJECT_DIR
from srlens.status import status
from tests.conftest import REPO, entropy_example_conllu

REFUSED = [
    # (--var text, words the one-line error must hold)
    (
        "correlation_alpha=0,05",
        "correlation_alpha takes a number between 0 and 1, both excluded, e.g. 0.05 "
        "(write a decimal point, not a comma)",
    ),
    ("correlation_alpha=0.05 or true", "correlation_alpha takes a number between 0 and 1"),
    ("correlation_alpha=(select 1)", "correlation_alpha takes a number between 0 and 1"),
    ("correlation_alpha=0", "correlation_alpha takes a number between 0 and 1, both excluded"),
    ("correlation_alpha=1", "correlation_alpha takes a number between 0 and 1, both excluded"),
    ("correlation_alpha=NaN", "correlation_alpha takes a number"),
    ("correlation_alpha=Infinity", "correlation_alpha takes a number"),
    ("correlation_alpha=true", "correlation_alpha takes a number"),
    ("correlation_alpha=\"0.05\"", "correlation_alpha takes a number"),
    (
        "projectivity_min_nonprojective_share=0.05 or 1=1",
        "projectivity_min_nonprojective_share takes a number from 0 to 1",
    ),
    ("projectivity_min_nonprojective_share=-0.1", "projectivity_min_nonprojective_share takes a number from 0 to 1"),
    ("projectivity_min_nonprojective_share=1.5", "projectivity_min_nonprojective_share takes a number from 0 to 1"),
    ("mining_quantile=0,25", "mining_quantile takes a number from 0 to 1 (write a decimal point, not a comma)"),
    ("mining_quantile=[0.25]", "mining_quantile takes a number from 0 to 1"),
    ("mining_min_support=2.5", "mining_min_support takes a whole number, 1 or more"),
    ("mining_min_support=0", "mining_min_support takes a whole number, 1 or more"),
    ("mining_min_support=2 or 1=1", "mining_min_support takes a whole number, 1 or more"),
    ("mining_metric=bleu from sentence_scores; --", "mining_metric takes one of bleu, dea,"),
    ("mining_metric=reference_words", "mining_metric takes one of bleu, dea,"),
    ("lambre_rule_corpora=en_ewt_train", "lambre_rule_corpora takes a JSON object of language to corpus names"),
    ("lambre_rule_corpora={\"en\": 5}", "lambre_rule_corpora takes a JSON object of language to corpus names"),
    ("lambre_rule_corpora={\"en\": \"\"}", "lambre_rule_corpora takes a JSON object"),
    ("entropy_corpus={\"a\": [\"b\"]}", "entropy_corpus takes a JSON object of corpus to corpus names"),
    ("entropy_corpus={\"a\": \"b\\u001b[31m\"}", "entropy_corpus takes a JSON object"),
    ("mining_quantil=0.1", "unknown --var 'mining_quantil': did you mean mining_quantile?"),
    ("processor=stanza", "--var processor is set by srlens build itself (from --processor)"),
    ("bleu_nltk_version=1", "--var bleu_nltk_version is set by srlens build itself"),
]


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


@pytest.fixture(scope="module")
def small_warehouse(tmp_path_factory):
    """SPEC's entropy example (100 sentences) and one run of it, loaded, not built."""
    root = tmp_path_factory.mktemp("vars")
    treebank, run = root / "entropy.conllu", root / "run.txt"
    treebank.write_text(entropy_example_conllu())
    # every fifth sentence in the wrong order, so that scores vary
    run.write_text(
        "".join(("dog big" if i % 5 == 0 else "big dog" if i < 20 else "dog big") + "\n" for i in range(100))
    )
    warehouse = root / "w.duckdb"
    load_treebank(warehouse, treebank, "entropy_example")
    load_outputs(warehouse, run, "entropy_example", "t", "r")
    return warehouse


def folder_state(warehouse):
    return (
        sha256(warehouse),
        sha256(warehouse.with_name(warehouse.name + ".wal")),
        sorted(p.name for p in warehouse.parent.iterdir()),
    )


@pytest.mark.parametrize("text, words", REFUSED, ids=[t for t, _ in REFUSED])
def test_bad_var_is_one_line_naming_it_and_changes_nothing(small_warehouse, text, words, capsys):
    before = folder_state(small_warehouse)
    assert main(["--warehouse", str(small_warehouse), "build", "--processor", "aligned", "--var", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("srlens: error: ") and err.count("\n") == 1, err
    assert words in err
    assert "\x1b" not in err  # a control character in the value is not echoed raw
    assert folder_state(small_warehouse) == before


def test_the_python_build_checks_vars_too(small_warehouse):
    before = folder_state(small_warehouse)
    with pytest.raises(build_vars.VarError, match="correlation_alpha takes a number"):
        build(small_warehouse, echo=False, processor="aligned", dbt_vars={"correlation_alpha": "0.05 or true"})
    assert folder_state(small_warehouse) == before


@pytest.mark.parametrize(
    "text, value",
    [
        ("correlation_alpha=0.01", 0.01),
        ("correlation_alpha=1e-3", 0.001),
        ("mining_quantile=0", 0),
        ("mining_quantile=1", 1),
        ("mining_min_support=3", 3),
        ("mining_metric=fluency_z", "fluency_z"),
        ("projectivity_min_nonprojective_share=0", 0),
        ("entropy_corpus={\"en_ewt_test\": \"en_ewt_train\"}", {"en_ewt_test": "en_ewt_train"}),
    ],
)
def test_good_values_pass_unchanged(text, value):
    key, parsed = parse_var(text)
    assert build_vars.check({key: parsed}) == {key: value}


def test_every_default_is_accepted_by_its_own_check():
    for var in build_vars.VARS:
        assert var.check(var.default) == var.default, var.name


def _var_names_in_project():
    """Every var name the dbt project reads, directly (var('x')) or through the vars macros."""
    names = set()
    for path in list(DBT_PROJECT_DIR.glob("models/**/*.sql")) + list(DBT_PROJECT_DIR.glob("macros/*.sql")):
        names |= set(re.findall(r"""(?:var|number_var|mapping_var)\(\s*['"](\w+)['"]""", path.read_text()))
    return names


def test_the_project_reads_exactly_the_declared_vars():
    assert _var_names_in_project() == set(build_vars.BY_NAME)


def test_no_model_pastes_a_var_without_a_macro():
    # A number must go through number_var, text through string_literal or mapping_var: no
    # '{{ var("x") }}' in SQL and no var('x', default) with a second default beside build_vars.py.
    for path in DBT_PROJECT_DIR.glob("models/**/*.sql"):
        text = path.read_text()
        assert not re.search(r"""\{\{\s*var\(""", text), path.name
        assert not re.search(r"""var\(\s*['"]\w+['"]\s*,""", text), path.name


@pytest.mark.slow
def test_vars_reach_the_sql_as_checked_literals(small_warehouse, tmp_path):
    # A real build with a quote-laden corpus name in a mapping and an unusual alpha: the compiled
    # SQL holds them as a quoted string and a number, and the marts use them.
    odd = "x'); drop table raw.sentences; --"
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(small_warehouse.read_bytes())
    build(
        copy,
        echo=False,
        processor="aligned",
        dbt_vars={"correlation_alpha": 0.0123, "entropy_corpus": {odd: "entropy_example"}, "mining_quantile": 0.4},
    )
    compiled = {p.name: p.read_text() for p in (tmp_path / ".w.duckdb.dbt" / "target" / "compiled").rglob("*.sql")}
    assert "p_holm < 0.0123 as significant" in compiled["metric_correlations.sql"]
    assert "('x''); drop table raw.sentences; --', 'entropy_example')" in compiled["entropy_dea_correlation.sql"]
    assert "'bleu' as metric" in compiled["suspicious_subtrees.sql"]
    assert "0.4::double as quantile" in compiled["suspicious_subtrees.sql"]
    con = duckdb.connect(str(copy), read_only=True)
    try:
        assert con.execute("select count(*) from raw.sentences").fetchone()[0] == 100
        rows = con.execute("select p_holm, significant from metric_correlations where p_holm is not null").fetchall()
        assert rows and all(significant == (p_holm < 0.0123) for p_holm, significant in rows)
        assert con.execute("select distinct quantile from suspicious_subtrees").fetchall() in ([], [(0.4,)])
        recorded = json.loads(con.execute("select dbt_vars from meta.builds").fetchone()[0])
    finally:
        con.close()
    assert recorded["entropy_corpus"] == {odd: "entropy_example"} and recorded["correlation_alpha"] == 0.0123
    assert recorded["mining_metric"] == "bleu"  # the defaults are passed (and recorded) too
    # status lists only what differs from the defaults
    vars_line = next(line for line in status(copy).splitlines() if line.startswith("  vars: "))
    assert vars_line == (
        '  vars: correlation_alpha=0.0123, entropy_corpus={"x\'); drop table raw.sentences; --": '
        '"entropy_example"}, mining_quantile=0.4'
    )


def test_the_readme_table_lists_every_var_with_its_default():
    readme = (REPO / "docs" / "building.md").read_text()
    for var in build_vars.user_vars():
        row = next((line for line in readme.splitlines() if line.startswith(f"| `{var.name}` |")), None)
        assert row is not None, var.name
        assert f"| `{json.dumps(var.default)}` |" in row, var.name
