"""`srlens export-parquet`: every mart as one Parquet file, for tools that read Parquet but not DuckDB."""

from pathlib import Path

from srlens.loaders.names import check_name, file_in
from srlens.status import WarehouseError, mart_names, open_read_only


def _select_list(con, mart):
    """The mart's columns; HUGEINT ones (sums of counts) as BIGINT, since Parquet would make them DOUBLE."""
    columns = con.execute(
        """
        select column_name, data_type from duckdb_columns()
        where database_name = current_database() and schema_name = 'main' and table_name = ?
        order by column_index""",
        [mart],
    ).fetchall()
    return ", ".join(f'"{name}"::bigint as "{name}"' if kind == "HUGEINT" else f'"{name}"' for name, kind in columns)


def mart_file(out, mart):
    """OUT_DIR/<mart>.parquet; a table whose name is not a valid name (loaders/names.py) is refused."""
    return file_in(out, [check_name(mart, "table of the main schema")], ".parquet", unique=False)


def export_parquet(warehouse, out_dir):
    """Write OUT_DIR/<mart>.parquet for each table of the main schema; returns the paths written."""
    out = Path(out_dir)
    con = open_read_only(warehouse, writable_dir=out)  # the sandbox, allowed to write into OUT_DIR only
    try:
        marts = mart_names(con)
        if not marts:
            raise WarehouseError(f"{warehouse} is not built yet (no marts): run srlens build")
        files = {mart: mart_file(out, mart) for mart in marts}  # every name checked before any file is written
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for mart, path in files.items():
            literal = str(path).replace("'", "''")
            con.execute(f"copy (select {_select_list(con, mart)} from main.\"{mart}\") to '{literal}' (format parquet)")
            paths.append(path)
    finally:
        con.close()
    return paths
