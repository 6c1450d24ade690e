"""Python functions srlens registers in DuckDB (through the dbt-duckdb plugin)."""


def register_all(con):
    """Register every srlens UDF on a DuckDB connection."""
    from srlens.udfs import accuracy, aligned, bleu, flux, resample, stats

    for module in (accuracy, aligned, bleu, flux, resample, stats):
        module.register(con)
