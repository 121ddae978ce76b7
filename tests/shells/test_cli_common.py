"""shells/cli/common.py: files named on the command line, and `--local-llm` (mrpvm ask / serve) against
the fake llama.cpp server of tests/support/local_llm_fake (real child process, real HTTP on loopback)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import httpx
import pytest
import typer
from mrpvm.shells import local_llm as local
from mrpvm.shells.cli.common import CliError, LocalLLMFlag, read_text_file, run_with_local_llm
from typer.testing import CliRunner

FAKE_DIR = Path(__file__).resolve().parents[1] / "support" / "local_llm_fake"


def test_without_the_flag_work_runs_with_no_environment(capsys):
    seen = []

    async def work(environ):
        seen.append(environ)
        return "done"

    assert anyio.run(run_with_local_llm, work, False) == "done"
    assert seen == [None] and capsys.readouterr().err == ""


def test_with_the_flag_work_runs_against_a_started_server_that_stops_after(tmp_path, monkeypatch, capsys):
    model = tmp_path / "model.gguf"
    model.write_text("ok")
    environ = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(FAKE_DIR), "MRPVM_HOME": str(tmp_path)}
    real = local.LocalLLMServer
    monkeypatch.setattr(
        local, "LocalLLMServer", lambda: real(environ, model=model, server_module="fake_llama_server")
    )

    async def work(env):
        key = env["MRPVM_LLM_API_KEY"]
        async with httpx.AsyncClient(trust_env=False) as client:
            answer = await client.get(
                f"{env['MRPVM_LLM_BASE_URL']}/models", headers={"Authorization": f"Bearer {key}"}
            )
        return env["MRPVM_LLM_BASE_URL"], answer.status_code, int(Path(f"{model}.pid").read_text())

    url, status, pid = anyio.run(run_with_local_llm, work, True)
    assert url.startswith("http://127.0.0.1:") and status == 200
    assert f"mrpvm: local LLM ready at {url}" in capsys.readouterr().err
    try:  # stopped (and reaped) when the work ended
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state in ("Z", "X")
    except ProcessLookupError:
        pass


def test_the_shared_option_is_a_flag():
    app = typer.Typer()
    got = []

    @app.command()
    def main(local_llm: LocalLLMFlag = False) -> None:
        got.append(local_llm)

    runner = CliRunner()
    assert runner.invoke(app, ["--local-llm"]).exit_code == 0
    assert runner.invoke(app, []).exit_code == 0
    assert got == [True, False]
    assert "--local-llm" in runner.invoke(app, ["--help"]).output


def test_read_text_file_drops_a_bom_and_names_what_is_wrong(tmp_path):
    good = tmp_path / "notes.md"
    good.write_bytes("\ufeffWAL mode — notes\n".encode())
    assert read_text_file(good) == "WAL mode — notes\n"
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\xff\xfe\x00bad")
    cases = [
        (tmp_path / "missing.md", "source file", "source file not found: "),
        (tmp_path, "source file", "source file is a directory, not a file: "),
        (binary, "file", "file is not UTF-8 text (byte 0: invalid start byte): "),
    ]
    for path, what, message in cases:
        with pytest.raises(CliError) as info:
            read_text_file(path, what)
        assert info.value.message == message + str(path) and info.value.exit_code == 2


@pytest.mark.parametrize(
    "args, stdin",
    [
        (["ingest", "--kb", "notes", "--local-llm", "{doc}"], None),
        (["chat", "--local-llm"], "exit\n"),
    ],
)
def test_commands_with_the_flag_run_against_the_started_server(tmp_path, monkeypatch, args, stdin):
    from mrpvm.shells.cli.main import app

    model = tmp_path / "model.gguf"
    model.write_text("ok")
    home = tmp_path / "home"
    environ = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(FAKE_DIR), "MRPVM_HOME": str(home)}
    real = local.LocalLLMServer
    monkeypatch.setattr(
        local, "LocalLLMServer", lambda: real(environ, model=model, server_module="fake_llama_server")
    )
    monkeypatch.setenv("MRPVM_HOME", str(home))
    doc = tmp_path / "doc.md"
    doc.write_text("# Notes\n\nThe cache lives in ~/.cache/tessel and is read-only for forks.\n")
    result = CliRunner().invoke(app, [a.replace("{doc}", str(doc)) for a in args], input=stdin)
    assert result.exit_code == 0, result.output
    assert "mrpvm: local LLM ready at http://127.0.0.1:" in result.output
