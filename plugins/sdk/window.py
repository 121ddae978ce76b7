"""Prompts that fit the model's context window (`llm.contextTokens`, told to every call by the kernel).

A plugin cannot see the model's tokenizer, so it counts with `estimate_tokens`, an upper estimate built
from the pieces a byte-pair tokenizer splits text into: measured against SmolLM2's own tokenizer on every
prompt template and the paragraphs of the eval suites' documents, it is 1.21× the real count overall and
never below it on any six-paragraph stretch (a plain characters/3 rule fell to 0.79× on option lists and
man-page columns). A prompt fits when its estimate, the chat template's markers per message and the
reply's max_tokens together stay within the window. Evidence is budgeted by whole units: a unit that does
not fit is left out whole, never cut. When the window is not known (0), nothing is trimmed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .runtime import Call, PluginFailure

MESSAGE_OVERHEAD_TOKENS = 8  # `<|im_start|>role\n … <|im_end|>\n` and the like, per message
REPLY_PRIMER_TOKENS = 4  # the assistant header the template adds after the last message
DEFAULT_EVIDENCE_TOKENS = 8000  # when the window is not known
REPLY_SHARE = 4  # a reply may take at most 1/REPLY_SHARE of a known window
MIN_REPLY_TOKENS = 128  # below this no CNL or cited answer fits: the call is not worth making
WORD_CHARS = 5  # a lower-case word costs one token per this many letters (long or rare words split)
_PIECES = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Za-z][a-z]*|[0-9]|[^\S\n]+|\n+|[^\sA-Za-z0-9]")


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens `text` costs (module docstring): a word one token per WORD_CHARS
    letters, an upper-case run one per two, every digit, punctuation mark and line break one, a space
    before a digit one, a run of spaces one per 16, a non-ASCII character one per UTF-8 byte."""
    count = 0
    for match in _PIECES.finditer(text):
        piece = match.group()
        first = piece[0]
        if first == "\n":
            count += len(piece)
        elif piece == " ":  # joins the next word's token, except before a digit (digits split one by one)
            count += text[match.end() : match.end() + 1].isdigit()
        elif first.isspace():
            count += 1 + len(piece) // 16
        elif first.isascii() and first.isalpha():
            upper = len(piece) > 1 and piece.isupper()
            count += math.ceil(len(piece) / (2 if upper else WORD_CHARS))
        elif first.isascii():
            count += 1
        else:
            count += len(piece.encode())
    return count


def prompt_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """The estimated size of a chat prompt: its texts, each message's template markers, the reply header."""
    texts = sum(estimate_tokens(m.get("content") or "") for m in messages)
    return texts + len(messages) * MESSAGE_OVERHEAD_TOKENS + REPLY_PRIMER_TOKENS


def context_tokens(call: Call) -> int:
    """The model's context window the kernel told this call (`llm.contextTokens`); 0 when unknown."""
    return max(0, int(getattr(call.llm, "contextTokens", 0) or 0)) if call.llm is not None else 0


def reply_tokens(call: Call, wanted: int) -> int:
    """The max_tokens to ask for: `wanted`, within 1/REPLY_SHARE of a known context window."""
    window = context_tokens(call)
    return min(wanted, window // REPLY_SHARE) if window else wanted


def reply_room(call: Call, messages: Sequence[Mapping[str, str]], wanted: int) -> int:
    """The max_tokens a reply to `messages` may ask for: reply_tokens(wanted), less when the prompt leaves
    less of a known window; below MIN_REPLY_TOKENS (or `wanted`, if smaller) the answer does not fit."""
    reply = reply_tokens(call, wanted)
    window = context_tokens(call)
    return min(reply, window - prompt_tokens(messages)) if window else reply


def fit_reply(call: Call, messages: Sequence[Mapping[str, str]], wanted: int, what: str) -> int:
    """reply_room, or CONTEXT_WINDOW_TOO_SMALL (no call is made) when no useful reply fits: `what` names the
    call in the message ("the seed prompt", "a corrective call")."""
    room = reply_room(call, messages, wanted)
    if room >= min(wanted, MIN_REPLY_TOKENS):
        return room
    window = context_tokens(call)
    raise PluginFailure(
        "CONTEXT_WINDOW_TOO_SMALL",
        f"{what} takes about {prompt_tokens(messages)} of the model's {window} context tokens, leaving "
        f"{max(0, room)} for a reply (at least {min(wanted, MIN_REPLY_TOKENS)} needed)",
        {"reason": "context-window", "promptTokens": prompt_tokens(messages), "contextTokens": window},
    )


def evidence_tokens(call: Call, fixed: Sequence[str], reply: int, messages: int = 2) -> int:
    """Tokens of evidence a prompt may add to its `fixed` texts (every other message part) so that the prompt
    and a `reply`-token completion fit the context window; DEFAULT_EVIDENCE_TOKENS when unknown."""
    window = context_tokens(call)
    if not window:
        return DEFAULT_EVIDENCE_TOKENS
    used = sum(estimate_tokens(t) for t in fixed) + messages * MESSAGE_OVERHEAD_TOKENS
    used += REPLY_PRIMER_TOKENS + reply
    return max(0, min(DEFAULT_EVIDENCE_TOKENS, window - used))


# --------------------------------------------------------------------------- units in prompts


def unit_line(unit: Any, label: str = "") -> str:
    """One knowledge unit as a prompt line `[id] (Role; Topic) statement` (`[label]` instead of the id
    when given: short labels are what a small model can copy)."""
    body = " ".join(unit.body.split()) if unit.role != "Procedure" else unit.body.strip()
    condition = f" (when {unit.condition})" if unit.condition else ""
    return f"[{label or unit.id}] ({unit.role}; {unit.topic}) {body}{condition}"


def fit_units(
    units: Sequence[Any], max_tokens: int, *, labels: bool | Mapping[str, str] = False
) -> tuple[str, list[Any]]:
    """(prompt lines, the units they hold): whole units in order while they fit `max_tokens`; a unit that
    does not fit is left out whole (never cut mid-unit) and a later, shorter one may still fit. A last
    line says how many were left out. `labels`: True → the n-th unit given is `[En]` (evidence_label);
    a mapping → each unit keeps the label it maps its id to (a later prompt showing fewer of the units)."""
    lines: list[str] = []
    given: list[Any] = []
    size = 0
    note = estimate_tokens(f"(+{len(units)} more evidence items left out for length)") + 1
    for unit in units:
        label = ""
        if isinstance(labels, Mapping):
            label = labels[unit.id]
        elif labels:
            label = evidence_label(len(given))
        line = unit_line(unit, label)
        cost = estimate_tokens(line) + 1
        if size + cost + note > max_tokens:
            continue
        lines.append(line)
        given.append(unit)
        size += cost
    if len(given) < len(units):
        lines.append(f"(+{len(units) - len(given)} more evidence items left out for length)")
    return "\n".join(lines), given


def evidence_label(index: int) -> str:
    """The prompt label of the index-th unit given (0-based): E1, E2, ..."""
    return f"E{index + 1}"


def format_units(units: list[Any], max_tokens: int = DEFAULT_EVIDENCE_TOKENS) -> str:
    """Knowledge units as prompt lines (fit_units), whole units only, within `max_tokens`."""
    return fit_units(units, max_tokens)[0]
