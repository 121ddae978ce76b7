"""Is an LLM configured here, and does it answer? One report for `config show`, `settings llm-roles`,
the daemon's `/ready` and the web Settings tab. It names the endpoint (never the key: only whether one
is set), whether it answered `GET {base}/models` within a short deadline, and the model each role uses.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import msgspec

from .bridge import LLMBridge, options_from_environ

PROBE_S = 2.0  # a status probe never waits longer than this for the endpoint


class LLMStatus(msgspec.Struct, kw_only=True):
    configured: bool  # MRPVM_LLM_BASE_URL is set
    baseUrl: str = ""
    apiKeySet: bool = False
    reachable: bool | None = None  # None: not probed (nothing configured)
    models: list[str] = []  # what the endpoint offers (its first few)
    problem: str = ""  # why it does not answer, or what to set
    roles: dict[str, str] = {}  # role → the model it uses ("" → the request's, else the endpoint's default)

    def summary(self) -> str:
        """One line for people."""
        if not self.configured:
            return (
                "LLM: none configured (MRPVM_LLM_BASE_URL is not set): answers come from the symbolic plugins; "
                "the LLM plugins answer 'unsupported'"
            )
        key = "key set" if self.apiKeySet else "no key"
        if self.reachable:
            offered = f"; offers {', '.join(self.models[:3])}" + (" …" if len(self.models) > 3 else "")
            return f"LLM endpoint {self.baseUrl} ({key}): answers{offered if self.models else ''}"
        return f"LLM endpoint {self.baseUrl} ({key}): does NOT answer ({self.problem})"


async def llm_status(
    environ: Mapping[str, str] | None = None,
    *,
    bridge: LLMBridge | None = None,
    roles: Mapping[str, str] | None = None,
    probe: bool = True,
) -> LLMStatus:
    """The LLM's state: from `bridge` (a running kernel's, its model list cached) or the environment."""
    options = bridge.options if bridge is not None else options_from_environ(environ)
    upstream = options.upstream
    if upstream is None:
        return LLMStatus(
            configured=False, problem="set MRPVM_LLM_BASE_URL (and MRPVM_LLM_MODEL)", roles=dict(roles or {})
        )
    status = LLMStatus(
        configured=True, baseUrl=upstream.base_url, apiKeySet=bool(upstream.api_key), roles=dict(roles or {})
    )
    if not probe:
        return status
    probe_bridge = bridge or LLMBridge(options)
    try:
        status.models = (await probe_bridge.available_models(deadline=time.monotonic() + PROBE_S))[:20]
        status.reachable = True
    except Exception as err:  # noqa: BLE001 - any failure is what the report says
        status.reachable = False
        status.problem = " ".join(str(getattr(err, "message", err) or type(err).__name__).split())[:200]
    return status
