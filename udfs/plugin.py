"""dbt-duckdb plugin: registers srlens's Python functions on every dbt connection.

Named in dbt_project/profiles.yml (`plugins: - module: srlens.udfs.plugin`). Models
that call these functions must be tables: a view calling them would break for
every reader outside dbt, where the functions do not exist.
"""

from dbt.adapters.duckdb.plugins import BasePlugin

from srlens.udfs import register_all


class Plugin(BasePlugin):
    def configure_connection(self, conn):
        register_all(conn)
