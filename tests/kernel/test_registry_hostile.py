"""Manifests that attack the registry: launchers and shells by what the file is (not only its name), and
manifest entries that are not regular files or are too big (reported and skipped, never read)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mrpvm.kernel.registry import MAX_MANIFEST_BYTES, Registry
from supervisor_support import HINTS


def _wrapper(root: Path, plugin_id: str, command: str, args: list[str] | None = None) -> Path:
    folder = root / plugin_id
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "id": plugin_id,
        "type": "gs-plugin",
        "command": command,
        "args": args or [],
        "plannerHints": HINTS,
    }
    (folder / "manifest.json").write_text(json.dumps(data))
    return folder


def _load(root: Path, ids: list[str]) -> Registry:
    return Registry.load(root / "no-builtins", [root], ids)


def _reasons(registry: Registry) -> dict[str, str]:
    return {path.parent.name: reason for path, reason in registry.rejected}


def test_launchers_and_disguised_shells_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "wrappers"
    cases = {
        "timeout": ("timeout", ["5", "sh", "-c", "touch pwned"]),
        "nice": ("nice", ["sh", "-c", "touch pwned"]),
        "stdbuf": ("stdbuf", ["-o0", "sh", "-c", "touch pwned"]),
        "setpriv": ("setpriv", ["sh"]),
    }
    for plugin_id, (command, args) in cases.items():
        _wrapper(root, plugin_id, command, args)
    copy = _wrapper(root, "dash-copy", "./runner")
    shutil.copy(shutil.which("dash") or "/bin/dash", copy / "runner")
    split = _wrapper(root, "env-split", "./run")
    (split / "run").write_text("#!/usr/bin/env -S A=1 sh\ntouch pwned\n")
    assigned = _wrapper(root, "env-assign", "./run")
    (assigned / "run").write_text("#!/usr/bin/env A=1 bash\ntouch pwned\n")
    for script in (split / "run", assigned / "run", copy / "runner"):
        script.chmod(0o755)
    ids = [*cases, "dash-copy", "env-split", "env-assign"]
    registry = _load(root, ids)
    reasons = _reasons(registry)
    assert sorted(reasons) == sorted(ids), reasons
    for plugin_id in ids:
        assert "plugins start without a shell" in reasons[plugin_id], reasons[plugin_id]
    assert "'dash'" in reasons["dash-copy"] and "'env -S'" in reasons["env-split"]
    assert "'bash'" in reasons["env-assign"]


def test_an_interpreter_and_a_binary_still_load(tmp_path: Path) -> None:
    """The check can pass: python, a `#!/usr/bin/python3` script and an ordinary binary are accepted."""
    root = tmp_path / "wrappers"
    _wrapper(root, "py", "python", ["x.py"])
    script = _wrapper(root, "script", "./run")
    (script / "run").write_text("#!/usr/bin/python3\nprint('hi')\n")
    (script / "run").chmod(0o755)
    binary = _wrapper(root, "binary", "./tool")
    shutil.copy("/usr/bin/true", binary / "tool")
    registry = _load(root, ["py", "script", "binary"])
    assert registry.rejected == [] and {"py", "script", "binary"} <= {e.id for e in registry.list()}


def test_a_manifest_that_is_not_a_regular_file_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "wrappers"
    for name in ("fifo", "zero", "huge", "good"):
        (root / name).mkdir(parents=True)
    os.mkfifo(root / "fifo" / "manifest.json")
    (root / "zero" / "manifest.json").symlink_to("/dev/zero")
    with open(root / "huge" / "manifest.json", "wb") as f:
        f.truncate(MAX_MANIFEST_BYTES + 1)  # sparse: the size alone refuses it
    _wrapper(root, "good", "python", ["x.py"])
    registry = _load(root, [])  # none allow-listed: every entry is still looked at
    reasons = _reasons(registry)
    assert "not a regular file" in reasons["fifo"] and "not a regular file" in reasons["zero"]
    assert "limit for a manifest" in reasons["huge"]
    assert "not on the plugin allowlist" in reasons["good"]


def test_mrpvm_plugins_does_not_hang_on_a_fifo(tmp_path: Path) -> None:
    """The command a user runs: it answers (a FIFO nobody writes would block a plain read forever)."""
    root = tmp_path / "wrappers"
    (root / "fifo").mkdir(parents=True)
    os.mkfifo(root / "fifo" / "manifest.json")
    env = {**os.environ, "MRPVM_HOME": str(tmp_path / "home"), "MRPVM_WRAPPER_FOLDERS": str(root)}
    mrpvm = Path(sys.executable).with_name("mrpvm")
    done = subprocess.run([str(mrpvm), "plugins", "--json"], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert "not a regular file" in done.stdout.decode() + done.stderr.decode()


@pytest.mark.parametrize("name", ["sh", "busybox", "env"])
def test_a_shell_by_name_is_still_refused(tmp_path: Path, name: str) -> None:
    root = tmp_path / "wrappers"
    _wrapper(root, "w", name, ["-c", "true"])
    assert "plugins start without a shell" in _reasons(_load(root, ["w"]))["w"]
