"""The kernel home (MRPVM_HOME, default ~/.mrpvm): standard library only, so `mrpvm ask`'s thin path
(shells/cli/fast_ask.py) finds a running daemon without loading the configuration machinery."""

from __future__ import annotations

import os
from pathlib import Path


def home_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("MRPVM_HOME") or Path.home() / ".mrpvm").expanduser()
