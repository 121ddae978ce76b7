"""`mrpvm ask`: one question, one turn (optionally with `--source` files loaded into its session)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from mrpvm.kernel.budgets import MAX_DELIBERATION
from mrpvm.shells.cli.answer_text import REFUSED_EXIT, answer_text, refused, status_footer
from mrpvm.shells.cli.common import LocalLLMFlag

if TYPE_CHECKING:
    from mrpvm.kernel.engine import TurnResult


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)


def ask(
    question: Annotated[str, typer.Argument(help="The question (one turn).")],
    source: Annotated[
        list[Path] | None,
        typer.Option("--source", help="A file loaded into the session as context (repeatable)."),
    ] = None,
    kb: Annotated[str | None, typer.Option("--kb", help="Mount this KB (name or id).")] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Continue this session (an id from `session list`).")
    ] = None,
    continue_last: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue the session used last.")
    ] = False,
    planner: Annotated[str | None, typer.Option("--planner", help="Pin the planner.")] = None,
    sd: Annotated[str | None, typer.Option("--sd", help="Pin the seed detector.")] = None,
    kb_plugin: Annotated[str | None, typer.Option("--kb-plugin", help="Pin the kb-plugin.")] = None,
    gs: Annotated[str | None, typer.Option("--gs", help="Pin the goal solver.")] = None,
    max_llm_calls: Annotated[
        int | None, typer.Option("--max-llm-calls", min=0, help="LLM-call budget for this turn.")
    ] = None,
    processing_mode: Annotated[
        str | None,
        typer.Option("--processing-mode", help="Legacy: symbolic-only or llm-assisted (pins sd + gs)."),
    ] = None,
    retrieval_profile: Annotated[
        str | None,
        typer.Option(
            "--retrieval-profile", help="Legacy: fast, balanced or thinkingdb (pins the kb-plugin)."
        ),
    ] = None,
    deliberation_level: Annotated[
        int | None,
        typer.Option(
            "--deliberation-level",
            min=0,
            max=MAX_DELIBERATION,
            help="Compare up to N more candidate answers per question and keep the best (0-3).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the turn as one JSON object.")] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Print the full response: act, intent, status, every source with its id."
        ),
    ] = False,
    local_llm: LocalLLMFlag = False,
    use_daemon: Annotated[
        bool,
        typer.Option(
            "--daemon/--no-daemon",
            help="Use a running `mrpvm serve` on the same home when there is one (default), else in-process.",
        ),
    ] = True,
) -> int:
    """Ask one question: seeds, plan, retrieval, solving and validation, then print the answer.

    A daemon running on the same home (`mrpvm serve`) answers it with its warm workers; without one the
    turn runs in this process, starting only the plugins it calls.

    Exit status: 0 answered, 3 refused (the documents do not answer it), 2 bad input, 1 other errors.
    """
    from mrpvm.shells.cli.common import CliError

    if not question.strip():
        raise CliError("the question is empty")
    if continue_last:
        session = continued_session(session)
    sources = list(source or [])
    texts = [read_source(p) for p in sources]
    from mrpvm.shells.legacy import legacy_pins

    legacy = legacy_pins(processing_mode, retrieval_profile)  # explicit --sd/--kb-plugin/--gs win
    if use_daemon and not local_llm:
        from mrpvm.shells.cli.daemon_client import DaemonRefused, ask_daemon

        fields = {
            "planner_plugin": planner,
            "seed_detector_plugin": sd or legacy.get("sd"),
            "kb_plugin": kb_plugin or legacy.get("kb"),
            "goal_solver_plugin": gs or legacy.get("gs"),
            "kb": kb,
            "max_llm_calls": max_llm_calls,
            "deliberation_level": deliberation_level,
        }
        try:
            reply, via = ask_daemon(
                _home(),
                question,
                sources=[(p.name, t) for p, t in zip(sources, texts, strict=True)],
                session_id=session,
                turn_fields=fields,
            )
        except DaemonRefused as err:
            raise CliError(str(err)) from None
        if reply is not None:
            _print_daemon_reply(reply, as_json, via, verbose)
            return REFUSED_EXIT if refused(reply.get("response_document") or {}) else 0
    from mrpvm.protocol.envelope import Pins
    from mrpvm.shells.cli.ask_turn import run_in_process

    pins = Pins(
        planner=planner,
        sd=sd or legacy.get("sd"),
        kb=kb_plugin or legacy.get("kb"),
        gs=gs or legacy.get("gs"),
    )
    result = run_in_process(
        question,
        sources=sources,
        texts=texts,
        session=session,
        kb=kb,
        pins=pins,
        max_llm_calls=max_llm_calls,
        deliberation_level=deliberation_level,
        local_llm=local_llm,
    )
    print_turn(result, as_json, verbose)
    return REFUSED_EXIT if refused(result.response_document) else 0


def _home() -> Path:
    from mrpvm.kernel.config import load_config

    config, _ = load_config()
    return Path(config.home)


def print_turn(result: TurnResult, as_json: bool, verbose: bool) -> None:
    """An in-process turn printed as `mrpvm ask` prints it: one JSON object, or the answer (print_answer)."""
    if as_json:
        from mrpvm.shells.cli.common import print_json
        from mrpvm.shells.legacy import derived_legacy

        legacy_echo = derived_legacy(result.seed_detector_plugin, result.kb_plugin, result.goal_solver_plugin)
        print_json({**result.as_json(), **legacy_echo, "deliberation_level": result.deliberation_level})
    else:
        print_answer(result, verbose=verbose, footer=verbose)


def _print_daemon_reply(reply: dict, as_json: bool, via: str, verbose: bool) -> None:
    """A daemon's TurnResponse printed exactly as an in-process turn would be."""
    if as_json:
        from mrpvm.kernel.engine.turn import JSON_KEYS
        from mrpvm.shells.cli.common import print_json
        from mrpvm.shells.legacy import LEGACY_KEYS

        keys = (*JSON_KEYS, *LEGACY_KEYS, "deliberation_level")
        print_json({key: reply.get(key) for key in keys})
        return
    from types import SimpleNamespace

    print_answer(SimpleNamespace(**reply), verbose=verbose, footer=verbose, via=via)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- shared with `chat`


def read_source(path: Path) -> str:
    """A `--source` file's text, or a one-line CliError."""
    from mrpvm.shells.cli.common import read_text_file

    return read_text_file(path, "source file")


def continued_session(session: str | None) -> str:
    """`--continue`: the session used last (CliError when `--session` is given too or there is none)."""
    from mrpvm.shells.cli.common import CliError, open_store

    if session is not None:
        raise CliError("give --continue or --session ID, not both")
    with open_store() as store:
        last = store.last_session()
    if last is None:
        raise CliError("no session to continue yet: ask without --continue to start one")
    return last.id


def print_answer(result: TurnResult, *, verbose: bool = False, footer: bool = True, via: str = "") -> None:
    """What a person reads (the answer, a note when it is weak, then `Sources:` file › heading lines); with
    `verbose` the full response document (act, intent, status, warnings, every source with its id).
    `footer`: a one-line status on stderr (status, request and session ids, time, LLM calls, `via`)."""
    from mrpvm.shells.cli.common import plain_stdout, stdout_console

    text = answer_text(result, verbose)
    console = None if plain_stdout() else stdout_console()
    if console is not None and console.is_terminal:
        from rich.markdown import Markdown

        console.print(Markdown(text))
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    if footer:
        sys.stderr.write(status_footer(result, via))
