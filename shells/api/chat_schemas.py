"""The chat bodies of the daemon (msgspec Structs): a turn's request fields, OpenAI's chat completion
request, response and stream chunk, the model list, and MRP-VM's own turn request and response
(`/chat/completions`). The other bodies are in schemas.py."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mrpvm.kernel.budgets import MAX_DELIBERATION
from msgspec import Meta, Struct

NonEmpty = Annotated[str, Meta(min_length=1)]
NonNegative = Annotated[int, Meta(ge=0)]
DeliberationLevel = Annotated[int, Meta(ge=0, le=MAX_DELIBERATION)]


# --------------------------------------------------------------------------- shared turn fields


class ContentPart(Struct, kw_only=True):
    """One part of a multi-part message; only text parts carry text the kernel reads."""

    type: str = "text"
    text: str | None = None


class ChatMessage(Struct, kw_only=True):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None
    name: str | None = None

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        if not self.content:
            return ""
        return "\n".join(p.text for p in self.content if p.type == "text" and p.text)


class PinFields(Struct, kw_only=True):
    """Plugins to pin (a turn) or prefer (a session), one per stage. The legacy names
    (shells/legacy.py) map to pins and are never stored; an unknown value is a 400."""

    processing_mode: str | None = None  # symbolic-only | llm-assisted
    retrieval_profile: str | None = None  # fast | balanced | thinkingdb
    planner_plugin: str | None = None
    seed_detector_plugin: str | None = None
    kb_plugin: str | None = None
    goal_solver_plugin: str | None = None
    validator_plugin: str | None = None


class TurnFields(PinFields, kw_only=True):
    """MRP-VM fields every chat body accepts (extra body fields for OpenAI clients)."""

    session_id: str | None = None
    kb: str | None = None  # a KB name or id to mount for this turn (default: the session's)
    max_llm_calls: NonNegative | None = None
    deliberation_level: DeliberationLevel | None = None  # 0-3; default: the session's preference (0)


class ChatCompletionRequest(TurnFields, kw_only=True):
    """`POST /v1/chat/completions`. `model` is `mrp-vm` or `mrp-vm:<plugin-id>[,<plugin-id>...]` (pins)."""

    messages: Annotated[list[ChatMessage], Meta(min_length=1)]
    model: str = "mrp-vm"
    stream: bool = False


class SourceText(Struct, kw_only=True):
    """A text loaded into the turn's session before the turn, as `POST /sessions/{id}/context` loads it."""

    source_name: NonEmpty
    text: str


class MrpChatRequest(TurnFields, kw_only=True):
    """`POST /chat/completions` (DS013): one `message`, or OpenAI-style `messages`; SSE unless stream=false.
    `sources` (with `message`): texts loaded into the session first (a new one without `session_id`), so
    `mrpvm ask --source` is one request; the completed turn then carries their `context_warnings`."""

    message: str | None = None
    messages: list[ChatMessage] | None = None
    model: str | None = None
    stream: bool = True
    sources: list[SourceText] | None = None


# --------------------------------------------------------------------------- OpenAI responses


class Usage(Struct, kw_only=True, frozen=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class AssistantMessage(Struct, kw_only=True):
    role: str = "assistant"
    content: str = ""


class Choice(Struct, kw_only=True):
    index: int = 0
    message: AssistantMessage
    finish_reason: str = "stop"
    logprobs: None = None


class TurnEcho(Struct, kw_only=True):
    """What MRP-VM adds to a completion: the ids, the plugins that served the turn, the document, the trace."""

    request_id: str
    session_id: str
    planner_plugin: str | None = None
    seed_detector_plugin: str | None = None
    kb_plugin: str | None = None
    goal_solver_plugin: str | None = None
    processing_mode: str | None = None  # derived from the plugins that served (legacy name)
    retrieval_profile: str | None = None  # derived from the kb-plugin that served (legacy name)
    deliberation_level: int = 0
    status: str = ""
    llm_calls: int = 0
    duration_ms: float = 0.0
    response_document: dict[str, Any] = {}
    execution_trace: dict[str, Any] = {}


class ChatCompletion(TurnEcho, kw_only=True):
    id: str
    object: str = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage = Usage()


class Delta(Struct, kw_only=True, omit_defaults=True):
    role: str | None = None
    content: str | None = None


class ChunkChoice(Struct, kw_only=True):
    index: int = 0
    delta: Delta
    finish_reason: str | None = None
    logprobs: None = None


class ChatCompletionChunk(Struct, kw_only=True, omit_defaults=True):
    """One `chat.completion.chunk`; the last one (finish_reason stop) also carries the TurnEcho fields."""

    id: str
    object: Literal["chat.completion.chunk"]  # required: omit_defaults would drop it
    created: int
    model: str
    choices: list[ChunkChoice]
    request_id: str | None = None
    session_id: str | None = None
    status: str | None = None
    processing_mode: str | None = None
    retrieval_profile: str | None = None
    response_document: dict[str, Any] | None = None
    execution_trace: dict[str, Any] | None = None


class Model(Struct, kw_only=True):
    id: str
    object: str = "model"
    created: int = 0
    owned_by: str = "mrp-vm"


class ModelList(Struct, kw_only=True):
    object: str = "list"
    data: list[Model] = []


# --------------------------------------------------------------------------- MRP-VM bodies


class TurnResponse(TurnEcho, kw_only=True):
    """`POST /chat/completions` with stream=false, and the data of the `response.completed` event:
    `response_markdown` is the full response document as Markdown, `answer_markdown` what a person reads
    (the answers, a note when one is weak, the sources; the OpenAI route's `content`)."""

    response_markdown: str = ""
    answer_markdown: str = ""
    context_warnings: list[str] | None = None  # the `sources`' load warnings; None when none were given
