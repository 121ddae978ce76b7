"""The kernel's one LLM bridge (docs/ARCHITECTURE.md §7): role resolution, upstream calls, cache, budgets, events.

    bridge = LLMBridge.from_environ(environ, store=ctx.store)
    await bridge.start()                        # serves the loopback endpoint (only if an upstream is set)
    bridge.open_request(request_id, budget)     # budget: anything with llm_calls_left / charge(n)
    access = bridge.access(request_id, frame_id, plugin_id, role, calls_allowed, deadline, call_ref=node_id)
    ...                                         # request.llm = access (None when bridge.available is False)
    counted = bridge.release(access.apiKey)     # after the plugin call: revoke its token
    events = bridge.drain_events(request_id, call_ref=node_id)   # -> trace nodes
    bridge.expire_request(request_id)           # the request is over: every token dies
    await bridge.aclose()

Cache hits are counted against the plugin call's allowance (its token) but not against the request's
budget: the budget bounds calls that reach the upstream. A call whose request never got to the upstream
(connection refused, DNS failure, connect timeout: no HTTP response at all) costs neither: it is charged
while it runs, like any call, and refunded when it fails that way. It still counts toward the breaker,
its event records the error, and the error body tells the plugin `details.charged: false` so the plugin
does not report it in `LLMCalls` either.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from typing import Any

from mrpvm.protocol.envelope import LLMAccess

from ..budgets import CallBudget
from .cache import FORWARDED_PARAMS, CacheBackend, ResponseCache, cache_key
from .client import (
    Completion,
    UpstreamClient,
)
from .errors import (
    LLM_BAD_REQUEST,
    LLM_BAD_RESPONSE,
    LLM_BUDGET_EXHAUSTED,
    LLM_CONNECTION_ERROR,
    LLM_RATE_LIMITED,
    LLM_TIMEOUT,
    LLM_TOKEN_INVALID,
    LLM_UNAVAILABLE,
    LLM_UPSTREAM_ERROR,
    LLM_UPSTREAM_REJECTED,
    LLMError,
)
from .events import CACHE_HIT, LLMCallEvent
from .options import BridgeOptions, options_from_environ
from .settings import RoleTable, SettingsStore, settings_store_for
from .tokens import CANCELLED_MESSAGE, Grant, InFlight, Ledger, TokenTable

MODELS_TTL_S = 60.0
# A dead upstream: after this many consecutive unreachable/timeout/5xx failures the bridge answers
# LLM_UNAVAILABLE at once (no budget charged) until the cooldown passes; then one call probes again.
BREAKER_THRESHOLD = 3
BREAKER_COOLDOWN_S = 15.0
FALLBACK_MODEL = "default"  # sent when no level names a model and the upstream lists none


class LLMBridge:
    """Owns the upstream client, the role table, the cache, the token table and the loopback endpoint."""

    def __init__(
        self,
        options: BridgeOptions,
        *,
        roles: RoleTable | None = None,
        cache: CacheBackend | None = None,
        clock=time.monotonic,
    ):
        self.options = options
        self.roles = roles or RoleTable()
        self.cache = ResponseCache(cache, enabled=options.cache)
        self.tokens = TokenTable(clock)
        self._clock = clock
        self._client: UpstreamClient | None = None
        self._endpoint: Any = None
        self._models: tuple[float, list[str]] | None = None
        self._models_failed_at: float | None = None
        self._failures = 0  # consecutive upstream failures (breaker)
        self._open_until = 0.0

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, *, store: Any = None) -> LLMBridge:
        """Options from MRPVM_LLM_*; role settings and cache in `store` (the kernel's Store), if given."""
        env = os.environ if environ is None else environ
        settings: SettingsStore | None = settings_store_for(store) if store is not None else None
        roles = RoleTable(settings, env_model=env.get("MRPVM_LLM_MODEL", ""))
        cache = store if store is not None and hasattr(store, "cache_get") else None
        return cls(options_from_environ(env), roles=roles, cache=cache)

    # ------------------------------------------------------------------ lifecycle

    @property
    def available(self) -> bool:
        """An upstream is configured and the loopback endpoint is serving."""
        return self.options.upstream is not None and self._endpoint is not None

    @property
    def base_url(self) -> str | None:
        """The loopback endpoint plugins use (`http://127.0.0.1:PORT/v1`), or None."""
        return self._endpoint.base_url if self._endpoint is not None else None

    @property
    def unix_socket(self) -> str | None:
        """The same endpoint's Unix socket (a sandboxed LLM plugin's relay forwards to it), or None."""
        return self._endpoint.unix_path if self._endpoint is not None else None

    @property
    def endpoint_address(self) -> tuple[str, int] | None:
        """(host, port) of the loopback endpoint, or None."""
        endpoint = self._endpoint
        return (endpoint.host, endpoint.port) if endpoint is not None else None

    async def start(self) -> LLMBridge:
        if self.options.upstream is None or self._endpoint is not None:
            return self
        from .endpoint import LoopbackEndpoint

        self._client = UpstreamClient(self.options.upstream)
        endpoint = LoopbackEndpoint(self, host=self.options.host, port=self.options.port)
        try:
            await endpoint.start()
        except BaseException:
            await self._client.aclose()
            self._client = None
            raise
        self._endpoint = endpoint
        return self

    async def aclose(self) -> None:
        endpoint, self._endpoint = self._endpoint, None
        client, self._client = self._client, None
        try:
            if endpoint is not None:
                await endpoint.aclose()
        finally:
            if client is not None:
                await client.aclose()

    async def __aenter__(self) -> LLMBridge:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ requests and tokens

    def open_request(self, request_id: str, budget: CallBudget, model: str = "") -> None:
        """Register a request's shared LLM budget (and its request/session model) before issuing tokens."""
        self.tokens.open_request(request_id, budget, model)

    def access(
        self,
        request_id: str,
        frame_id: str,
        plugin_id: str,
        role: str | None,
        calls_allowed: int,
        deadline: float,
        *,
        call_ref: str | None = None,
    ) -> LLMAccess | None:
        """The request's `llm` field for one plugin call (a fresh token; `deadline` is time.monotonic()
        seconds), or None (no upstream, or no calls allowed)."""
        if not self.available or calls_allowed <= 0:
            return None
        token = self.tokens.issue(request_id, frame_id, plugin_id, role, calls_allowed, deadline, call_ref)
        ledger = self.tokens.ledger(request_id)
        model = self.roles.resolve(role, plugin_id, ledger.model if ledger else "").model
        return LLMAccess(
            baseUrl=self.base_url or "", apiKey=token, model=model, contextTokens=self.options.context_tokens
        )

    def release(self, token: str) -> int:
        """Revoke a plugin call's token when the call is over; returns how many LLM calls it made."""
        return self.tokens.release(token)

    def expire_request(self, request_id: str) -> list[LLMCallEvent]:
        """Revoke every token of a finished request; returns the events nobody drained."""
        return self.tokens.expire_request(request_id)

    def drain_events(self, request_id: str, call_ref: str | None = None) -> list[LLMCallEvent]:
        """The request's recorded LLM calls since the last drain (only those of `call_ref` if given)."""
        return self.tokens.drain(request_id, call_ref)

    # ------------------------------------------------------------------ models

    async def resolve_model(
        self, role: str | None, plugin_id: str | None, request_model: str = "", deadline: float | None = None
    ) -> tuple[str, str]:
        """(model, source). With nothing configured: the upstream's first listed model, else "default"."""
        resolution = self.roles.resolve(role, plugin_id, request_model)
        if resolution.model:
            return resolution.model, resolution.source
        failed = self._models_failed_at
        models: list[str] = []
        if failed is None or self._clock() - failed >= MODELS_TTL_S:  # do not re-ask a /models that failed
            try:
                models = await self.available_models(deadline=deadline)
            except LLMError:
                self._models_failed_at = self._clock()
        return (models[0], "upstream") if models else (FALLBACK_MODEL, "none")

    async def available_models(self, *, refresh: bool = False, deadline: float | None = None) -> list[str]:
        """The upstream's models (GET {base}/models), cached for a minute."""
        upstream = self.options.upstream
        if upstream is None:
            raise LLMError(LLM_UNAVAILABLE, "no LLM endpoint is configured (set MRPVM_LLM_BASE_URL)")
        now = self._clock()
        if not refresh and self._models is not None and now - self._models[0] < MODELS_TTL_S:
            return list(self._models[1])
        client = self._client
        owned = client is None
        if client is None:
            client = UpstreamClient(upstream)
        try:
            models = await client.models(deadline=deadline or time.monotonic() + upstream.timeout_s)
        finally:
            if owned:
                await client.aclose()
        self._models = (now, models)
        return list(models)

    # ------------------------------------------------------------------ one call (the endpoint's work)

    async def complete(self, token: str, body: dict[str, Any], *, use_cache: bool = True) -> dict[str, Any]:
        """Serve one chat completion for a plugin: auth, model, cache, budget, upstream, event.

        Returns the OpenAI response body or raises LLMError (token, budget, upstream, bad response).
        """
        grant, ledger = self.tokens.check(token)
        messages = check_messages(body.get("messages"))
        params = {k: body[k] for k in FORWARDED_PARAMS if k in body}
        # The kernel chooses the model; the `model` a plugin sends is ignored.
        model, source = await self.resolve_model(grant.role, grant.plugin_id, ledger.model, grant.deadline)
        event = LLMCallEvent(
            requestId=grant.request_id,
            frameId=grant.frame_id,
            pluginId=grant.plugin_id,
            callRef=grant.call_ref,
            role=grant.role,
            model=model,
            modelSource=source,
        )
        started = time.perf_counter()
        charged = False
        try:
            if grant.calls_used >= grant.calls_allowed:
                raise LLMError(
                    LLM_BUDGET_EXHAUSTED,
                    f"{grant.plugin_id} may make at most {grant.calls_allowed} LLM call(s) in this plugin call",
                    {"callsAllowed": grant.calls_allowed},
                )
            key = cache_key(model, messages, params)
            if use_cache:
                cached = await self.cache.get(key)
                if cached is not None:
                    grant.calls_used += 1
                    event.status, event.cacheHit = CACHE_HIT, True
                    event.promptTokens = _usage(cached, "prompt_tokens")
                    event.completionTokens = _usage(cached, "completion_tokens")
                    return cached
            self._check_breaker()
            if grant.revoked:  # the plugin call ended while the model was resolved or the cache read
                raise LLMError(
                    LLM_TOKEN_INVALID,
                    f"the call of {grant.plugin_id} ended before its LLM call was sent",
                    {"reachedUpstream": False},
                )
            self._charge(grant, ledger)
            charged = True
            try:
                completion = await self._upstream(model, messages, params, grant, InFlight(event, started))
            except LLMError as err:
                self._note_failure(err)
                if err.details.get("reachedUpstream") is False:  # no model saw it: not a billable call
                    self._refund(grant, ledger)
                    charged = False
                raise
            self._failures = 0
            event.answered(completion)
            await self.cache.put(key, model, completion.body)
            return completion.body
        except LLMError as err:
            err.details["charged"] = charged
            event.failed(err.code, err.message, int(err.details.get("attempts", 0) or 0))
            raise
        finally:
            if not any(e is event for e in grant.recorded):  # else `Grant.revoke` recorded it
                event.latencyMs = (time.perf_counter() - started) * 1000.0
                ledger.events.append(event)

    def _check_breaker(self) -> None:
        if self._failures >= BREAKER_THRESHOLD and self._clock() < self._open_until:
            raise LLMError(
                LLM_UNAVAILABLE,
                f"the upstream failed {self._failures} times in a row; not calling it for "
                f"{self._open_until - self._clock():.0f} s",
                {"consecutiveFailures": self._failures},
            )

    def _note_failure(self, err: LLMError) -> None:
        if err.code in (LLM_CONNECTION_ERROR, LLM_TIMEOUT, LLM_UPSTREAM_ERROR):
            self._failures += 1
            if self._failures >= BREAKER_THRESHOLD:
                self._open_until = self._clock() + BREAKER_COOLDOWN_S
        elif err.code in (LLM_RATE_LIMITED, LLM_UPSTREAM_REJECTED, LLM_BAD_RESPONSE):
            self._failures = 0  # the upstream answered: it is alive
        # else (cancelled, not started): nothing learned about the upstream

    def _charge(self, grant: Grant, ledger: Ledger) -> None:
        """Take one call from the request budget (and the token), or refuse: no await in between, and
        the call counts as spent while it runs, so concurrent calls never overdraw the budget."""
        left = ledger.budget.llm_calls_left
        if left <= 0:
            raise LLMError(
                LLM_BUDGET_EXHAUSTED,
                f"request {grant.request_id} has used its LLM call budget",
                {"requestId": grant.request_id},
            )
        ledger.budget.charge(1)
        grant.calls_used += 1

    @staticmethod
    def _refund(grant: Grant, ledger: Ledger) -> None:
        """Give back a charged call whose request never reached the upstream."""
        ledger.budget.refund(1)
        grant.calls_used -= 1

    async def _upstream(
        self, model: str, messages: Any, params: dict[str, Any], grant: Grant, flight: InFlight
    ) -> Completion:
        """The upstream call as its own task, so revoking the grant (its plugin call ended) cancels it."""
        if self._client is None:
            raise LLMError(LLM_UNAVAILABLE, "the LLM bridge is not started", {"reachedUpstream": False})
        body = {"model": model, "messages": messages, **params}
        call = asyncio.ensure_future(self._client.chat(body, deadline=grant.deadline))
        grant.upstream[call] = flight
        try:
            return await call
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if call.cancelled() and (current is None or not current.cancelling()):
                raise LLMError(
                    LLM_TOKEN_INVALID, CANCELLED_MESSAGE % grant.plugin_id, {"cancelled": True}
                ) from None
            raise
        finally:
            grant.upstream.pop(call, None)


def check_messages(messages: Any) -> list[dict[str, Any]]:
    """The chat messages of a request: a non-empty list of {role, content} objects, or LLM_BAD_REQUEST."""
    if not isinstance(messages, list) or not messages:
        raise LLMError(LLM_BAD_REQUEST, "`messages` must be a non-empty list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise LLMError(LLM_BAD_REQUEST, f"messages[{i}] must be an object with a string `role`")
        if "content" not in message:
            raise LLMError(LLM_BAD_REQUEST, f"messages[{i}] has no `content`")
    return messages


def _usage(body: dict[str, Any], name: str) -> int | None:
    usage = body.get("usage")
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) else None
