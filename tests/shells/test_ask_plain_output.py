"""`mrpvm ask`'s answer printed to a pipe is the plain Markdown text, written without loading rich (a
one-question process spares its import); a terminal, TTY_COMPATIBLE=1 or FORCE_COLOR still goes through
rich, which decides how to render."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = """
import sys
from types import SimpleNamespace
from mrpvm.shells.cli.ask import print_answer
result = SimpleNamespace(answer_markdown="**Run** `tessel build`.", response_markdown="full document")
print_answer(result, footer=False)
sys.stderr.write("rich loaded" if "rich" in sys.modules else "rich not loaded")
"""


def run(env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "FORCE_COLOR")} | env_extra
    return subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=120, check=True
    )


def test_a_piped_answer_is_plain_text_and_rich_is_not_loaded() -> None:
    done = run({})
    assert done.stdout == "**Run** `tessel build`.\n"
    assert done.stderr == "rich not loaded"


@pytest.mark.parametrize("env_extra", [{"TTY_COMPATIBLE": "1"}, {"FORCE_COLOR": "1"}])
def test_a_forced_terminal_is_left_to_rich(env_extra: dict[str, str]) -> None:
    done = run(env_extra)
    assert done.stderr == "rich loaded"
    assert "tessel build" in done.stdout and "**Run**" not in done.stdout  # rendered, not the raw Markdown
