"""Build an sd-plugin from a variant: fast (one intent per asked question) or deep (richer decomposition)."""

from __future__ import annotations

from dataclasses import dataclass

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.protocol.document import CnlDocument


@dataclass(frozen=True, slots=True)
class SdVariant:
    plugin_id: str
    anchor: str  # the plugin module's __file__: its prompts/ folder holds detect.md and normalize.md
    deep: bool = False
    max_tokens: int = 1200
    source_max_tokens: int = 2400


def make_plugin(variant: SdVariant) -> Plugin:
    from .seeds import detect_seeds
    from .sources import normalize_source

    def on_detect(call: Call) -> CnlDocument:
        return detect_seeds(call, variant)

    def on_normalize(call: Call) -> CnlDocument:
        return normalize_source(call, variant)

    return Plugin(
        variant.plugin_id,
        "sd-plugin",
        {"detectSeeds": on_detect, "normalizePersistentContext": on_normalize},
    )
