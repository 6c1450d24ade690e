"""Child processes that die with their parent (dbt under `srlens build`, stanza's parse workers), and
SIGTERM taken as Ctrl-C, so that a cancelled command cleans up as an interrupted one does."""

import contextlib
import ctypes
import os
import signal
import threading

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child only calls it


def die_with_parent(parent_pid):
    """preexec_fn of dbt (and the start of a parse worker and of the report's worker): the kernel
    SIGKILLs the child when its parent dies, even by SIGKILL."""

    def preexec():
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return preexec


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (a scheduler cancelling the job, `kill`, `timeout`): unwinds like Ctrl-C."""


@contextlib.contextmanager
def terminate_as_interrupt():
    """SIGTERM raises Terminated in the main thread while the block runs, so that every `finally` and
    rollback of the way out runs: a load's transaction is rolled back, a build kills dbt and removes its
    copy, a parse shard removes its temporary file. Without it Python dies at once and leaves them."""

    def interrupt(signum, frame):
        raise Terminated

    if threading.current_thread() is not threading.main_thread():  # only the main thread takes signals
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cores():
    """The cores this process may run on (its affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1
