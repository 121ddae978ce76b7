"""Shared code of the LLM seed detectors (sd-llm-fast, sd-llm-deep): one prompt → Intent + Context CNL."""

from .plugin import make_plugin
from .variant import SdVariant

__all__ = ["SdVariant", "make_plugin"]
