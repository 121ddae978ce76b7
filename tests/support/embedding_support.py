"""Counting what kb-balanced's dense view sends to the sentence model (tests of encoding once)."""

from __future__ import annotations

import pytest


def count_encodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the sentence model encodes from now on, in order (it still encodes them): ingest rows,
    intents and inline units alike (read from a kept file, a text is not encoded)."""
    from mrpvm.plugins.sdk.embedding import encoder as encoder_module

    encoded: list[str] = []
    real = encoder_module.Encoder.encode

    def counting(self, texts, *args, **kwargs):
        encoded.extend(texts)
        return real(self, texts, *args, **kwargs)

    monkeypatch.setattr(encoder_module.Encoder, "encode", counting)
    return encoded
