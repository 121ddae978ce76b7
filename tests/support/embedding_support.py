"""Counting what kb-balanced's dense view sends to the sentence model (tests of encoding once)."""

from __future__ import annotations

import pytest


def count_encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text kb_balanced.dense encodes from now on, in order (the real model still encodes them)."""
    import mrpvm.plugins.kb_balanced.dense as dense

    encoded: list[str] = []
    real = dense.encode

    def counting(texts):
        encoded.extend(texts)
        return real(texts)

    monkeypatch.setattr(dense, "encode", counting)
    return encoded
