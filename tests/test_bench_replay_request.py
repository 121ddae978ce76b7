"""bench/replay_request.py's helpers: recorded bodies in their call order, a plugin's memos forgotten."""

from __future__ import annotations

import functools
import importlib.util
import sys
import types
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "replay_request", Path(__file__).resolve().parents[1] / "bench" / "replay_request.py"
)
assert _SPEC is not None and _SPEC.loader is not None
replay = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(replay)


def test_bodies_in_recorded_order() -> None:
    paths = ["d/p.solve.10.json", "d/p.solve.2.json", "d/p.solve.0.json"]
    assert sorted(paths, key=replay._number) == ["d/p.solve.0.json", "d/p.solve.2.json", "d/p.solve.10.json"]


def test_forget_clears_the_packages_memos_only() -> None:
    @functools.lru_cache(maxsize=8)
    def kept(x: int) -> int:
        return x

    class Holder:
        @staticmethod
        @functools.lru_cache(maxsize=8)
        def method(x: int) -> int:
            return x

    @functools.lru_cache(maxsize=8)
    def elsewhere(x: int) -> int:
        return x

    inside = types.ModuleType("fakeplugin.part")
    inside.kept, inside.Holder = kept, Holder  # type: ignore[attr-defined]
    outside = types.ModuleType("fakeother")
    outside.elsewhere = elsewhere  # type: ignore[attr-defined]
    sys.modules.update({"fakeplugin.part": inside, "fakeother": outside})
    try:
        kept(1), Holder.method(1), elsewhere(1)
        replay._forget("fakeplugin")
        assert kept.cache_info().currsize == 0 and Holder.method.cache_info().currsize == 0
        assert elsewhere.cache_info().currsize == 1
    finally:
        del sys.modules["fakeplugin.part"], sys.modules["fakeother"]
