"""Request and response bodies of the daemon (msgspec Structs): decoding them names the wrong field. The
chat bodies (OpenAI's and MRP-VM's turn) are in chat_schemas.py; sessions, KBs, plugins, health and errors here.

OpenAI-shaped bodies keep OpenAI's snake_case names; MRP-VM bodies use snake_case field names too, and
embed kernel records (camelCase, as the store returns them) where they carry one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from .chat_schemas import DeliberationLevel, NonEmpty, PinFields


class SessionCreate(PinFields, kw_only=True):
    """`POST /sessions`: an optional KB to mount, plugin preferences (same names as the pins; the legacy
    names map to them) and the deliberation level its turns use unless a turn says otherwise."""

    kb: str | None = None
    deliberation_level: DeliberationLevel = 0


class SessionUpdate(PinFields, kw_only=True, forbid_unknown_fields=True):
    """`PATCH /sessions/{id}`: change the preferences given (an empty string clears a plugin preference)
    and the title (whitespace collapsed; a blank title makes the session untitled)."""

    deliberation_level: DeliberationLevel | None = None
    title: Annotated[str, Meta(max_length=200)] | None = None


class SessionInfo(Struct, kw_only=True):
    session_id: str
    kb_id: str | None = None
    kb_name: str | None = None
    preferences: dict[str, str] = {}
    deliberation_level: int = 0
    processing_mode: str | None = None  # derived from the preferences (legacy name), never stored
    retrieval_profile: str | None = None
    created_at: str = ""
    updated_at: str = ""
    turn_count: int = 0
    unit_count: int = 0
    title: str = ""


class SessionList(Struct, kw_only=True):
    sessions: list[SessionInfo] = []


class ContextLoad(Struct, kw_only=True):
    """`POST /sessions/{id}/context`: text loaded as session KUs through the sd-plugin. Upstream's names
    are aliases: `content` for `text`, `name` for `source_name` (give one of each pair)."""

    text: str | None = None
    content: str | None = None
    source_name: str | None = None
    name: str | None = None
    seed_detector_plugin: NonEmpty = "sd-symbolic"


class ContextLoaded(Struct, kw_only=True):
    session_id: str
    source_id: str
    added: int
    unit_ids: list[str] = []
    warnings: list[str] = []


class ExplainEntry(Struct, kw_only=True):
    request_id: str
    turn_index: int
    user_message: str
    answer_preview: str
    status: str
    plugin_ids: dict[str, str] = {}
    llm_calls: int = 0
    duration_ms: float = 0.0
    created_at: str = ""
    response_document: dict[str, Any] = {}
    trace: dict[str, Any] = {}
    answer_truncated: bool = False  # the stored answer was cut to the stored-answer cap (marker in the text)


class Explainability(Struct, kw_only=True):
    """One page of a session's committed turns; `next_cursor` fetches the next page (None: the last)."""

    session_id: str
    turns: list[ExplainEntry] = []
    next_cursor: str | None = None


class KbCreate(Struct, kw_only=True):
    name: NonEmpty


class KbInfo(Struct, kw_only=True):
    id: str
    name: str
    created_at: str = ""
    sources: int = 0
    units: int = 0


class KbList(Struct, kw_only=True):
    kbs: list[KbInfo] = []


class KbLoad(Struct, kw_only=True):
    """Mount a KB (name or id) into the session; `kb_id`, `kbId` and `name` are aliases of `kb`."""

    kb: str | None = None
    kb_id: str | None = None
    kbId: str | None = None
    name: str | None = None


class KbSave(Struct, kw_only=True):
    """Persist the session's committed units into a KB (created if absent) as one source."""

    kb: NonEmpty
    source_name: NonEmpty | None = None


class KbFork(Struct, kw_only=True):
    """Copy a KB (default: the session's mounted one) under a new name and mount the copy."""

    name: NonEmpty
    kb: NonEmpty | None = None


class SourceInfo(Struct, kw_only=True):
    id: str
    name: str
    unit_count: int = 0
    bytes: int = 0
    hash: str = ""
    unchanged: bool = False
    chunks: int = 0
    warnings: list[str] = []
    notified: list[str] = []


class KbOperation(Struct, kw_only=True):
    """The result of kb/load|save|fork and workspace/sources: the session, its KB, what was stored."""

    session: SessionInfo
    kb: KbInfo
    sources: list[SourceInfo] = []
    warnings: list[str] = []


class WorkspaceSource(Struct, kw_only=True):
    """A source text ingested into the session's mounted KB (a workspace KB is created if none is mounted).
    Upstream's names are aliases: `content` for `text`, `name` for `source_name`."""

    text: str | None = None
    content: str | None = None
    source_name: str | None = None
    name: str | None = None
    seed_detector_plugin: NonEmpty = "sd-symbolic"
    force: bool = False


class PluginInfo(Struct, kw_only=True):
    id: str
    type: str
    name: str = ""
    version: str = ""
    description: str = ""
    enabled: bool = False
    builtin: bool = True
    usesLLM: bool = False
    maxLLMCalls: int = 0
    costClass: str = ""
    worker: bool = False
    ops: list[str] = []
    modelRoles: list[str] = []
    timeoutMs: int = 0
    maxInputSizeBytes: int = 0
    concurrency: int = 1
    plannerHints: dict[str, Any] | None = None  # what planners read to order candidates (sd, kb, gs)
    provides: list[str] = []
    accepts: list[str] = []
    tags: list[str] = []


class PluginList(Struct, kw_only=True):
    plugins: list[PluginInfo] = []


class LlmRoles(Struct, kw_only=True):
    """Effective LLM role settings (DS028): default model, model per role, per-plugin overrides."""

    defaultModel: str = ""
    roles: dict[str, str] = {}
    plugins: dict[str, str] = {}


class LlmRolesUpdate(Struct, kw_only=True, forbid_unknown_fields=True):
    """`PUT /settings/llm-roles`: only the keys given change; an empty model clears that setting."""

    defaultModel: str | None = None
    roles: dict[str, str] = {}
    plugins: dict[str, str] = {}


class KbSources(Struct, kw_only=True):
    """`GET /kbs/{kb}/sources`: the KB and its sources in ingest order."""

    kb: KbInfo
    sources: list[SourceInfo] = []


class UnitText(Struct, kw_only=True):
    """`GET /sessions/{id}/units/{unit_id}`: one knowledge unit with where it comes from.

    `origin` is `session` (a unit of the session) or `kb`; `place` is the source name and the headings
    above the unit (`file › heading`); `text` is the unit's own text (its text body, else its claim or
    procedure); `unit` is the whole stored unit (camelCase, as the protocol names its fields)."""

    id: str
    origin: Literal["session", "kb"]
    kb_id: str | None = None
    kb_name: str | None = None
    source_id: str | None = None
    source_name: str | None = None
    place: list[str] = []
    text: str = ""
    unit: dict[str, Any] = {}


class Health(Struct, kw_only=True):
    status: str = "ok"
    version: str = ""
    uptime_s: float = 0.0


class Ready(Struct, kw_only=True):
    ready: bool
    registry: dict[str, int] = {}
    store: dict[str, Any] = {}
    supervisor: dict[str, Any] = {}
    sandbox: dict[str, Any] = {}  # the plugin sandbox: mode, active, mechanism, reason, isolation
    # the LLM endpoint (never its key): configured, baseUrl, apiKeySet, reachable, models, problem, roles;
    # optional, so an LLM that does not answer never makes the daemon unready
    llm: dict[str, Any] = {}
    eventLoop: str = ""  # the daemon's event loop: "uvloop" or "asyncio" (event_loop.py)


class Deleted(Struct, kw_only=True):
    deleted: str


class ErrorBody(Struct, kw_only=True):
    """Every error: a stable code, a message, the ids it concerns, when, and details (e.g. the field)."""

    code: str
    message: str
    requestId: str | None = None
    sessionId: str | None = None
    timestamp: str
    details: dict[str, Any] = {}


def encode(value: Any) -> bytes:
    return _encoder.encode(value)


_encoder = msgspec.json.Encoder()
