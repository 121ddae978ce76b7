"""A warm kb-balanced worker told of session units its artifacts folder keeps no vectors of (a new
`--source` in a home that keeps others) begins loading the sentence model at the notice, not inside the
next retrieve (encoder.load_ahead); units all kept, a one-shot process, or a load already begun start
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from kb_corpus import tree
from mrpvm.plugins.kb_balanced.__main__ import plugin
from mrpvm.plugins.kb_balanced.dense import MAX_TOKENS, unit_text
from mrpvm.plugins.sdk.embedding import DIMENSIONS, encoder
from mrpvm.protocol.envelope import OnSessionEventPayload, Paths, Request, encode_request

LANTERNS = tree(
    "lanterns",
    [
        (
            "Caring for a storm lantern",
            [
                ("Procedure", "wick", "Trim the wick flat before each lighting, or it smokes the glass."),
                ("Warning", "refilling", "Refill the tank with lamp oil only once the burner is cold."),
                ("Description", "storage", "A lantern stored for the winter is emptied and its wick dried."),
            ],
        )
    ],
    "How to keep a storm lantern: its wick, its oil and its winter storage.",
)


class _Thread:
    started: list[tuple[object, ...]] = []

    def __init__(self, target: object, args: tuple[object, ...], name: str, daemon: bool) -> None:
        self.args = args

    def start(self) -> None:
        _Thread.started.append(self.args)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """A warm worker (its start's idle load stubbed) with the model not loaded."""
    _Thread.started = []
    monkeypatch.setattr(encoder.threading, "Thread", _Thread)
    monkeypatch.setattr(encoder, "usable", lambda: True)
    monkeypatch.setattr(encoder, "_worker", True)
    monkeypatch.setattr(encoder, "_loading", False)
    monkeypatch.setattr(encoder, "_shared", {})
    monkeypatch.setattr(encoder, "_kept", {})
    return _Thread.started


def _notice(folder: Path) -> bytes:
    request = Request(
        op="onSessionEvent",
        prompt="session units",
        context=[],
        payload=OnSessionEventPayload(units=LANTERNS),
        paths=Paths(artifacts=str(folder)),
    )
    return encode_request(request)


def _keep(folder: Path, texts: list[str]) -> None:
    encoder.for_call(60.0, str(folder))
    kept = encoder._kept_file(str(folder), encoder.precision(), MAX_TOKENS)
    assert kept is not None
    kept.put(texts, [bytes(4 * DIMENSIONS)] * len(texts))


def test_a_notice_of_units_not_kept_begins_the_model_load(
    tmp_path: Path, started: list[tuple[object, ...]]
) -> None:
    _keep(tmp_path, [unit_text(LANTERNS[0])])  # the folder keeps another text: one of these is new
    doc, failure, _ = plugin.run(_notice(tmp_path))
    assert failure is None and doc is not None and doc.result.status == "success"
    assert started == [(encoder.precision(), 0.0)]  # now, not once idle
    plugin.run(_notice(tmp_path))  # the same notice again: the load is under way already
    assert len(started) == 1


def test_a_notice_of_units_all_kept_loads_nothing(tmp_path: Path, started: list[tuple[object, ...]]) -> None:
    _keep(tmp_path, [unit_text(u) for u in LANTERNS])
    doc, failure, _ = plugin.run(_notice(tmp_path))
    assert failure is None and doc is not None and doc.result.status == "success"
    assert started == []


def test_a_one_shot_process_or_a_loaded_model_loads_nothing_ahead(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, started: list[tuple[object, ...]]
) -> None:
    texts = [unit_text(u) for u in LANTERNS]
    encoder.for_call(60.0, str(tmp_path))
    monkeypatch.setattr(encoder, "_worker", False)
    assert not encoder.load_ahead(texts, max_tokens=MAX_TOKENS)
    monkeypatch.setattr(encoder, "_worker", True)
    monkeypatch.setattr(encoder, "_shared", {encoder.precision(): object()})
    assert not encoder.load_ahead(texts, max_tokens=MAX_TOKENS)
    assert started == []


def test_a_worker_that_keeps_nothing_does_not_start_a_second_load(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, started: list[tuple[object, ...]]
) -> None:
    monkeypatch.setenv(encoder.NOTHING_KEPT_FLAG, "1")
    encoder.worker_started()  # a fresh home: loading at once already
    encoder.for_call(60.0, str(tmp_path))
    assert not encoder.load_ahead([unit_text(u) for u in LANTERNS], max_tokens=MAX_TOKENS)
    assert started == [(None, 0.0)]
