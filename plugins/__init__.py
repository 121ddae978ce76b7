"""MRP-VM plugins.

Every plugin process imports this package first, so it is where start-up cost is cut: msgspec imports
typing_extensions (and through it inspect, ast, dis, tokenize) only to recognise typing_extensions'
own type forms, which the protocol never uses. That is ~16 ms of a one-shot plugin's ~65 ms start.
msgspec is imported here with typing_extensions hidden, then unhidden, so plugin code that needs
typing_extensions still imports it normally (msgspec then uses typing.get_type_hints).
A plugin process started as `python -m mrpvm.plugins.…` (sys.argv[0] is "-m" while its module is located)
defers its young collections until the SDK's `main` (protocol/gc_pause.py `defer_startup_collections`).
"""

import sys

from mrpvm.protocol.gc_pause import defer_startup_collections

if sys.argv[:1] == ["-m"]:
    defer_startup_collections()


def _import_msgspec_lean() -> None:
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # makes its import fail fast
    try:
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]


_import_msgspec_lean()
