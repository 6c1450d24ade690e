"""The lists the Python code and the SQL models share, each defined once, here.

`srlens build` passes them to dbt as the var `definitions` (srlens/build_vars.py), and the models
read them from there (dbt_project/macros/definitions.sql): the SQL holds no second copy.
"""

# sentence_scores columns that score a sentence, "higher is better" (SPEC 3-7, 9, 10): the choices
# of the mining metric (var mining_metric).
SCORE_COLUMNS = (
    "bleu",
    "dea",
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "understandability_accuracy",
    "quality_accuracy",
    "reorder_accuracy",
    "rule_score",
    "fluency_z",
    "adequacy_z",
)

# The sentence-level variables of the correlation study (SPEC 10), in the order metric_a/metric_b
# follow (metric_a comes first): the scores, then the section-1 metrics of the reference tree.
CORRELATION_SCORES = (
    "bleu",
    "dea",
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "reorder_accuracy",
    "rule_score",
    "fluency_z",
    "adequacy_z",
    "sacrebleu_bleu",  # sacrebleu's sentence BLEU and chrF (SPEC 13), last: the pairs above keep their order
    "chrf",
)
COMPLEXITY_METRICS = (
    "tree_depth",
    "tree_length",
    "mean_dependency_distance",
    "mean_flux_size",
    "mean_flux_weight",
    "mean_arity",
)
CORRELATION_VARIABLES = CORRELATION_SCORES + COMPLEXITY_METRICS

# The sentence scores whose mean is a metric of a run ('<score>_mean' in submission_scores), as
# compared by pairwise_significance and bucket_scores (SPEC 12).
MEAN_SCORES = (
    "bleu",
    "dea",
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "understandability_accuracy",
    "quality_accuracy",
    "reorder_accuracy",
    "rule_score",
)

# The sufficient statistics of sacrebleu's BLEU and chrF (SPEC 13) of one sentence, in sacrebleu's
# order: BLEU's [hyp_len, ref_len, correct_1..4, total_1..4] and chrF's [hyp, ref, match] for each
# character order 1..6 (udfs/mt_scores.py). Columns of int_sacrebleu_stats and of the significance sums.
SACREBLEU_BLEU_STATS = ("sb_hyp_len", "sb_ref_len") + tuple(f"sb_{kind}{n}" for kind in ("c", "t") for n in range(1, 5))
CHRF_STATS = tuple(f"chrf_{kind}{n}" for n in range(1, 7) for kind in ("h", "r", "m"))

# How error mining labels a subtree's words (SPEC 8), in display order.
MINING_VIEWS = ("dep", "pos", "pos_dep", "lemma")

# The rule_id of a L'AMBRE rule (SPEC 9), from its defining columns: `{column}` fields and literal
# text; an argstruct rule adds RULE_ID_ARGSTRUCT. loaders/rules.py formats and parses it, the
# lambre_rules model writes it in SQL from the same strings.
RULE_ID = "{language}|{kind}|{deprel}|{dep_upos}>{head_upos}|{feature}"
RULE_ID_ARGSTRUCT = "|{side}"


def as_dbt_var():
    """Everything above, as the dbt var `definitions`."""
    return {
        "correlation_scores": list(CORRELATION_SCORES),
        "complexity_metrics": list(COMPLEXITY_METRICS),
        "mean_scores": list(MEAN_SCORES),
        "mining_views": list(MINING_VIEWS),
        "sacrebleu_bleu_stats": list(SACREBLEU_BLEU_STATS),
        "chrf_stats": list(CHRF_STATS),
        "rule_id": RULE_ID,
        "rule_id_argstruct": RULE_ID_ARGSTRUCT,
    }
