"""What `mrpvm ask` prints and how it exits, from a turn's fields: shared by the full CLI (ask.py) and its
thin daemon path (fast_ask.py), so both print alike. Standard library only (the thin path's start)."""

from __future__ import annotations

from mrpvm.protocol.no_context import NO_CONTEXT_ANSWER

TYPE_CHECKING = False  # typing is not loaded on the daemon path (fast_ask.py)
if TYPE_CHECKING:
    from typing import Any

# `mrpvm ask` exits 0 with an answer (weak ones included: the answer says so), REFUSED_EXIT when no question
# of the turn could be answered from the documents (the no-context sentence), 1-2 on errors (main.py).
REFUSED_EXIT = 3


def refused(response_document: dict) -> bool:
    """Every question of the turn was answered with the no-context sentence (none: a statement, not refused)."""
    groups = response_document.get("groups") or []
    return bool(groups) and all(
        (g.get("answerMarkdown") or "").strip() in ("", NO_CONTEXT_ANSWER) for g in groups
    )


def answer_text(result: Any, verbose: bool) -> str:
    """The answer a person reads; with `verbose` the full response document."""
    return result.response_markdown if verbose else (result.answer_markdown or result.response_markdown)


def status_footer(result: Any, via: str = "") -> str:
    """The one-line status (stderr): status, request and session ids, time, LLM calls, who answered."""
    return (
        f"[{result.status}] request {result.request_id} · session {result.session_id} · "
        f"{result.duration_ms:.0f} ms · {result.llm_calls} LLM calls{f' · {via}' if via else ''}\n"
    )
