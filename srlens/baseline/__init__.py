"""Baseline realizers: the linearization model of Hall and Nemec (2007) on UD trees.

A realizer gets a reference tree without its word order (every word's lemma
or form, UPOS, relation and head) and must put the words in order. This one
orders each head's dependents bottom-up, as in Hall and Nemec's Algorithm 1,
so the output is always projective with respect to the input tree.

* model.py: the statistics, counted set-based in SQL (`train`), and their interpolated
  probabilities for a corpus's trees;
* search.py: the order of one tree's words under those probabilities (pure Python);
* realize.py: a whole corpus realized, written as an sr file and loaded as a run (`generate`);
* demo.py: the demo's two baseline runs per treebank.
"""

from srlens.baseline.demo import demo_baselines
from srlens.baseline.model import (
    FEATURES,
    RANDOM_MODEL,
    BaselineError,
    default_model_name,
    model_variables,
    precedence_probabilities,
    train,
)
from srlens.baseline.realize import INPUTS, generate, linearize, run_path
from srlens.baseline.search import EXACT_MAX, best_order, linearize_sentence

__all__ = [
    "EXACT_MAX",
    "FEATURES",
    "INPUTS",
    "RANDOM_MODEL",
    "BaselineError",
    "best_order",
    "default_model_name",
    "demo_baselines",
    "generate",
    "linearize",
    "linearize_sentence",
    "model_variables",
    "precedence_probabilities",
    "run_path",
    "train",
]
