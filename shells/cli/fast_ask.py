"""`mrpvm ask` before the command line's framework is loaded: through a running daemon, else in this process.

`main.main` offers its arguments here first. When they are an `ask` this parser reads completely and a
daemon advertises itself on the home (daemon_file.py), the turn goes through daemon_client.ask_daemon and
is printed here: the process loads json and socket, not typer, rich, msgspec or the kernel, so its own
start is a small part of the answer's time. With no daemon to take it (or `--no-daemon`) the turn runs in
this process (ask_turn.py, as the full CLI runs it) without typer and click (~0.1 s of a cold ask's CPU).
Anything else returns None and the full CLI runs, parsing, validating and reporting errors as it always
did: an option not in OPTIONS (--continue, --local-llm, legacy ones, --help), a malformed value, a --source
that does not read as UTF-8. A terminal's rich rendering and `--json` use ask.py's printers, loaded after
the turn. Errors of the turn itself propagate to main.py, which reports them as for the full CLI.
Up to the workers' early launch (`_launch_early`) nothing beyond os, json, subprocess and sqlite3 (whether
the question is new to the home: kernel/question_seen.py) is loaded (not typing, not pathlib): each module
imported first delays every worker's start.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DAEMON_FILE = "daemon.json"  # daemon_file.FILE_NAME, looked for before that module (json, pathlib) loads

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
    "--no-daemon": None,
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
            flag = {"--json": "json", "--daemon": "daemon", "--no-daemon": "no_daemon"}.get(name, "verbose")
            if flag in ("daemon", "no_daemon") and {"daemon", "no_daemon"} & set(out):
                return None  # both, or one twice: the full CLI says what it does with that
            out[flag] = True
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
    if "deliberation_level" in out and out["deliberation_level"] > _max_deliberation():
        return None  # (the kernel's limits are loaded only when a level is asked for)
    out["question"] = question[0]
    return out


def _max_deliberation() -> int:
    from mrpvm.kernel.budgets import MAX_DELIBERATION

    return MAX_DELIBERATION


def run(argv: list[str]) -> int | None:
    """The exit status of `mrpvm ask` answered by a running daemon, else (or with `--no-daemon`) by a turn in
    this process (ask_turn.py); None when the full CLI takes over (arguments it must read, unreadable sources).
    A kernel error of the in-process turn propagates, as from the full CLI (main.py reports it)."""
    if not argv or argv[0] != "ask":
        return None
    parsed = parse(argv[1:])
    if parsed is None:
        return None
    sources: list[tuple[str, str]] = []
    for name in parsed["sources"]:
        try:
            with open(name, "rb") as f:
                sources.append((name, f.read().decode("utf-8-sig")))
        except (OSError, UnicodeDecodeError):
            return None  # the full CLI names the problem
    if not parsed.get("no_daemon"):
        from mrpvm.kernel.home import home_folder

        folder = home_folder()
        if os.path.exists(os.path.join(folder, DAEMON_FILE)):
            from .daemon_file import read_address

            if read_address(folder) is not None:
                answered = _through_daemon(folder, parsed, sources)
                if answered is not None:
                    return answered
    return _in_process(parsed, sources)


def _through_daemon(home: str, parsed: dict[str, Any], sources: list[tuple[str, str]]) -> int | None:
    from .answer_text import REFUSED_EXIT, refused
    from .daemon_client import DaemonRefused, ask_daemon

    fields = {key: parsed.get(key) for key in (f for f in OPTIONS.values() if f and f != "sources")}
    session = fields.pop("session")
    named = [(os.path.basename(name), text) for name, text in sources]
    try:
        reply, via = ask_daemon(
            home, parsed["question"], sources=named, session_id=session, turn_fields=fields
        )
    except DaemonRefused as err:  # as the full CLI reports it (a CliError: one line, exit 2)
        from .common import say_error

        say_error(str(err))
        return 2
    if reply is None:
        return None
    if parsed["json"] or not _plain():
        from .ask import _print_daemon_reply

        _print_daemon_reply(reply, parsed["json"], via, parsed["verbose"])
    else:
        _print_plain(_Turn(reply), parsed["verbose"], via)
    return REFUSED_EXIT if refused(reply.get("response_document") or {}) else 0


def _in_process(parsed: dict[str, Any], sources: list[tuple[str, str]]) -> int:
    """The turn in this process, as the full CLI's `ask` runs it without a daemon (no legacy pins: the parser
    leaves those options to the full CLI). The workers the home's last one-turn process started are
    launched first, before the kernel's imports (kernel/supervisor/early_launch.py)."""
    _launch_early(parsed)
    from pathlib import Path

    from mrpvm.protocol.envelope import Pins

    from .answer_text import REFUSED_EXIT, refused
    from .ask_turn import run_in_process

    pins = Pins(
        planner=parsed.get("planner_plugin"),
        sd=parsed.get("seed_detector_plugin"),
        kb=parsed.get("kb_plugin"),
        gs=parsed.get("goal_solver_plugin"),
    )
    result = run_in_process(
        parsed["question"],
        sources=[Path(name) for name, _ in sources],
        texts=[text for _, text in sources],
        session=parsed.get("session"),
        kb=parsed.get("kb"),
        pins=pins,
        max_llm_calls=parsed.get("max_llm_calls"),
        deliberation_level=parsed.get("deliberation_level"),
    )
    if parsed["json"] or not _plain():
        from .ask import print_turn

        print_turn(result, parsed["json"], parsed["verbose"])
    else:
        _print_plain(result, parsed["verbose"], "")
    return REFUSED_EXIT if refused(result.response_document) else 0


def _launch_early(parsed: dict[str, Any]) -> None:
    """Start the recorded workers of a turn with these pins; nothing when anything is in the way (the turn
    then starts its workers itself)."""
    try:
        from mrpvm.kernel.home import home_folder
        from mrpvm.kernel.question_seen import asked_lately
        from mrpvm.kernel.supervisor import early_launch

        pins = [
            parsed.get(f)
            for f in ("planner_plugin", "seed_detector_plugin", "kb_plugin", "goal_solver_plugin")
        ]
        home = home_folder()
        if asked_lately(home, parsed["question"]) is False:  # its workers may load their models at once
            early_launch.hint({early_launch.NEW_QUESTION_FLAG: "1"})
        early_launch.launch(home, early_launch.key_of(*pins))
    except Exception:  # noqa: BLE001 - only an earlier start is lost
        pass


def _plain() -> bool:
    """stdout is no terminal for rich (common.plain_stdout, which this module does not import: typer)."""
    return not sys.stdout.isatty() and not {"FORCE_COLOR", "TTY_COMPATIBLE"} & set(os.environ)


def _print_plain(turn: Any, verbose: bool, via: str) -> None:
    """The answer as ask.print_answer writes it to a pipe, and with `verbose` its status line."""
    from .answer_text import answer_text, status_footer

    text = answer_text(turn, verbose)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    if verbose:
        sys.stderr.write(status_footer(turn, via))


class _Turn:
    """A daemon's TurnResponse read by attribute, as the printers read an in-process TurnResult."""

    def __init__(self, reply: dict[str, Any]):
        self.__dict__.update(reply)
