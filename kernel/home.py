"""The kernel home (MRPVM_HOME, default ~/.mrpvm): standard library only, so `mrpvm ask`'s thin path
(shells/cli/fast_ask.py) finds a running daemon without loading the configuration machinery, and
(`home_folder`) launches its workers before even pathlib is loaded."""

from __future__ import annotations

import os

DB_NAME = "mrpvm.db"  # the store's SQLite file in the home (kernel/db)
URL_VARIABLE = "MRPVM_STORE_URL"  # a store elsewhere: sqlite:PATH or postgresql://… (kernel/db)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def home_dir(environ: dict[str, str] | None = None) -> Path:
    from pathlib import Path

    return Path(home_folder(environ))


def home_folder(environ: dict[str, str] | None = None) -> str:
    """The home as a string (`home_dir` is this as a Path); RuntimeError, as pathlib's, when a `~` in it
    names no known home."""
    env = os.environ if environ is None else environ
    folder = os.path.expanduser(env.get("MRPVM_HOME") or os.path.join(os.path.expanduser("~"), ".mrpvm"))
    if folder.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return folder
