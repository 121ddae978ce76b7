"""Ask the model for CNL sections; validate; at most one corrective retry that quotes the problems."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mrpvm.plugins.sdk import Call, PluginFailure
from mrpvm.plugins.sdk.llm import calls_left, chat, fill, load_prompt, reply_tokens
from mrpvm.plugins.sdk.model_output import ModelOutputError

T = TypeVar("T")
INVALID = "INVALID_MODEL_OUTPUT"


def ask_valid(
    call: Call,
    messages: list[dict[str, str]],
    parse: Callable[[str], T],
    *,
    max_tokens: int,
    retry: bool = True,
) -> tuple[T, bool]:
    """(parsed value, corrected?) — the first valid answer of at most two calls.

    The retry happens only when `retry` is set and the budget has a call left; an answer still invalid
    after it is a PluginFailure (INVALID_MODEL_OUTPUT) naming the problems.
    """
    max_tokens = reply_tokens(call, max_tokens)  # within the model's context window, when known
    text = chat(call, messages, max_tokens=max_tokens)
    try:
        return parse(text), False
    except ModelOutputError as first:
        if not retry or calls_left(call) < 1:
            raise PluginFailure(
                INVALID,
                f"the model's answer is not valid CNL and no corrective call is left: {first}",
                {"issues": [str(i) for i in first.issues[:12]]},
            ) from None
        correction = fill(load_prompt(__file__, "correct"), issues=first.for_prompt())
    retry_messages = [
        *messages,
        {"role": "assistant", "content": text},
        {"role": "user", "content": correction},
    ]
    text = chat(call, retry_messages, max_tokens=max_tokens)
    try:
        return parse(text), True
    except ModelOutputError as second:
        raise PluginFailure(
            INVALID,
            f"the model's answer is still not valid CNL after one correction: {second}",
            {"issues": [str(i) for i in second.issues[:12]]},
        ) from None
