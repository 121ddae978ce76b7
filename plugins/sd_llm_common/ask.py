"""Ask the model for CNL sections; validate; at most one corrective retry that quotes the problems.

Both calls fit the model's context window (`llm.contextTokens`): the first asks for at most what the
prompt leaves of it, and the retry — the first conversation grown by the invalid answer and the list of
its problems — is made only when it still leaves room for a useful reply; otherwise the invalid answer is
the error, with the reason, and no call is spent on a request the model would refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mrpvm.plugins.sdk import Call, PluginFailure
from mrpvm.plugins.sdk.llm import calls_left, chat, fill, fit_reply, load_prompt
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
    what: str = "the prompt",
) -> tuple[T, bool]:
    """(parsed value, corrected?) — the first valid answer of at most two calls.

    The retry happens only when `retry` is set, the budget has a call left and the grown conversation fits
    the context window; an answer still invalid after it is a PluginFailure (INVALID_MODEL_OUTPUT) naming
    the problems. A first prompt that leaves no room for a reply is CONTEXT_WINDOW_TOO_SMALL, no call made.
    """
    text = chat(call, messages, max_tokens=fit_reply(call, messages, max_tokens, what))
    try:
        return parse(text), False
    except ModelOutputError as first:
        if not retry or calls_left(call) < 1:
            raise PluginFailure(
                INVALID,
                f"the model's answer is not valid CNL and no corrective call is left: {first}",
                {"issues": [str(i) for i in first.issues[:12]]},
            ) from None
        problems = first
    retry_messages = [
        *messages,
        {"role": "assistant", "content": text},
        {"role": "user", "content": fill(load_prompt(__file__, "correct"), issues=problems.for_prompt())},
    ]
    try:
        retry_tokens = fit_reply(call, retry_messages, max_tokens, "a corrective call")
    except PluginFailure as no_room:
        raise PluginFailure(
            INVALID,
            f"the model's answer is not valid CNL and {no_room.message}: {problems}",
            {"issues": [str(i) for i in problems.issues[:12]], "reason": "context-window"},
        ) from None
    text = chat(call, retry_messages, max_tokens=retry_tokens)
    try:
        return parse(text), True
    except ModelOutputError as second:
        raise PluginFailure(
            INVALID,
            f"the model's answer is still not valid CNL after one correction: {second}",
            {"issues": [str(i) for i in second.issues[:12]]},
        ) from None
