"""A plugin's program lies under a home (`~/bin`, `~/.local/bin`): the sandbox binds the program's file,
never the home nor one of its direct children, so the user's keys and history stay out of sight."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor import sandbox as sandbox_module
from supervisor_support import HINTS, PLUGINS, answer_json, request, run, sandboxed_supervisor


def _fake_home(tmp_path: Path) -> Path:
    home = tmp_path / "home-user"
    for folder in ("bin", ".local/bin", ".ssh"):
        (home / folder).mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("FAKE-PRIVATE-KEY")
    (home / ".bash_history").write_text("mysql -p FAKE-PASSWORD")
    for program in (home / "bin" / "probe-home", home / ".local" / "bin" / "probe-local"):
        program.write_text("#!/usr/bin/python3\n" + (PLUGINS / "hostile.py").read_text())
        program.chmod(0o755)
    return home


@pytest.mark.parametrize("command", ["probe-home", "probe-local"])
def test_a_program_under_a_home_brings_only_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    home = _fake_home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / 'bin'}:{home / '.local' / 'bin'}:/usr/bin:/bin")
    wrappers = tmp_path / "wrappers" / "probe"
    wrappers.mkdir(parents=True)
    manifest = {"id": "probe", "type": "gs-plugin", "command": command, "timeoutMs": 20000}
    (wrappers / "manifest.json").write_text(json.dumps({**manifest, "plannerHints": HINTS}))
    registry = Registry.load(tmp_path / "none", [tmp_path / "wrappers"], ["probe"])
    assert not registry.rejected, registry.rejected
    program = registry.get("probe").argv[0]
    assert sandbox_module._program_roots(program) == [program]  # not ~ (for ~/bin), not ~/.local

    secrets = [home / ".ssh", home / ".ssh" / "id_ed25519", home / ".bash_history"]
    prompt = "read:" + "|".join(str(p) for p in [*secrets, home])

    async def go():
        async with sandboxed_supervisor(registry) as sup:
            return answer_json(await sup.call("probe", request(prompt)))

    seen = run(go)
    assert all(seen[str(p)] is None for p in secrets), seen
    assert seen[str(home)] == [Path(program).relative_to(home).parts[0]]  # just the way to the program


def test_a_program_elsewhere_still_gets_its_prefix(tmp_path: Path) -> None:
    """A tool installed under its own prefix (not a home) keeps its libraries: the prefix is bound."""
    prefix = tmp_path / "opt" / "tool"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    shutil.copy(PLUGINS / "hostile.py", prefix / "bin" / "tool")
    assert sandbox_module._program_roots(str(prefix / "bin" / "tool")) == [str(prefix.resolve())]
