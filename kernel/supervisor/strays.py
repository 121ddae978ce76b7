"""Strays of a sandboxed warm worker: what it left running after a call, killed (see sandbox.py)."""

from __future__ import annotations

import contextlib
import os
import signal

from .kept_files import KeptFiles
from .llm_relay import RELAY_NS_PID


def _children(pid: int) -> list[int]:
    """Direct children of `pid`, over all its threads (/proc/<pid>/task/<tid>/children)."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(p) for p in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


def _pids(data: bytes | None) -> list[int]:
    try:
        return [int(p) for p in data.split()] if data else []
    except ValueError:
        return []


def _ns_pid(pid: int) -> int | None:
    """The pid of `pid` inside its own (innermost) pid namespace."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        return None
    return None


class StraySweeper:
    """Kills what a sandboxed warm worker left running after a call.

    Layout on the host: the started pid (prlimit exec'd into bwrap, outside the plugin's namespaces) →
    bwrap's pid 1 of the plugin's pid namespace → the plugin (pid 2 there). A child that called setsid is
    re-parented to that pid 1; a child still attached stays under the plugin. Both are killed. An LLM
    plugin's relay (`relayed`: llm_relay.py, pid RELAY_NS_PID under that pid 1) is spared.

    The per-call check reads the children of two processes that live as long as the worker (its pid 1 and
    the plugin's main thread) through kept descriptors (kept_files.py); `close()`, when the worker is
    reaped, closes them.
    """

    __slots__ = ("outer", "init", "plugin", "relay", "relayed", "scheduled", "last", "files")

    def __init__(self, outer_pid: int, *, relayed: bool = False):
        self.outer = outer_pid
        self.init: int | None = None
        self.plugin: int | None = None
        self.relay: int | None = None
        self.relayed = relayed
        self.scheduled = False  # the worker's pending sweep (see Worker.after_call)
        self.last = 0.0
        self.files = KeptFiles()

    def _main_children(self, pid: int) -> list[int]:
        """Children of `pid`'s main thread only: one read, for the per-call check."""
        return _pids(self.files.read(f"/proc/{pid}/task/{pid}/children"))

    def close(self) -> None:
        """The worker was reaped: its descriptors go (a late sweep opens what it reads for that read)."""
        self.files.close()

    def _locate(self) -> bool:
        if self.plugin is not None:
            return True
        inits = _children(self.outer)
        if len(inits) != 1:
            return False
        candidates = _children(inits[0])
        plugin = next((p for p in candidates if _ns_pid(p) == 2), None)
        if plugin is None:
            return False
        self.init, self.plugin = inits[0], plugin
        if self.relayed:  # the relay forked before the plugin ran: nothing else can hold its pid
            self.relay = next((p for p in candidates if _ns_pid(p) == RELAY_NS_PID), None)
        return True

    def sweep(self) -> int:
        """SIGKILL every process of the sandbox but pid 1 and the plugin; how many were killed."""
        if not self._locate():
            return 0
        assert self.init is not None and self.plugin is not None
        killed = 0
        for _ in range(8):  # a stray may fork while we look: a few rounds catch its children too
            # Two reads per call: bwrap's pid 1 is single-threaded (escaped children are re-parented to
            # it); the plugin's children are those of its main thread (a child started from another
            # thread dies with the worker, or here once it escapes).
            spared = (self.plugin, self.relay)
            strays = [p for p in self._main_children(self.init) if p not in spared]
            strays += self._main_children(self.plugin)
            if not strays:
                break
            victims = list(strays)
            while strays:  # descendants first gathered, then all killed
                strays = [c for p in strays for c in _children(p)]
                victims.extend(strays)
            for pid in victims:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
        return killed
