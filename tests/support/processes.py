"""srlens in real subprocesses: run to the end, or in the background with its stderr read as it comes
(to wait for a line, or for the stop at a $SRLENS_TEST_STOP_AT step)."""

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import REPO, default_sigint


def environment(**extra):
    env = dict(os.environ, PYTHONPATH=str(REPO), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    env.pop("SRLENS_TEST_STOP_AT", None)
    env.update(extra)
    return env


def srlens(*args, cwd, **env):
    """Run srlens to the end; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "srlens.cli", *map(str, args)],
        cwd=cwd,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=600,
    )


class Running:
    """srlens in the background; its stderr lines are collected by a thread as they come."""

    def __init__(self, *args, cwd, **env):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "srlens.cli", *map(str, args)],
            cwd=cwd,
            env=environment(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=default_sigint,
        )
        self.lines, self._queue = [], queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for_line(self, pattern, timeout=300):
        """Block until a stderr line matches `pattern` (no sleep decides anything)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"ended (rc {self.proc.wait()}) before {pattern!r}:\n{''.join(self.lines)}")
            self.lines.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line {pattern!r} in {timeout} s:\n{''.join(self.lines)}")

    def wait_stopped(self, timeout=300):
        """Block until the process has stopped itself at its $SRLENS_TEST_STOP_AT step."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process_state(self.proc.pid) == "T":
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"ended (rc {self.proc.returncode}) without stopping:\n{self.stderr()}")
            time.sleep(0.05)
        raise AssertionError(f"did not stop in {timeout} s")

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def finish(self, timeout=600):
        self.proc.wait(timeout=timeout)
        return self.proc.returncode

    def stderr(self):
        self.proc.wait(timeout=600)
        while True:
            line = self._queue.get(timeout=60)
            if line is None:
                return "".join(self.lines)
            self.lines.append(line)


def process_state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
