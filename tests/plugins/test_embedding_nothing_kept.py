"""A warm worker told its plugin keeps nothing yet (a fresh home: every text its first call reads will be
encoded) loads the sentence model at once, beside the turn's earlier stages; otherwise only once idle
(encoder.worker_started)."""

from __future__ import annotations

import pytest
from mrpvm.plugins.sdk.embedding import encoder


class _Thread:
    started: list[tuple[object, ...]] = []

    def __init__(self, target: object, args: tuple[object, ...], name: str, daemon: bool) -> None:
        self.args = args

    def start(self) -> None:
        _Thread.started.append(self.args)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    _Thread.started = []
    monkeypatch.setattr(encoder.threading, "Thread", _Thread)
    monkeypatch.setattr(encoder, "usable", lambda: True)
    monkeypatch.setattr(encoder, "_worker", False)
    return _Thread.started


def test_a_worker_that_keeps_nothing_loads_the_model_at_once(
    monkeypatch: pytest.MonkeyPatch, started: list[tuple[object, ...]]
) -> None:
    monkeypatch.setenv(encoder.NOTHING_KEPT_FLAG, "1")
    encoder.worker_started()
    assert started == [(None, 0.0)]


def test_a_worker_that_keeps_vectors_loads_it_only_once_idle(
    monkeypatch: pytest.MonkeyPatch, started: list[tuple[object, ...]]
) -> None:
    monkeypatch.delenv(encoder.NOTHING_KEPT_FLAG, raising=False)
    encoder.worker_started()
    assert started == [(None, encoder.IDLE_LOAD_S)]


def test_a_worker_told_its_question_is_new_loads_the_model_at_once(
    monkeypatch: pytest.MonkeyPatch, started: list[tuple[object, ...]]
) -> None:
    monkeypatch.delenv(encoder.NOTHING_KEPT_FLAG, raising=False)
    monkeypatch.setenv(encoder.NEW_QUESTION_FLAG, "1")
    encoder.worker_started()
    assert started == [(None, 0.0)]
