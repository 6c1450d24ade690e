"""The parameters of the marts (dbt vars): each one declared here, once, with what it accepts.

`srlens build` checks every --var against this table before dbt starts (a refused build touches
nothing) and passes dbt every var, the defaults filled in. The models read them through the
macros of dbt_project/macros/vars.sql, which render a number as a number and text as a quoted
string literal, so no value ever reaches the SQL as text to run.
"""

import difflib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass

from srlens import definitions
from srlens.definitions import SCORE_COLUMNS  # the sentence_scores columns that can split FAIL from PASS
from srlens.loaders.errors import printable

# Declared here, beside the vars they set, so that the command line reads them without importing the
# build (srlens --help stays light): how output sentences become words (--processor, $SRLENS_PROCESSOR),
# where the stanza models are ($SRLENS_STANZA_DIR) and what they run on (--device), and the nltk
# whose BLEU arithmetic udfs/bleu.py reproduces bit for bit.
PROCESSORS = ("stanza", "aligned")
PROCESSOR_ENV = "SRLENS_PROCESSOR"
STANZA_DIR_ENV = "SRLENS_STANZA_DIR"
DEVICES = ("auto", "cpu", "cuda")  # where stanza parses (--device)
NLTK_COMPAT_VERSION = "3.10.4"
MAX_NAME = 200  # characters of a corpus or language name in a mapping var


def _number_in(low, high, open_low, open_high):
    def check(value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        if value < low or value > high or (open_low and value == low) or (open_high and value == high):
            return None
        return value

    return check


def _whole_number_from(low):
    def check(value):
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= low else None

    return check


def _ascending_numbers(value):
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value)
    ):
        return None
    return value if all(a < b for a, b in zip(value, value[1:])) else None


def _one_of(choices):
    return lambda value: value if isinstance(value, str) and value in choices else None


def _text(value):
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME and all(c.isprintable() for c in value)


def _signature(value):
    return value if isinstance(value, str) and 0 < len(value) <= 2000 and value.isprintable() else None


def _name_map(value):
    if not isinstance(value, dict) or not all(_text(k) and _text(v) for k, v in value.items()):
        return None
    return value


def _tuning_map(value):
    """Target corpus -> a different tuning corpus (tuning on the target itself would not leave out)."""
    value = _name_map(value)
    return None if value is None or any(k == v for k, v in value.items()) else value


def _name_list(value):
    return value if isinstance(value, list) and all(_text(v) for v in value) else None


@dataclass(frozen=True)
class Var:
    name: str
    default: object
    accepts: str  # what the var takes, for errors and docs/building.md
    check: Callable[[object], object]  # the value to pass to dbt, or None when refused
    meaning: str
    set_by: str = ""  # srlens build sets it itself, from this


VARS = (
    Var(
        "mining_metric",
        "bleu",
        "one of " + ", ".join(SCORE_COLUMNS),
        _one_of(SCORE_COLUMNS),
        "error mining (SPEC 8): the sentence_scores column whose low end is FAIL",
    ),
    Var(
        "mining_quantile",
        0.25,
        "a number from 0 to 1",
        _number_in(0, 1, False, False),
        "FAIL = sentences scoring at or below this quantile of their run (linear interpolation)",
    ),
    Var(
        "mining_min_support",
        2,
        "a whole number, 1 or more",
        _whole_number_from(1),
        "a subtree needs C(f) >= this to be suspicious",
    ),
    Var(
        "lambre_rule_corpora",
        {},
        'a JSON object of language to corpus names, e.g. {"en": "en_ewt_train"}',
        _name_map,
        "L'AMBRE (SPEC 9): the corpus to extract a language's rules from (default: its largest)",
    ),
    Var(
        "correlation_alpha",
        0.05,
        "a number between 0 and 1, both excluded, e.g. 0.05",
        _number_in(0, 1, True, True),
        "correlations (SPEC 10): significant = p_holm < alpha",
    ),
    Var(
        "projectivity_min_nonprojective_share",
        0.05,
        "a number from 0 to 1",
        _number_in(0, 1, False, False),
        "Mann-Whitney test only where non-projective sentences exceed this share",
    ),
    Var(
        "entropy_corpus",
        {},
        'a JSON object of corpus to corpus names, e.g. {"en_ewt_test": "en_ewt_train"}',
        _name_map,
        "the corpus whose relation entropy a corpus's runs are compared with (default: its own)",
    ),
    Var(
        "bootstrap_samples",
        1000,
        "a whole number, 1 or more",
        _whole_number_from(1),
        "significance (SPEC 12): B, paired-bootstrap samples (numpy default_rng(seed).choice(n, (B, n)))",
    ),
    Var(
        "bootstrap_seed",
        12345,
        "a whole number, 0 or more",
        _whole_number_from(0),
        "the seed of every draw, bootstrap and approximate randomization",
    ),
    Var(
        "ar_samples",
        1000,
        "a whole number, 1 or more",
        _whole_number_from(1),
        "R, approximate-randomization trials (sacrebleu's default is 10,000)",
    ),
    Var(
        "significance_alpha",
        0.05,
        "a number between 0 and 1, both excluded, e.g. 0.05",
        _number_in(0, 1, True, True),
        "pairwise_significance names a winner when p_value < alpha",
    ),
    Var(
        "ranking_alpha",
        0.05,
        "a number between 0 and 1, both excluded, e.g. 0.05",
        _number_in(0, 1, True, True),
        "system_rankings (SPEC 12): a run is significantly better when its Holm-adjusted p < alpha",
    ),
    *(
        Var(
            f"bucket_{dimension}",
            bounds,
            "a JSON list of numbers in ascending order, e.g. " + json.dumps(bounds),
            _ascending_numbers,
            f"bucket_scores (SPEC 12): lower bounds of the {dimension} buckets ({unit})",
        )
        for dimension, bounds, unit in (
            ("sentence_length", [0, 6, 11, 21, 41], "analysis-tree words: 0-5, 6-10, 11-20, 21-40, 41+"),
            ("tree_depth", [0, 3, 5, 7], "edges from the root: 0-2, 3-4, 5-6, 7+"),
            ("mean_dependency_distance", [0, 2, 3, 4], "words: <2, 2-3, 3-4, 4+"),
            ("mean_flux_weight", [0, 1, 1.5, 2], "edges: <1, 1-1.5, 1.5-2, 2+"),
            ("relation_frequency", [0, 100, 1000, 10000], "edges of the relation in the language's largest treebank"),
            ("word_frequency", [0, 1, 2, 10, 100, 1000], "occurrences of the lemma in that treebank"),
        )
    ),
    Var(
        "examples_per_key",
        5,
        "a whole number, 1 or more",
        _whole_number_from(1),
        "error_examples: k, the worst sentences kept per (run, relation) and (run, subtree)",
    ),
    Var(
        "examples_max_subtrees",
        25,
        "a whole number, 0 or more",
        _whole_number_from(0),
        "error_examples: per run and view, the most suspicious subtrees that get examples",
    ),
    Var(
        "lambre_reference_team",
        "reference",
        "a team name",
        lambda v: v if _text(v) else None,
        "rule_trends, campaign_trends: this team's runs are human reference translations, scored apart "
        "from the systems (L'AMBRE paper, Figure 5)",
    ),
    Var(
        "ensemble_tuning_corpus",
        {},
        'a JSON object of target corpus to another corpus, e.g. {"en_ewt_test": "en_ewt_dev"}',
        _tuning_map,
        "ensemble_selection (SPEC 12): also learn each target's per-relation DEA on this corpus's runs "
        "(same team and run); every corpus also learns on itself, leaving the sentence out",
    ),
    Var(
        "ensemble_exclude_runs",
        [],
        'a JSON list of submission ids, e.g. ["demo/en_ewt_demo/baseline/gold"]',
        _name_list,
        "ensemble_selection: runs that are never candidates (a copy of the reference, say)",
    ),
    Var(
        "processor",
        "aligned",
        "aligned or stanza",
        _one_of(PROCESSORS),
        "how output sentences became words",
        set_by="--processor",
    ),
    Var(
        "stanza_processors",
        {},
        "a JSON object of language to stanza processor ids",
        _name_map,
        "the stanza models used, by language",
        set_by="--stanza-dir",
    ),
    Var(
        "reference_parsers",
        {},
        "a JSON object of language to stanza processor ids",
        _name_map,
        "the stanza models that parsed the text references (load-references), by language",
        set_by="--stanza-dir",
    ),
    Var(
        "bleu_nltk_version",
        NLTK_COMPAT_VERSION,
        "a version number",
        lambda v: v if _text(v) else None,
        "the nltk whose BLEU arithmetic udfs/bleu.py reproduces",
        set_by="the installed nltk",
    ),
    Var(
        "sacrebleu_signatures",
        {},
        "a JSON object of score to sacrebleu signature",
        _name_map,
        "sacrebleu's signatures of sacreBLEU and chrF (SPEC 13), stored in submission_scores",
        set_by="the installed sacrebleu (srlens/signature.py)",
    ),
    Var(
        "definitions",
        definitions.as_dbt_var(),
        "srlens/definitions.py as it is",
        lambda v: v if v == definitions.as_dbt_var() else None,
        "the lists shared by the Python code and the SQL: metric names, mining views, the rule_id format",
        set_by="srlens/definitions.py",
    ),
    Var(
        "signature",
        "unsigned",
        "a reproducibility signature",
        _signature,
        "srlens/signature.py: the build's signature, stored in submission_scores.signature",
        set_by="the other settings (srlens/signature.py)",
    ),
)
BY_NAME = {v.name: v for v in VARS}


class VarError(ValueError):
    """A --var that cannot be used: one line naming it and what it accepts."""


def defaults():
    return {v.name: v.default for v in VARS}


def user_vars():
    return [v for v in VARS if not v.set_by]


def check(given):
    """The --var values as dbt gets them; VarError for an unknown var, one the build sets, or a bad value."""
    checked = {}
    for name, value in (given or {}).items():
        var = BY_NAME.get(name)
        if var is None:
            names = [v.name for v in user_vars()]
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise VarError(
                f"unknown --var {name!r}: {hint}the parameters are {', '.join(names)} "
                "(docs/building.md: Build parameters)"
            )
        if var.set_by:
            raise VarError(f"--var {name} is set by srlens build itself (from {var.set_by})")
        value_ok = var.check(value)
        if value_ok is None:
            hint = (
                " (write a decimal point, not a comma)"
                if isinstance(value, str) and "," in value and var.accepts.startswith("a number")
                else ""
            )
            raise VarError(f"--var {name}={_shown(value)}: {name} takes {var.accepts}{hint}")
        checked[name] = value_ok
    return checked


def _shown(value):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = printable(text)
    return text if len(text) <= 60 else text[:57] + "..."
