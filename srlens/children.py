"""Child processes that die with their parent: dbt under `srlens build`, stanza's parse workers."""

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child only calls it


def die_with_parent(parent_pid):
    """preexec_fn of dbt (and the start of a parse worker): the kernel SIGKILLs the child when its
    parent dies, even by SIGKILL."""

    def preexec():
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return preexec
