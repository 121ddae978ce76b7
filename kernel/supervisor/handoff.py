"""Units files for one call: how the kernel hands a kb-plugin a source's units (protocol/handoff.py).

Each plugin that declares `handoff: file` has one folder, `<home>/handoff/<pluginId>`, bound read-only
into its sandboxes (workers and one-shot processes alike; a running sandbox cannot gain a mount, so the
folder is bound, not the file). A call's file gets an unguessable name (128 random bits), is written
0400 before the request is sent and unlinked when the call ends, whatever its outcome. The folder is
0300 (write and search, no read), so a plugin can open the file its request names but cannot list the
folder to find another call's; another plugin's folder is not in its sandbox at all. Files a killed kernel
left behind are removed when the folder is next prepared.
"""

from __future__ import annotations

import os
import secrets
import shutil

FOLDER_MODE = 0o300  # owner: create and open by name; nobody lists
FILE_MODE = 0o400


def handoff_root(home: str) -> str:
    return os.path.join(home, "handoff")


class HandoffFolder:
    """One plugin's handoff folder (created empty on first use, before any of its processes start)."""

    __slots__ = ("root", "path", "_ready")

    def __init__(self, home: str, plugin_id: str):
        self.root = handoff_root(home)
        self.path = os.path.join(self.root, plugin_id)
        self._ready = False

    def prepare(self) -> str:
        """Create the folder (and clear what a killed kernel left in it); its path."""
        if not self._ready:
            os.makedirs(self.root, mode=0o700, exist_ok=True)
            if os.path.isdir(self.path):
                os.chmod(self.path, 0o700)
                shutil.rmtree(self.path, ignore_errors=True)
            os.makedirs(self.path, mode=0o700, exist_ok=True)
            os.chmod(self.path, FOLDER_MODE)
            self._ready = True
        return self.path

    def write(self, data: bytes, like: str = "") -> str:
        """A fresh read-only file holding `data` for one call: its path (OSError when it cannot be written).
        The caller removes it with `discard` when the call ends.

        `like`: another call's file (another plugin's folder) holding the same `data`, still there: this
        file is a second link to it (the same read-only bytes, under a name of this folder's), instead of a
        second copy of a large units file; written anew when it cannot be linked (gone, another disk)."""
        from mrpvm.protocol.handoff import HANDOFF_SUFFIX  # the analyser's import only when a file is made

        path = os.path.join(self.prepare(), secrets.token_hex(16) + HANDOFF_SUFFIX)
        if like:
            try:
                os.link(like, path, follow_symlinks=False)
                return path
            except OSError:
                pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except BaseException:
            self.discard(path)
            raise
        return path

    @staticmethod
    def discard(path: str) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
