"""Shared code of the LLM goal solvers (gs-llm-fast, gs-llm-deep): grounded synthesis from evidence."""

from .solve import GsVariant, make_plugin

__all__ = ["GsVariant", "make_plugin"]
