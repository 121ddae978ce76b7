"""Build an sd-plugin from a variant: fast (one intent per asked question) or deep (richer decomposition)."""

from __future__ import annotations

from mrpvm.plugins.sdk import Call, Plugin
from mrpvm.protocol.document import CnlDocument

from .seeds import detect_seeds
from .sources import normalize_source
from .variant import SdVariant


def make_plugin(variant: SdVariant) -> Plugin:
    def on_detect(call: Call) -> CnlDocument:
        return detect_seeds(call, variant)

    def on_normalize(call: Call) -> CnlDocument:
        return normalize_source(call, variant)

    return Plugin(
        variant.plugin_id,
        "sd-plugin",
        {"detectSeeds": on_detect, "normalizePersistentContext": on_normalize},
    )
