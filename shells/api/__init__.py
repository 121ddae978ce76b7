"""The kernel daemon (`mrpvm serve`): OpenAI-compatible chat plus the DS013 MRP-VM surface, over starlette."""

from .app import ApiSettings, create_app

__all__ = ["ApiSettings", "create_app"]
