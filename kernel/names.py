"""Limits on the names people and archives give things: a KB's name, a source's name, a session's title.

One rule for every door (CLI, daemon, archive import): not blank nor dots alone, at most a kind's length,
and no control characters (NUL, newlines, escapes, bidi overrides), which break paths, logs, tables and
terminals.
A name that breaks it is a 400 INVALID_NAME saying which rule.
"""

from __future__ import annotations

import unicodedata

from .errors import BadInput

KB_NAME_MAX = 128
SOURCE_NAME_MAX = 512  # a file name with its folders, as an ingest or an upload names a source
TITLE_MAX = 200
JOINERS = "\u200c\u200d"  # zero-width (non-)joiners: format characters that emoji and scripts need


class InvalidName(BadInput, code="INVALID_NAME"):
    """A name that is blank, too long, or holds a control character."""


def checked_name(kind: str, value: str, limit: int, *, blank_ok: bool = False) -> str:
    """`value` stripped, or InvalidName naming `kind` (e.g. "a KB name") and the rule it breaks."""
    name = value.strip()
    if not name and not blank_ok:
        raise InvalidName(f"{kind} must not be empty", {"limit": limit})
    if name and not name.strip("."):
        raise InvalidName(f"{kind} must not be '{name}' (dots alone name folders in paths and URLs)")
    if len(name) > limit:
        raise InvalidName(
            f"{kind} has {len(name)} characters: at most {limit} are allowed",
            {"length": len(name), "limit": limit},
        )
    bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Cf", "Cs") and c not in JOINERS), None)
    if bad is not None:
        raise InvalidName(
            f"{kind} holds the control character U+{ord(bad):04X} at {name.index(bad)}: use printable text",
            {"character": f"U+{ord(bad):04X}", "position": name.index(bad)},
        )
    return name
