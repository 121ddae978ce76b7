"""Whether an LLM upstream is configured, decided without importing the bridge or its HTTP client."""

from __future__ import annotations

import os
from collections.abc import Mapping

BASE_URL_VAR = "MRPVM_LLM_BASE_URL"


def configured(environ: Mapping[str, str] | None = None) -> bool:
    """True when MRPVM_LLM_BASE_URL names an upstream (the bridge's own test, `options_from_environ`)."""
    env = os.environ if environ is None else environ
    return bool((env.get(BASE_URL_VAR) or "").strip())
