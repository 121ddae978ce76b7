"""The `mrpvm` command line: a thin typer shell over kernel modules.

Each command group lives in its own module, named after it, exposing `register(app)`; add the module's
name to `COMMAND_MODULES` to add a group.
Command modules import heavy things inside the commands, so `mrpvm --help` stays fast.

Errors a user can cause (wrong flags, unknown plugin, missing file) print one line on stderr and exit 2;
commands raise `CliError` (or a `KernelError`) for that, never print tracebacks.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not loaded before a one-turn ask has launched its workers (fast_ask.py)
if TYPE_CHECKING:
    from typing import Any

    import typer

COMMAND_MODULES: tuple[str, ...] = tuple(
    f"mrpvm.shells.cli.{name}"
    for name in (
        "plugins",
        "ingest",
        "kb",
        "session",
        "ask",
        "chat",
        "trace",
        "config",
        "settings",
        "eval",
        "serve",
        "store",
    )
)
_app: typer.Typer | None = None


def build_app() -> typer.Typer:
    """The typer app with every command group (built once, on first use: `mrpvm ask` answered by a daemon
    never loads it, fast_ask.py)."""
    global _app
    if _app is not None:
        return _app
    import importlib

    import typer

    app = typer.Typer(
        name="mrpvm",
        help="MRP-VM: answers questions over knowledge through typed, process-isolated plugins.",
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode="markdown",
        pretty_exceptions_enable=False,
    )
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)

    @app.callback()
    def _root(
        show_version: bool = typer.Option(
            False,
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ) -> None:
        """MRP-VM: answers questions over knowledge through typed, process-isolated plugins."""

    _app = app
    return app


def app_for(args: list[str]) -> typer.Typer:
    """The app that runs `args`: when they start with a command's or a group's name, a copy of the app
    holding only that one (typer turns the signature of every command it holds into click's form before
    running any: 30-50 ms of every command's start for the ~65 others); else the whole app (the help, the
    version, an unknown name and its suggestions)."""
    import copy

    app = build_app()
    name = args[0] if args else ""
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return app
    only = copy.copy(app)
    only.registered_commands, only.registered_groups = commands, groups
    return only


def __getattr__(name: str) -> Any:
    if name == "app":  # `from mrpvm.shells.cli.main import app` (tests, tools) builds it
        return build_app()
    raise AttributeError(name)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        import typer

        try:
            number = version("mrp-vm")
        except PackageNotFoundError:  # run from a source tree that is not installed
            number = "unknown"
        print(f"mrpvm {number} (Python {sys.version.split()[0]})")
        raise typer.Exit()


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: run the app, turning user errors into one line and an exit code.
    Called as the console script (`argv` None), the process defers its young collections while it starts
    (protocol/gc_pause.py; a one-turn `mrpvm ask` for its whole turn, the full CLI until its commands are
    loaded) and ends right after the command (`exit_now`)."""
    if argv is None:
        from mrpvm.protocol.gc_pause import defer_startup_collections

        defer_startup_collections()
    code = _run(argv)
    if argv is None:
        exit_now(code)
    return code


def exit_now(code: int) -> None:
    """End the process with `code` once the output is flushed and the atexit handlers ran, without the
    interpreter's teardown: freeing every module and object of a process that ran a turn or an ingest costs
    40–50 ms of CPU on the critical path of a one-shot command, and nothing of it is needed (the store and
    the workers were closed by the command; the OS frees the rest). Returns (the normal exit follows) while
    another thread runs (its join belongs to the interpreter's shutdown) or when the output cannot be
    flushed (the interpreter reports that)."""
    import atexit
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    threading = sys.modules.get("threading")  # not loaded: no thread was started through it (daemon path)
    if threading is not None and threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    os._exit(code)


def _run(argv: list[str] | None) -> int:
    from mrpvm.shells.cli.fast_ask import run as ask_without_typer

    try:
        quick = ask_without_typer(sys.argv[1:] if argv is None else list(argv))
    except (Exception, KeyboardInterrupt) as err:
        return _reported(err)
    if quick is not None:
        return quick
    import sqlite3

    import typer
    from mrpvm.kernel.errors import KernelError
    from mrpvm.protocol.gc_pause import end_startup
    from mrpvm.shells.cli.common import CliError, click_exceptions, say_error

    click = click_exceptions()
    app = app_for(sys.argv[1:] if argv is None else list(argv))
    end_startup()  # a command may run long (serve, chat): the collector's usual thresholds
    try:
        result = app(args=argv, prog_name="mrpvm", standalone_mode=False)
    except click.NoArgsIsHelpError as err:
        text = err.format_message()  # rich help was printed when the error was built; plain help is here
        if text.strip():
            print(text)
        return 0
    except click.UsageError as err:
        hint = f" (see '{err.ctx.command_path} --help')" if err.ctx else ""
        say_error(f"{err.format_message()}{hint}")
        return 2
    except click.ClickException as err:
        say_error(err.format_message())
        return err.exit_code
    except typer.Abort:
        say_error("aborted")
        return 130
    except (CliError, KernelError, KeyboardInterrupt, OSError, sqlite3.Error) as err:
        return _reported(err)
    return result if isinstance(result, int) else 0


def _reported(err: BaseException) -> int:
    """A user error, a kernel error, Ctrl-C or a full disk reported as one line: the exit code (1, 2, 130);
    anything else raised again (a bug: its traceback)."""
    import sqlite3

    from mrpvm.kernel.errors import KernelError, as_disk_full
    from mrpvm.shells.cli.common import CliError, say_error

    if isinstance(err, CliError):
        say_error(err.message)
        return err.exit_code
    if isinstance(err, KernelError):
        say_error(f"{err.code}: {err.message}")
        return 2 if 400 <= err.status < 500 else 1
    if isinstance(err, KeyboardInterrupt):
        return 130
    full = as_disk_full(err) if isinstance(err, OSError | sqlite3.Error) else None
    if full is None:  # a full disk where no layer named it is said, not a traceback
        raise err
    say_error(f"{full.code}: {full.message}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
