"""The Python plugin SDK: framing, decoding, rendering and exit codes, so a plugin is just its handlers."""

from .runtime import Call, DeadlineExceeded, InvalidInput, Plugin, PluginFailure, reply

__all__ = ["Call", "DeadlineExceeded", "InvalidInput", "Plugin", "PluginFailure", "reply"]
