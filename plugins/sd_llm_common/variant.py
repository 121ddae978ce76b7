"""An sd-llm variant: which plugin it is, where its prompts live, how deep it decomposes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SdVariant:
    plugin_id: str
    anchor: str  # the plugin module's __file__: its prompts/ folder holds detect.md and normalize.md
    deep: bool = False
    max_tokens: int = 1200
    source_max_tokens: int = 2400
