"""The garbage collector paused while a UDF builds many small objects."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0  # blocks in collector_paused now, over every thread (dbt runs two models at a time)
_was_enabled = False  # whether the first of them found the collector on


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block, for UDFs whose objects hold no
    reference cycles (refcounting frees them all). With the collector on, their number makes it
    rescan the process's whole heap (the dbt process's, the UDFs' kept tables) again and again.
    Left off if it was off; while UDFs on other threads are paused, it stays paused until the last
    of them ends."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
