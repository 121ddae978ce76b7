"""A one-turn process whose question no recent turn of the home asked tells its workers so
(early_launch.NEW_QUESTION_FLAG), launched early or started by the supervisor, so a worker that encodes the
question loads its model at once instead of inside that call; the hint is never part of the early-launch record
nor of the environment a launch is adopted by, and the same question asked again is not new."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mrpvm.kernel.home import DB_NAME
from mrpvm.kernel.question_seen import asked_lately
from mrpvm.kernel.registry import Registry
from mrpvm.kernel.store import Store
from mrpvm.kernel.supervisor import early_launch
from supervisor_support import answer_json, build_registry, new_supervisor, request, run

KEY = early_launch.key_of(None, None, None, None)
HINT = {early_launch.NEW_QUESTION_FLAG: "1"}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return build_registry(tmp_path_factory.mktemp("plugins"))


@pytest.fixture(autouse=True)
def _no_hint_left():
    yield
    early_launch.hint({})
    early_launch.stop_all()


def _home_with_turn(home: Path, message: str) -> None:
    Store.open(home).close()
    db = sqlite3.connect(home / DB_NAME)
    with db:
        db.execute(
            "INSERT INTO turns (request_id, session_id, turn_index, user_message, response_markdown,"
            " response_document, trace, status, created_at) VALUES (?, ?, 0, ?, '', x'', x'', 'success', ?)",
            ("req-1", "ses-1", message, "2026-11-29T00:00:00Z"),
        )
    db.close()


def test_a_question_is_new_unless_a_recent_turn_asked_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("MRPVM_STORE_URL", raising=False)
    assert asked_lately(str(tmp_path), "How long does the kiln cool?") is None  # no store yet: a fresh home
    _home_with_turn(tmp_path, "How long does the kiln cool?")
    assert asked_lately(str(tmp_path), "How long does the kiln cool?") is True
    assert asked_lately(str(tmp_path), "Which glaze crawls on bisque?") is False
    monkeypatch.setenv("MRPVM_STORE_URL", "postgresql://elsewhere/db")
    assert asked_lately(str(tmp_path), "Which glaze crawls on bisque?") is None


def test_a_started_worker_is_told_the_question_is_new(registry: Registry) -> None:
    early_launch.hint(HINT)

    async def go():
        async with new_supervisor(registry) as sup:
            env = answer_json(await sup.call("bad-worker", request("env")))["env"]
            return env, dict(sup.launches["bad-worker"]["env"])

    env, recorded = run(go)
    assert env.get(early_launch.NEW_QUESTION_FLAG) == "1"
    assert early_launch.NEW_QUESTION_FLAG not in recorded  # the next process's launch never carries it


def test_a_launched_worker_is_told_and_still_adopted(registry: Registry, tmp_path: Path) -> None:
    async def record():
        async with new_supervisor(registry) as sup:
            assert sup.prestart("bad-worker")
            await sup.call("bad-worker", request("env"))
            return dict(sup.launches)

    early_launch.record(tmp_path, KEY, run(record))
    early_launch.hint(HINT)
    assert early_launch.launch(tmp_path, KEY) == ["bad-worker"]
    pid = early_launch.launched()["bad-worker"]
    # what the launched worker was told is read from its own answer below: its /proc environ shows the
    # parent's environment until the child has exec'd (a race on a busy machine)

    async def ask():
        async with new_supervisor(registry) as sup:
            sup.prestart("bad-worker")
            env = answer_json(await sup.call("bad-worker", request("env")))["env"]
            return sup.pids(), env, sup.health()["bad-worker"]["spawns"]

    pids, env, spawns = run(ask)
    assert pids == [pid] and spawns == 1  # adopted: the hint is not in the environment it is compared by
    assert env.get(early_launch.NEW_QUESTION_FLAG) == "1"
