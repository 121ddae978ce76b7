"""Small helpers every CLI command module shares: one-line errors, input files, JSON output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


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
    path = Path(source)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CliError(f"input file not found: {source}") from None
    except IsADirectoryError:
        raise CliError(f"input is a directory, not a file: {source}") from None
    except OSError as err:
        raise CliError(f"cannot read {source}: {err.strerror}") from None


def print_json(data: Any) -> None:
    """Pretty, stable JSON on stdout (msgspec Structs and Paths are fine)."""
    import msgspec

    sys.stdout.write(msgspec.json.format(msgspec.json.encode(data, enc_hook=str), indent=2).decode() + "\n")
    sys.stdout.flush()


def json_line(data: Any) -> str:
    """One line of JSON (for stderr error records)."""
    import msgspec

    return msgspec.json.encode(data, enc_hook=str).decode()


def stdout_console():
    """Rich output on stdout: the terminal's width, or 120 columns when piped."""
    from rich.console import Console

    return Console(highlight=False, width=None if sys.stdout.isatty() else 120)


def click_exceptions():
    """The click exceptions module typer raises (recent typer vendors click as typer._click)."""
    try:
        from typer._click import exceptions
    except ImportError:  # older typer uses click itself
        from click import exceptions
    return exceptions
