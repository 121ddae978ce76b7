"""What the supervisor keeps per plugin (`PluginState`: entry, limits, breaker, pools, logs) and the cheap
peek at a raw request's op and artifacts path.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import msgspec
from mrpvm.kernel.config import LimitsConfig
from mrpvm.kernel.registry import PluginEntry

from .binds import ArtifactBinds
from .breaker import CrashLoopBreaker
from .errors import (
    CallError,
)
from .handoff import HandoffFolder
from .pool import WorkerPool
from .reply_memo import ReplyMemo
from .sandbox import Sandbox


class PathsPeek(msgspec.Struct):
    artifacts: str | None = None


class OpPeek(msgspec.Struct):
    op: str | None = None
    paths: PathsPeek | None = None
    requestId: str = ""


_peek_decoder = msgspec.json.Decoder(OpPeek)


def peek_request(body: bytes) -> OpPeek:
    try:
        return _peek_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError):
        return OpPeek()


def peek_op(body: bytes) -> str:
    return peek_request(body).op or ""


class PluginState:
    """What the supervisor keeps per plugin id: limits resolved once, its pool, its counters."""

    __slots__ = (
        "id",
        "type",
        "argv",
        "cwd",
        "worker",
        "concurrency",
        "max_in",
        "max_out",
        "timeout_ms",
        "pool",
        "lane",
        "oneshots",
        "breaker",
        "calls",
        "ok",
        "errors",
        "last_error",
        "spawns",
        "active",
        "uses_llm",
        "binds",
        "handoff",
        "compact_reply",
        "memo",
    )

    def __init__(self, entry: PluginEntry, limits: LimitsConfig, sandbox: Sandbox):
        m = entry.manifest
        self.id: str = m.id
        self.type: str = m.type
        self.argv: list[str] = list(entry.argv)
        self.cwd = entry.folder
        self.uses_llm: bool = bool(m.usesLLM)  # sandboxed: reaches the LLM endpoint through the relay
        self.binds = ArtifactBinds(sandbox, m.id, entry.folder) if sandbox.active else None
        # units files (handoff.py): the folder exists before any process of the plugin binds it
        self.handoff: HandoffFolder | None = None
        if getattr(m, "handoff", "inline") == "file":
            self.handoff = HandoffFolder(sandbox.home, m.id)
            self.handoff.prepare()
        # an sd-plugin that may answer a source's KU tree as MessagePack (protocol/cnl_compact.py)
        self.compact_reply: bool = getattr(m, "replyForm", "cnl") == "msgpack"
        self.worker: bool = bool(m.worker)
        # a pure plugin's replies by request content (reply_memo.py): warm workers only, never an LLM's
        self.memo: ReplyMemo | None = (
            ReplyMemo() if getattr(m, "pure", False) and self.worker and not self.uses_llm else None
        )
        self.concurrency: int = max(1, m.concurrency)
        self.max_in: int = m.maxInputSizeBytes
        self.max_out: int = min(m.maxOutputBytes, limits.maxOutputBytes)
        self.timeout_ms: int = m.timeoutMs
        self.pool: WorkerPool | None = None
        self.lane: WorkerPool | None = None  # BACKGROUND_OPS' own workers (worker_mode.py)
        self.oneshots = asyncio.Semaphore(self.concurrency)
        self.breaker = CrashLoopBreaker(
            limits.crashLoopThreshold, limits.crashBackoffMs / 1000.0, limits.crashBackoffMaxMs / 1000.0
        )
        self.calls = 0
        self.ok = 0
        self.errors: Counter[str] = Counter()
        self.last_error: CallError | None = None
        self.spawns = 0
        self.active = 0

    def pools(self) -> list[WorkerPool]:
        return [pool for pool in (self.pool, self.lane) if pool is not None]
