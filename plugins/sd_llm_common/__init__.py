"""Shared code of the LLM seed detectors (sd-llm-fast, sd-llm-deep): one prompt → Intent + Context CNL."""

from .plugin import SdVariant, make_plugin

__all__ = ["SdVariant", "make_plugin"]
