"""corpus_stats.nonprojective_pct leaves out sentences without an analysis tree (only punctuation)."""

import duckdb
import pytest

from srlens.build import build
from srlens.loaders.load import load_treebank

pytestmark = pytest.mark.slow  # a build of its own

TREEBANK = """# sent_id = projective
1\tdogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_

# sent_id = nonprojective
1\tsaw\tsee\tVERB\t_\t_\t0\troot\t_\t_
2\tman\tman\tNOUN\t_\t_\t1\tobj\t_\t_
3\tyesterday\tyesterday\tADV\t_\t_\t1\tadvmod\t_\t_
4\twho\twho\tPRON\t_\t_\t2\tacl\t_\t_

# sent_id = only_punctuation
1\t...\t...\tPUNCT\t_\t_\t0\tpunct\t_\t_

"""


def test_a_sentence_of_only_punctuation_counts_in_neither_part_of_the_share(tmp_path):
    treebank = tmp_path / "tb.conllu"
    treebank.write_text(TREEBANK)
    warehouse = tmp_path / "w.duckdb"
    load_treebank(warehouse, treebank, "toy")
    build(warehouse, echo=False, processor="aligned")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        projective = dict(con.execute("select sent_id, is_projective from sentence_complexity").fetchall())
        sentences, pct = con.execute("select sentences, nonprojective_pct from corpus_stats").fetchone()
    finally:
        con.close()
    assert projective == {"projective": True, "nonprojective": False, "only_punctuation": None}
    assert sentences == 3
    assert pct == 50.0  # 1 of the 2 sentences with a tree; counting the third as non-projective gave 66.7
