"""The structured error shape: one line of JSON on stderr (one-shot), and the kernel's error records."""

from __future__ import annotations

from typing import Any

import msgspec


class ErrorInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    """`{"code","message","details"}` as a plugin writes it to stderr (DS016)."""

    code: str
    message: str
    details: dict[str, Any] = {}


_decoder = msgspec.json.Decoder(ErrorInfo)


def encode_error_line(code: str, message: str, details: dict[str, Any] | None = None) -> bytes:
    return msgspec.json.encode(ErrorInfo(code=code, message=message, details=details or {})) + b"\n"


def parse_error_line(stderr: bytes) -> ErrorInfo | None:
    """The last line of stderr that is a valid error object, if any."""
    for line in reversed(stderr.strip().splitlines()[-20:]):
        line = line.strip()
        if line.startswith(b"{"):
            try:
                return _decoder.decode(line)
            except msgspec.DecodeError:
                continue
    return None
