"""The LLM client plugins use: the kernel's loopback OpenAI-compatible endpoint given in `request.llm`.

    from mrpvm.plugins.sdk.llm import chat, fill, load_prompt, unsupported_without_llm

    if (refusal := unsupported_without_llm(call)) is not None:
        return refusal                      # `unsupported`: no endpoint or no call left
    text = chat(call, [{"role": "system", "content": load_prompt(__file__, "system")},
                       {"role": "user", "content": fill(load_prompt(__file__, "user"), question=call.prompt)}])

`chat` is synchronous (plugins are single-threaded processes), counts every call the bridge charged on
the Call (`call.llm_calls`; not one whose upstream was unreachable), uses the time left before the
call's deadline as its timeout, and turns every failure into a `PluginFailure` with an LLM_* code.
httpx is imported on first use only, so symbolic plugins that import the SDK pay nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .runtime import Call, PluginFailure
from .window import (  # re-exported: prompts are budgeted with the client that sends them
    context_tokens,
    estimate_tokens,
    evidence_label,
    evidence_tokens,
    fit_reply,
    fit_units,
    format_units,
    prompt_tokens,
    reply_room,
    reply_tokens,
    unit_line,
)

if TYPE_CHECKING:
    from mrpvm.protocol.document import CnlDocument

__all__ = [
    "Completion",
    "calls_left",
    "chat",
    "complete",
    "context_tokens",
    "estimate_tokens",
    "evidence_label",
    "evidence_tokens",
    "fill",
    "fit_reply",
    "fit_units",
    "format_units",
    "llm_ready",
    "load_prompt",
    "prompt_tokens",
    "reply_room",
    "reply_tokens",
    "unit_line",
    "unsupported_without_llm",
]

TIMEOUT_MARGIN_S = 0.05  # leave the SDK time to answer before the plugin's own deadline
ERROR_TEXT = 300
_clients: dict[str, Any] = {}
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def calls_left(call: Call) -> int:
    """LLM calls this plugin call may still make (the request's `budget.llmCalls` minus those made)."""
    return max(0, call.request.budget.llmCalls - call.llm_calls)


def llm_ready(call: Call, calls_needed: int = 1) -> bool:
    """An endpoint was given and the budget allows `calls_needed` calls."""
    return call.llm is not None and bool(call.llm.baseUrl) and calls_left(call) >= calls_needed


def unsupported_without_llm(call: Call, calls_needed: int = 1) -> CnlDocument | None:
    """The `unsupported` answer of a plugin that needs an LLM, when this call cannot make
    `calls_needed` calls (no endpoint, or no budget); None when it can."""
    if llm_ready(call, calls_needed):
        return None
    return call.reply("unsupported", result=f"{call.plugin.id} needs an LLM endpoint and an LLM call budget")


def _client(base_url: str):
    client = _clients.get(base_url)
    if client is None:
        import httpx

        client = _clients[base_url] = httpx.Client(base_url=base_url, trust_env=False)
    return client


def _drop_client(base_url: str) -> None:
    client = _clients.pop(base_url, None)
    if client is not None:
        try:
            client.close()
        except Exception:
            pass


def _bridge_error(response: Any) -> tuple[str, str, bool]:
    """(code, message, charged) from the bridge's OpenAI-style error body.

    `charged` is the bridge's `details.charged` (did this failed call cost an LLM call?); without it
    (not a bridge body) a 502/504 is taken as charged, as the bridge charges an upstream that answered.
    """
    charged = response.status_code in (502, 504)
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            details = error.get("details")
            if isinstance(details, dict) and isinstance(details.get("charged"), bool):
                charged = details["charged"]
            return str(error.get("code") or ""), str(error.get("message") or ""), charged
    except ValueError:
        pass
    return "", " ".join(response.text.split())[:ERROR_TEXT], charged


class Completion(NamedTuple):
    text: str
    truncated: bool  # the model stopped at max_tokens (finish_reason "length"): its text is cut


def chat(
    call: Call,
    messages: list[dict[str, str]],
    *,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    stop: list[str] | None = None,
    no_cache: bool = False,
) -> str:
    """One chat completion through the kernel's bridge; the first choice's message content."""
    return complete(
        call, messages, temperature=temperature, max_tokens=max_tokens, stop=stop, no_cache=no_cache
    ).text


def complete(
    call: Call,
    messages: list[dict[str, str]],
    *,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    stop: list[str] | None = None,
    no_cache: bool = False,
) -> Completion:
    """`chat`, also saying whether the completion was cut at max_tokens."""
    access = call.llm
    if access is None or not access.baseUrl:
        raise PluginFailure("LLM_UNAVAILABLE", "this call has no LLM endpoint (request.llm is null)")
    if calls_left(call) <= 0:
        raise PluginFailure(
            "LLM_BUDGET_EXHAUSTED",
            f"no LLM calls left in this call's budget ({call.request.budget.llmCalls})",
        )
    timeout = call.time_left() - TIMEOUT_MARGIN_S
    if timeout <= 0:
        raise PluginFailure("TIMEOUT", "no time left before the call's deadline for an LLM call")
    body: dict[str, Any] = {"model": access.model, "messages": messages, "temperature": temperature}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if stop:
        body["stop"] = stop
    headers = {"Authorization": f"Bearer {access.apiKey}"}
    if no_cache:
        headers["Cache-Control"] = "no-cache"
    import httpx

    base = access.baseUrl.rstrip("/")
    try:
        response = _client(base).post("/chat/completions", json=body, headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        _drop_client(base)
        call.llm_calls += 1  # the bridge may have counted it
        raise PluginFailure("LLM_TIMEOUT", f"the LLM call did not answer within {timeout:.1f} s") from None
    except httpx.HTTPError as err:
        _drop_client(base)
        raise PluginFailure("LLM_UNAVAILABLE", f"cannot reach the kernel's LLM endpoint: {err}") from None
    except BaseException:  # the SDK's deadline fired mid-request: the connection is in an unknown state
        _drop_client(base)
        raise
    status = response.status_code
    if status == 200:
        call.llm_calls += 1
        try:
            data = response.json()
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise PluginFailure(
                "LLM_BAD_RESPONSE", "the LLM endpoint answered without message content"
            ) from None
        if content is None:  # some servers send null for an empty completion
            content = ""
        if not isinstance(content, str):
            raise PluginFailure("LLM_BAD_RESPONSE", "the LLM answer's content is not text")
        return Completion(content, choice.get("finish_reason") == "length")
    code, message, charged = _bridge_error(response)
    details = {"status": status, "bridgeCode": code}
    if status == 401:
        raise PluginFailure(
            "LLM_TOKEN_REJECTED", f"the LLM endpoint refused this call's token: {message}", details
        )
    if status == 429:
        raise PluginFailure("LLM_BUDGET_EXHAUSTED", f"LLM call budget exhausted: {message}", details)
    if status == 400:
        raise PluginFailure("LLM_BAD_REQUEST", f"the LLM endpoint rejected the request: {message}", details)
    if charged:  # the upstream got the call: the bridge counted it (never for an unreachable upstream)
        call.llm_calls += 1
    failure = "LLM_TIMEOUT" if status == 504 else "LLM_UPSTREAM_ERROR"
    raise PluginFailure(failure, f"LLM call failed ({code or status}): {message}", details)


# --------------------------------------------------------------------------- prompts as files


@lru_cache(maxsize=64)
def _read_prompt(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def load_prompt(anchor: str, name: str) -> str:
    """The text of `prompts/<name>.md` in the folder of `anchor` (pass the plugin module's `__file__`)."""
    path = Path(anchor).resolve().parent / "prompts" / f"{name}.md"
    try:
        return _read_prompt(str(path))
    except OSError as err:
        raise PluginFailure("PROMPT_MISSING", f"cannot read prompt {path}: {err.strerror}") from None


def fill(template: str, **values: Any) -> str:
    """Replace `{{name}}` placeholders; a placeholder without a value is a bug, reported as such."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise PluginFailure("PROMPT_PLACEHOLDER", f"prompt placeholder {{{{{name}}}}} has no value")
        return str(values[name])

    return _PLACEHOLDER.sub(one, template)
