"""The demo's baseline runs: one model per demo treebank, realized in-sample."""

from __future__ import annotations

from srlens.baseline.model import RANDOM_MODEL, train
from srlens.baseline.realize import generate
from srlens.loaders.names import submission_id

DEMO_CORPORA = ("en_ewt_demo", "fr_gsd_demo")
DEMO_RUNS = {"hall_nemec": None, "random_order": RANDOM_MODEL}  # run -> model (None: the corpus's own)


def demo_baselines(warehouse):
    """Train on each demo treebank and realize it (in-sample: the demo has no train split).

    Runs 'hall_nemec' (full model) and 'random_order' under team 'baseline', campaign 'demo',
    from gold forms so the text reads like the demo's other runs. Returns the submission ids.
    """
    ids = []
    for corpus in DEMO_CORPORA:
        model = train(warehouse, corpus)
        for run, run_model in DEMO_RUNS.items():
            generate(
                warehouse, corpus, run, model_name=run_model or model, input="form", team="baseline", campaign="demo"
            )
            ids.append(submission_id("demo", corpus, "baseline", run))
    return ids
