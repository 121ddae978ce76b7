"""quantize.quantize silences onnxruntime's pre-processing advice while it builds the int8 graph, and gives the
caller's logging back as it found it: a process that had disabled its records below ERROR still has them
disabled afterwards (before, every record was enabled again)."""

from __future__ import annotations

import logging
import sys
import types
from pathlib import Path

import pytest
from mrpvm.plugins.sdk.embedding import quantize


def test_quantize_gives_the_callers_logging_back(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def quantize_dynamic(model: object, out: Path, **_: object) -> None:
        seen.append(logging.root.manager.disable)
        logging.getLogger().warning("Please consider to run pre-processing before quantization.")
        Path(out).write_bytes(b"int8 graph")

    fake_ort = types.ModuleType("onnxruntime.quantization")
    fake_ort.QuantType = types.SimpleNamespace(QInt8=3)  # type: ignore[attr-defined]
    fake_ort.quantize_dynamic = quantize_dynamic  # type: ignore[attr-defined]
    fake_onnx = types.ModuleType("onnx")
    fake_onnx.load_from_string = lambda graph: graph  # type: ignore[attr-defined]
    fake_onnx.TensorProto = types.SimpleNamespace(FLOAT=1)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", fake_ort)
    monkeypatch.setitem(sys.modules, "onnx", fake_onnx)

    before = logging.root.manager.disable
    try:
        logging.disable(logging.ERROR)
        assert quantize.quantize(b"float graph") == b"int8 graph"
        assert seen == [logging.ERROR]  # quiet while it runs (the higher of the two levels)
        assert logging.root.manager.disable == logging.ERROR  # the caller's level, not NOTSET
        logging.disable(logging.NOTSET)
        quantize.quantize(b"float graph")
        assert seen[-1] == logging.WARNING
        assert logging.root.manager.disable == logging.NOTSET
    finally:
        logging.disable(before)
