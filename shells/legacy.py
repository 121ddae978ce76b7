"""The legacy `processing_mode` and `retrieval_profile` fields, mapped to plugin pins (seed table):

| legacy                     | plugins                      |
|----------------------------|------------------------------|
| processing_mode symbolic-only | sd-symbolic + gs-symbolic |
| processing_mode llm-assisted  | sd-llm-fast + gs-llm-fast |
| retrieval_profile fast        | kb-fast                   |
| retrieval_profile balanced    | kb-balanced               |
| retrieval_profile thinkingdb  | kb-thinkingdb             |

They are accepted by the chat routes, `POST /sessions` and `mrpvm ask`, turned into pins (an explicit
`*_plugin` field or flag for the same stage wins), never stored as such: a response derives them back from
the plugin ids that served (`derived_legacy`). An unknown value is a 400 naming the allowed values.
"""

from __future__ import annotations

from mrpvm.kernel.errors import BadInput

LEGACY_KEYS = ("processing_mode", "retrieval_profile")  # what `derived_legacy` returns
PROCESSING_MODES: dict[str, dict[str, str]] = {
    "symbolic-only": {"sd": "sd-symbolic", "gs": "gs-symbolic"},
    "llm-assisted": {"sd": "sd-llm-fast", "gs": "gs-llm-fast"},
}
RETRIEVAL_PROFILES: dict[str, str] = {
    "fast": "kb-fast",
    "balanced": "kb-balanced",
    "thinkingdb": "kb-thinkingdb",
}


class UnknownLegacyValue(BadInput, code="UNKNOWN_LEGACY_VALUE"):
    """A processing_mode or retrieval_profile outside the seed's table."""


def _unknown(field: str, value: str, allowed: list[str]) -> UnknownLegacyValue:
    return UnknownLegacyValue(
        f"{field}: unknown value '{value}' (allowed: {', '.join(allowed)})",
        {"field": field, "value": value, "allowed": allowed},
    )


def legacy_pins(processing_mode: str | None, retrieval_profile: str | None) -> dict[str, str]:
    """The stage pins (`sd`, `gs`, `kb`) the legacy fields stand for; {} when neither is given."""
    pins: dict[str, str] = {}
    if processing_mode is not None:
        mode = PROCESSING_MODES.get(processing_mode.strip().lower())
        if mode is None:
            raise _unknown("processing_mode", processing_mode, list(PROCESSING_MODES))
        pins.update(mode)
    if retrieval_profile is not None:
        plugin = RETRIEVAL_PROFILES.get(retrieval_profile.strip().lower())
        if plugin is None:
            raise _unknown("retrieval_profile", retrieval_profile, list(RETRIEVAL_PROFILES))
        pins["kb"] = plugin
    return pins


def derived_legacy(sd: str | None, kb: str | None, gs: str | None) -> dict[str, str | None]:
    """`processing_mode` and `retrieval_profile` as the plugins that served say (None: no legacy name)."""
    mode = next((m for m, p in PROCESSING_MODES.items() if p == {"sd": sd, "gs": gs}), None)
    if mode is None and gs is not None:  # the answer's solver decides when the seed detector differs
        mode = next((m for m, p in PROCESSING_MODES.items() if p["gs"] == gs), None)
    profile = next((name for name, plugin in RETRIEVAL_PROFILES.items() if plugin == kb), None)
    return {"processing_mode": mode, "retrieval_profile": profile}
