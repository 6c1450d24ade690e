"""Memory of a process tree, sampled from /proc (for the stages of bench/campaign.py)."""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from pathlib import Path

from campaign_data import log


def _children_map():
    children = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        children[ppid].append(int(entry))
    return children


def _status_kb(pid):
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:", "Name:")):
                    key, value = line.split(":", 1)
                    values[key] = value.split()[0] if key != "Name" else value.strip()
    except OSError:
        return None
    return values


def _command(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            args = handle.read().split(b"\0")
        names = [Path(a.decode(errors="replace")).name for a in args[:3] if a]
        if names and names[0].startswith("python") and len(names) > 1:
            names = names[1:]  # the script, not the interpreter: dbt, campaign.py
        return " ".join(names)
    except OSError:
        return "?"


class TreeSampler(threading.Thread):
    """Peak summed RSS of a process and its descendants, and the peak (VmHWM) of each process."""

    def __init__(self, pid, label, interval=0.2, heartbeat=30.0):
        super().__init__(daemon=True)
        self.pid, self.label, self.interval, self.heartbeat = pid, label, interval, heartbeat
        self.stop = threading.Event()
        self.peak_tree_kb = 0
        self.hwm = {}  # pid -> (kb, command)
        self.samples = []  # (epoch seconds, summed RSS kB)

    def run(self):
        started = last_beat = time.monotonic()
        while not self.stop.is_set():
            children = _children_map()
            pids, stack = [], [self.pid]
            while stack:
                pid = stack.pop()
                pids.append(pid)
                stack.extend(children.get(pid, ()))
            total = 0
            for pid in pids:
                status = _status_kb(pid)
                if not status or "VmRSS" not in status:
                    continue
                total += int(status["VmRSS"])
                hwm = int(status.get("VmHWM", status["VmRSS"]))
                if hwm > self.hwm.get(pid, (0, ""))[0]:
                    command = self.hwm[pid][1] if pid in self.hwm else _command(pid)
                    self.hwm[pid] = (hwm, command)
            self.peak_tree_kb = max(self.peak_tree_kb, total)
            self.samples.append((time.time(), total))
            now = time.monotonic()
            if now - last_beat >= self.heartbeat:
                last_beat = now
                log(
                    f"{self.label}: {now - started:.0f} s, {total / 2**20:.2f} GiB resident now "
                    f"(load average {os.getloadavg()[0]:.1f})"
                )
            self.stop.wait(self.interval)

    def largest(self):
        if not self.hwm:
            return 0, ""
        kb, command = max(self.hwm.values())
        return kb, command
