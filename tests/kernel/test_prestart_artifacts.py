"""A prestarted worker binds the artifacts folder the turn's calls will name (a fresh home's folder is
created at the prestart), so the first call uses it instead of retiring it for a fresh one; a worker
binding only empty folders is told its plugin keeps nothing yet (process.NOTHING_KEPT_FLAG), so one that
loads a model may load it at once (sdk embedding/encoder.worker_started)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mrpvm.kernel.config import SandboxConfig
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.supervisor.process import NOTHING_KEPT_FLAG
from mrpvm.kernel.supervisor.sandbox import Sandbox
from mrpvm.protocol.envelope import Paths
from supervisor_support import answer_json, build_registry, request, run, sandboxed_supervisor


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(tmp_path_factory.mktemp("plugins"))


def _first_call(registry: Registry, home: Path, folder: Path) -> tuple[bool, dict[str, str], int]:
    sandbox = Sandbox(SandboxConfig(mode="require"), home)

    async def go():
        async with sandboxed_supervisor(registry, sandbox=sandbox) as sup:
            started = sup.prestart("bad-worker", str(folder))
            req = request("env")
            req.paths = Paths(artifacts=str(folder))
            env = answer_json(await sup.call("bad-worker", req))["env"]
            return started, env, sup.health()["bad-worker"]["spawns"]

    return run(go)


def test_a_fresh_home_s_prestarted_worker_serves_the_first_call(registry: Registry, tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / "artifacts" / "_session" / "bad-worker"
    started, env, spawns = _first_call(registry, home, folder)
    assert started and folder.is_dir()
    assert spawns == 1  # not retired when the call named the folder
    assert env.get(NOTHING_KEPT_FLAG) == "1"


def test_a_worker_whose_folder_keeps_something_is_not_told_nothing_is_kept(
    registry: Registry, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    folder = home / "artifacts" / "_session" / "bad-worker"
    folder.mkdir(parents=True)
    (folder / "kept.bin").write_bytes(b"x")
    started, env, spawns = _first_call(registry, home, folder)
    assert started and spawns == 1
    assert NOTHING_KEPT_FLAG not in env
