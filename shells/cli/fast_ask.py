"""`mrpvm ask` through a running daemon before the command line's framework is loaded.

`main.main` offers its arguments here first. When they are an `ask` this parser reads completely and a
daemon advertises itself on the home (daemon_file.py), the turn goes through daemon_client.ask_daemon and
is printed here: the process loads json and socket, not typer, rich, msgspec or the kernel, so its own
start is a small part of the answer's time. Anything else returns None and the full CLI runs, parsing,
validating, reporting errors and falling back to in-process as it always did: an option not in OPTIONS
(--continue, --local-llm, --no-daemon, legacy ones, --help), a malformed value, a --source that does not
read as UTF-8, no daemon. A terminal's rich rendering and `--json` use ask.py's printers, loaded after the
turn.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

# option -> the turn field it sets (None: a flag of this module); the full CLI's `ask` options of the same names
OPTIONS: dict[str, str | None] = {
    "--source": "sources",
    "--kb": "kb",
    "--session": "session",
    "--planner": "planner_plugin",
    "--sd": "seed_detector_plugin",
    "--kb-plugin": "kb_plugin",
    "--gs": "goal_solver_plugin",
    "--max-llm-calls": "max_llm_calls",
    "--deliberation-level": "deliberation_level",
    "--json": None,
    "--verbose": None,
    "-v": None,
    "--daemon": None,
}
INTEGER = ("max_llm_calls", "deliberation_level")


def parse(args: list[str]) -> dict[str, Any] | None:
    """{question, sources, json, verbose, turn fields…} of `ask`'s arguments, or None when they hold anything
    this parser leaves to the full CLI."""
    out: dict[str, Any] = {"sources": [], "json": False, "verbose": False}
    question: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            question.extend(rest)
            break
        if not arg.startswith("-") or arg == "-":
            question.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name not in OPTIONS or (eq and OPTIONS[name] is None):
            return None
        field = OPTIONS[name]
        if field is None:
            out[{"--json": "json", "--daemon": "daemon"}.get(name, "verbose")] = True
            continue
        if not eq:
            following = next(rest, None)
            if following is None:
                return None
            value = following
        if field == "sources":
            out["sources"].append(value)
        elif field in INTEGER:
            if not value.isdigit() or field in out:
                return None
            out[field] = int(value)
        elif field in out:
            return None  # given twice: the full CLI says what it does with that
        else:
            out[field] = value
    if len(question) != 1 or not question[0].strip():
        return None
    if out.get("deliberation_level", 0) > _max_deliberation():
        return None
    out["question"] = question[0]
    return out


def _max_deliberation() -> int:
    from mrpvm.kernel.budgets import MAX_DELIBERATION

    return MAX_DELIBERATION


def run(argv: list[str]) -> int | None:
    """The exit status of `mrpvm ask` answered by a running daemon, or None (the full CLI takes over)."""
    if not argv or argv[0] != "ask":
        return None
    parsed = parse(argv[1:])
    if parsed is None:
        return None
    from mrpvm.kernel.home import home_dir

    from .daemon_file import read_address

    home = home_dir()
    if read_address(home) is None:
        return None
    sources: list[tuple[str, str]] = []
    for name in parsed["sources"]:
        try:
            sources.append((Path(name).name, Path(name).read_bytes().decode("utf-8-sig")))
        except (OSError, UnicodeDecodeError):
            return None  # the full CLI names the problem
    from .answer_text import REFUSED_EXIT, answer_text, refused, status_footer
    from .daemon_client import DaemonRefused, ask_daemon

    fields = {key: parsed.get(key) for key in (f for f in OPTIONS.values() if f and f != "sources")}
    session = fields.pop("session")
    try:
        reply, via = ask_daemon(
            home, parsed["question"], sources=sources, session_id=session, turn_fields=fields
        )
    except DaemonRefused as err:  # as the full CLI reports it (a CliError: one line, exit 2)
        from .common import say_error

        say_error(str(err))
        return 2
    if reply is None:
        return None
    if parsed["json"] or sys.stdout.isatty() or {"FORCE_COLOR", "TTY_COMPATIBLE"} & set(os.environ):
        from .ask import _print_daemon_reply

        _print_daemon_reply(reply, parsed["json"], via, parsed["verbose"])
    else:
        turn = _Turn(reply)
        text = answer_text(turn, parsed["verbose"])
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        if parsed["verbose"]:
            sys.stderr.write(status_footer(turn, via))
    return REFUSED_EXIT if refused(reply.get("response_document") or {}) else 0


class _Turn:
    """A daemon's TurnResponse read by attribute, as the printers read an in-process TurnResult."""

    def __init__(self, reply: dict[str, Any]):
        self.__dict__.update(reply)
