"""What dbt gives the models, for sqlfluff's jinja templater (see .sqlfluff).

The models are linted without a dbt connection: `var()` answers with the declared defaults of
srlens/build_vars.py, and the few dbt objects the macros touch are stand-ins that change no SQL text.
"""

import re as _re
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from srlens import build_vars  # noqa: E402  (needs the checkout on sys.path)

_DEFAULTS = build_vars.defaults()


def var(name, default=None):
    return _DEFAULTS.get(name, default)


exceptions = SimpleNamespace(raise_compiler_error=lambda message: "")
adapter = SimpleNamespace(get_columns_in_relation=lambda relation: [])
modules = SimpleNamespace(re=_re)
