"""dbt unit tests: SPEC's worked examples computed by the models themselves on given rows.

They live in the yml beside each model (`unit_tests:`); `srlens build` leaves them out (they check
the SQL, not the data), and this test runs them all with `dbt test --select test_type:unit`. dbt
needs the parent relations to exist (it reads their columns), so they run on a copy of a built
warehouse.
"""

import json
import shutil

from srlens.build import BuildFiles, run_dbt
from srlens.docs import last_build_vars

# unit test name -> the model computing the figure (SPEC section)
SPEC_EXAMPLES = {
    "int_dea_edges_figure1": "int_dea_edges",  # 3: which of Figure 1's 7 edges are matched
    "sentence_scores_figure1_dea": "sentence_scores",  # 3: DEA = 5/7
    "relation_entropy_spec2_example": "relation_entropy",  # 2: 20 head-final, 80 head-initial -> 0.72
    "int_sentence_accuracies_spec5_example": "int_sentence_accuracies",  # 5: SSA 0.44, GSA 0.56
    "suspicious_subtrees_hand_case": "suspicious_subtrees",  # 8: tests/mining/test_mining.py by hand
}


def test_the_spec_examples_pass_as_dbt_unit_tests(built_warehouse, tmp_path):
    copy = tmp_path / "w.duckdb"
    shutil.copy(built_warehouse, copy)
    work = tmp_path / "dbt"
    ok, output = run_dbt(
        ["test", "--select", "test_type:unit", "--vars", json.dumps(last_build_vars(copy))], copy, work, echo=False
    )
    assert ok, output[-4000:]
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    ran = {r["unique_id"]: r["status"] for r in results}
    expected = {f"unit_test.srlens.{model}.{name}": "pass" for name, model in SPEC_EXAMPLES.items()}
    assert ran == expected  # every one ran and passed, and nothing else was selected
    assert f"PASS={len(SPEC_EXAMPLES)} " in output


def test_a_build_runs_no_unit_test(built_warehouse):
    results = json.loads((BuildFiles(built_warehouse).work_dir / "target" / "run_results.json").read_text())
    kinds = {r["unique_id"].split(".")[0] for r in results["results"]}
    assert "model" in kinds and "test" in kinds and "unit_test" not in kinds
