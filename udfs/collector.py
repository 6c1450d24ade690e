"""The garbage collector paused while a UDF builds many small objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block, for UDFs whose objects hold no
    reference cycles (refcounting frees them all). With the collector on, their number makes it
    rescan the process's whole heap (the dbt process's, the UDFs' kept tables) again and again.
    Left off if it was off; a UDF called while another is paused keeps it paused."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
