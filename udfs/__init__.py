"""Python functions srlens registers in DuckDB (through the dbt-duckdb plugin)."""


def register_all(con):
    """Register every srlens UDF a model calls on a DuckDB connection."""
    from srlens.udfs import accuracy, aligned, bleu, flux, mt_scores, resample, stats

    for module in (accuracy, aligned, bleu, flux, mt_scores, resample, stats):
        module.register(con)


def register_references(con):
    """Register the per-sentence reference functions no model calls (srlens_accuracies,
    srlens_sentence_bleu, srlens_bleu_stats): tests and benchmarks compare the warehouse with them."""
    from srlens.udfs import accuracy, bleu

    accuracy.register_references(con)
    bleu.register_references(con)
