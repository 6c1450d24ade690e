"""Where srlens finds the files it ships: the dbt project, the SQL, the demo data.

A wheel puts them inside the package (pyproject.toml, [tool.hatch.build.targets.wheel.sources]);
a source checkout keeps them in the repository's top-level folders of the design. No other
module builds a path from the repository layout.
"""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
INSTALLED = (PACKAGE_DIR / "dbt_project").is_dir()
_ROOT = PACKAGE_DIR if INSTALLED else PACKAGE_DIR.parent

DBT_PROJECT_DIR = _ROOT / "dbt_project"
SQL_DIR = _ROOT / "sql"
RAW_SCHEMA_SQL = SQL_DIR / "raw_schema.sql"
SQL_EXAMPLES_DIR = SQL_DIR / "examples"
UDF_DIR = _ROOT / "udfs"
DEMO_DATA_DIR = PACKAGE_DIR / "demo_data" if INSTALLED else _ROOT / "demo" / "data"
REPORT_ASSETS_DIR = PACKAGE_DIR / "report" / "assets"  # inside the package in both layouts
