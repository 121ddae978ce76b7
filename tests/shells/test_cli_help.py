"""Every `--help` page reads like a classic command line: VALUE names, no type tags, flags without a type."""

from __future__ import annotations

import re

import click
import pytest
import typer.main
from mrpvm.shells.cli.main import app, app_for
from typer.testing import CliRunner

TYPE_TAG = re.compile(r"<\w[^>]*>|\{\w+\}")  # typer 0.26+'s <bool>, <list[Path]> and {question}


def _command_paths() -> list[list[str]]:
    paths: list[list[str]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "mrpvm")
def test_help_has_no_type_tags(path):
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    assert "Usage: mrpvm" in result.output
    assert TYPE_TAG.findall(result.output) == []


def test_flags_show_no_type_and_values_show_a_name():
    output = CliRunner().invoke(app, ["ask", "--help"], terminal_width=100).output
    flag_line = next(line for line in output.splitlines() if "--continue" in line)
    assert "BOOL" not in flag_line.upper().replace("--CONTINUE", "")
    assert re.search(r"--source\s+PATH", output)
    assert "Usage: mrpvm ask [OPTIONS] QUESTION" in output


def test_paragraphs_are_reflowed_not_cut_where_the_docstring_wraps():
    output = CliRunner().invoke(app, ["ask", "--help"], terminal_width=200).output
    assert "without one the turn runs in this process" in output


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "mrpvm")
def test_the_app_for_a_command_holds_only_it_and_reads_as_the_whole_app(path):
    """`app_for` (what the console script runs): a command line naming a command or group gets an app
    holding only that one, whose help (and so its options and arguments) is the whole app's; anything
    else gets the whole app."""
    only = app_for(path)
    if path:
        held = [c.name for c in only.registered_commands] + [g.name for g in only.registered_groups]
        assert held == [path[0]]
    else:
        assert only is app
    same = CliRunner().invoke(only, [*path, "--help"], terminal_width=100)
    whole = CliRunner().invoke(app, [*path, "--help"], terminal_width=100)
    assert same.exit_code == whole.exit_code == 0 and same.output == whole.output


@pytest.mark.parametrize("args", [["nosuch"], ["--version"], ["-V"], []])
def test_an_unknown_name_or_an_option_first_gets_the_whole_app(args):
    assert app_for(args) is app
