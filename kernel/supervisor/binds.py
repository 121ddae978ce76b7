"""The artifacts folders a sandboxed plugin may write: bound read-write into its sandbox.

A one-shot process binds the one folder its call names. A warm worker serves many KBs, and a running
sandbox cannot gain a mount, so a worker binds every folder of its plugin known when it starts
(`<home>/artifacts/*/<pluginId>`, plus any named since); a call that names a new folder (a new KB) makes
the supervisor retire the running workers, and fresh ones start with it bound. The kernel creates each
folder before binding it, and refuses one that would expose the kernel home.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import SPAWN_FAILED, ProcessFailure
from .sandbox import Sandbox


class ArtifactBinds:
    """Per plugin: which artifacts folders its sandboxed processes bind."""

    __slots__ = ("sandbox", "plugin_id", "cwd", "_known", "_passed")

    def __init__(self, sandbox: Sandbox, plugin_id: str, cwd: Path | str):
        self.sandbox, self.plugin_id, self.cwd = sandbox, plugin_id, str(cwd)
        self._known: set[str] | None = None
        # folders as a worker call named them, once checked and known: a warm call's check is one lookup
        # (resolving the path, five lstat calls, was a few percent of a busy daemon's CPU)
        self._passed: set[str] = set()

    def _folders(self) -> set[str]:
        known = self._known
        if known is None:
            root = os.path.join(self.sandbox.home, "artifacts")
            try:
                kbs = os.listdir(root)
            except OSError:
                kbs = []
            candidates = (os.path.join(root, kb, self.plugin_id) for kb in kbs)
            known = self._known = {p for p in candidates if os.path.isdir(p)}
        return known

    def for_call(self, path: str, worker: bool) -> tuple[str | None, bool]:
        """(the folder a one-shot process binds, whether running workers must make way for fresh ones).

        Raises ProcessFailure (SPAWN_FAILED, not counted as a crash) for a folder that holds the kernel
        home or cannot be created."""
        if worker and path in self._passed:
            return None, False
        named = path
        if not os.path.isabs(path):
            path = os.path.join(self.cwd, path)
        path = os.path.normpath(path)
        problem = self.sandbox.artifacts_problem(path)
        if problem:
            raise ProcessFailure(SPAWN_FAILED, problem, crash=False)
        if worker and path in self._folders():
            self._passed.add(named)
            return None, False
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as err:
            raise ProcessFailure(
                SPAWN_FAILED, f"cannot create the artifacts folder {path}: {err}", crash=False
            ) from None
        if worker:
            self._folders().add(path)
            return None, True
        return path, False

    def for_worker(self) -> list[str]:
        """What a worker starting now binds (folders deleted since, e.g. with their KB, are left out)."""
        return sorted(p for p in self._folders() if os.path.isdir(p))
