"""Small helpers every CLI command module shares: one-line errors, input files, JSON output, --local-llm."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

if TYPE_CHECKING:
    from mrpvm.kernel.store import Store

T = TypeVar("T")

# `--local-llm` of the commands that can run on the bundled model (use with `run_with_local_llm`).
LocalLLMFlag = Annotated[
    bool,
    typer.Option("--local-llm", help="Start the local llama.cpp model (make local-llm) as the LLM upstream."),
]


def command_group(help: str) -> typer.Typer:
    """A `mrpvm <group>` sub-app: help when called bare, docstrings as Markdown (wrapped lines reflow)."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode="markdown")


class CliError(Exception):
    """A user error: printed as one line on stderr, the process exits with `exit_code` (2: bad usage)."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.message, self.exit_code = message, exit_code


def say_error(message: str) -> None:
    first = " ".join(message.split())  # one line, whatever the message holds
    sys.stderr.write(f"mrpvm: error: {first}\n")
    sys.stderr.flush()


def read_input(source: str | None) -> bytes:
    """The bytes of `--input`: a file, `-` for stdin, or stdin when it is piped and no file is given."""
    if source is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise CliError("no input: give --input FILE, or pipe a JSON request on stdin (--input -)")
        source = "-"
    if source == "-":
        return sys.stdin.buffer.read()
    return read_file_bytes(Path(source), "input file")


def read_file_bytes(path: Path, what: str = "file") -> bytes:
    """The bytes of a file named on the command line, or a one-line CliError (`what` names it)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CliError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise CliError(f"{what} is a directory, not a file: {path}") from None
    except OSError as err:
        raise CliError(f"cannot read {path}: {err.strerror}") from None


def read_text_file(path: Path, what: str = "file") -> str:
    """A UTF-8 text file named on the command line (a leading BOM dropped), or a one-line CliError."""
    data = read_file_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise CliError(f"{what} is not UTF-8 text (byte {err.start}: {err.reason}): {path}") from None


def print_json(data: Any) -> None:
    """Pretty, stable JSON on stdout (msgspec Structs and Paths are fine)."""
    import msgspec

    sys.stdout.write(msgspec.json.format(msgspec.json.encode(data, enc_hook=str), indent=2).decode() + "\n")
    sys.stdout.flush()


def plain_stdout() -> bool:
    """stdout is surely no terminal for rich (not a tty, and neither TTY_COMPATIBLE=1 nor FORCE_COLOR says
    otherwise): plain text can be written without loading rich (~40 ms of a one-question process)."""
    return (
        not sys.stdout.isatty()
        and os.environ.get("TTY_COMPATIBLE") != "1"
        and "FORCE_COLOR" not in os.environ
    )


def stdout_console():
    """Rich output on stdout: the terminal's width, or 120 columns when piped."""
    from rich.console import Console

    return Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def click_exceptions() -> ModuleType:
    """The click exceptions module typer raises (recent typer vendors click as typer._click)."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:  # older typer uses click itself
        return importlib.import_module("click.exceptions")


async def run_with_local_llm(work: Callable[[dict[str, str] | None], Awaitable[T]], local_llm: bool) -> T:
    """`await work(None)`; with `local_llm`, `await work(environ)` inside a started llama.cpp server whose
    kernel environment (MRPVM_LLM_BASE_URL/_API_KEY) `environ` is. The server stops when `work` ends."""
    if not local_llm:
        return await work(None)
    from mrpvm.shells.local_llm import LocalLLMServer

    async with LocalLLMServer() as server:
        sys.stderr.write(f"mrpvm: local LLM ready at {server.base_url} in {server.load_s:.1f} s\n")
        return await work(server.kernel_environ())


def open_store() -> Store:
    """The kernel's store for the configured home (MRPVM_STORE_URL or its SQLite file), without starting
    plugins (kb, session, trace)."""
    from mrpvm.kernel.config import load_config
    from mrpvm.kernel.store import Store

    config, _ = load_config()
    return Store.open(Path(config.home))


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def with_kernel(work: Callable[[Any], Awaitable[T]]) -> T:
    """Open a KernelContext (plugins, store), `await work(ctx)`, close it; for commands that tell plugins."""
    import anyio

    async def run() -> T:
        from mrpvm.knowledge.context import open_context

        ctx = await open_context()
        try:
            return await work(ctx)
        finally:
            await ctx.aclose()

    return anyio.run(run)


def print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        sys.stderr.write(f"mrpvm: warning: {warning}\n")


def report(outcome: Any, summary: str, warnings: list[str], as_json: bool) -> None:
    """A command's outcome: its warnings on stderr, then `outcome` as JSON (Structs are fine) or the
    one-line summary."""
    print_warnings(warnings)
    if as_json:
        print_json(outcome)
    else:
        stdout_console().print(summary)
