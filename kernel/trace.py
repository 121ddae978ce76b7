"""The execution trace of one turn: a DAG of frames, branches, seeds, plugin calls, LLM calls and results.

Nodes carry what happened (plugin, op, status, duration, an input summary and an output detail); edges
say how nodes relate: `parent` (containment), attempt order and backtracking (`next-candidate`,
`next-view`, `next-branch`, `next-planner`), `uses` (an input came from that node), `produces`
(that node made this result), `validates`, `decomposes` (a child frame was opened), `reuses` (an
earlier call's result or known failure), `chooses` (a deliberation picked that candidate; the edge
carries its reason). Stored with the turn as plain JSON; shown by `mrpvm trace` as a
tree, JSON or Mermaid (shells/trace_view.py).
"""

from __future__ import annotations

import time
from typing import Any, Literal, get_args

import msgspec
from mrpvm.protocol.document import CnlDocument

# The closed sets of node and edge kinds (msgspec checks them when a stored trace is read back).
NodeKind = Literal["frame", "branch", "seed", "plugin", "llm", "event", "result", "candidate"]
EdgeKind = Literal[
    "parent",
    "next-candidate",
    "next-view",
    "next-branch",
    "next-planner",
    "uses",
    "produces",
    "validates",
    "decomposes",
    "reuses",
    "chooses",
]
NODE_KINDS: tuple[str, ...] = get_args(NodeKind)
EDGE_KINDS: tuple[str, ...] = get_args(EdgeKind)
ANSWER_PREVIEW = 600
PROMPT_PREVIEW = 240
CNL_PREVIEW = 6000  # the CNL a plugin returned, kept up to this many characters
MAX_IDS = 24


def error_line(code: str, message: str, limit: int = 160) -> str:
    """A failed call in one line: "CODE: first problem" (a message that repeats its code, as "INVALID_CNL:
    invalid CNL: line 9 ...", says it once)."""
    first = " ".join(str(message).split("; ")[0].split())
    spoken = code.replace("_", " ").lower() + ":"
    if first.lower().startswith(spoken):
        first = first[len(spoken) :].strip()
    return f"{code}: {clip(first, limit)}"


class TraceNode(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str
    kind: NodeKind
    label: str = ""
    frameId: str | None = None
    pluginId: str | None = None
    type: str | None = None
    op: str | None = None
    status: str | None = None
    startMs: float = 0.0
    durationMs: float = 0.0
    input: dict[str, Any] = {}
    output: dict[str, Any] = {}
    ref: str | None = None


class TraceEdge(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    src: str
    dst: str
    kind: EdgeKind
    reason: str = ""  # why (a deliberation's `chooses` edge says why that candidate won)


class Trace(msgspec.Struct, kw_only=True, omit_defaults=True):
    requestId: str
    sessionId: str | None = None
    root: str | None = None
    nodes: list[TraceNode] = []
    edges: list[TraceEdge] = []


class TraceRecorder:
    """Builds a turn's DAG. Node ids are short and sequential (`n1`, `n2`, ...).

    Nodes hold references to what they are given (input/output dicts are not copied); a plugin call's
    output summary is computed once, when the call ends.
    """

    def __init__(self, request_id: str, session_id: str | None = None, *, clock=time.perf_counter):
        self._clock = clock
        self._t0 = clock()
        self._count = 0
        self._by_id: dict[str, TraceNode] = {}
        self.trace = Trace(requestId=request_id, sessionId=session_id, nodes=[], edges=[])
        self._nodes = self.trace.nodes
        self._edges = self.trace.edges
        self._kept: _Kept | None = None  # `to_json(keep=True)`'s bytes, for `json_again`

    def now_ms(self) -> float:
        return (self._clock() - self._t0) * 1000.0

    def node(self, kind: NodeKind, label: str = "", *, parent: str | None = None, **fields: Any) -> TraceNode:
        self._count += 1
        node_id = f"n{self._count}"
        node = TraceNode(
            id=node_id,
            kind=kind,
            label=label,
            startMs=round((self._clock() - self._t0) * 1000.0, 3),
            **fields,
        )
        self._add(node, parent)
        return node

    def plugin_node(
        self,
        label: str,
        parent: str,
        frame_id: str,
        plugin_id: str,
        plugin_type: str,
        op: str,
        summary: dict[str, Any],
        *,
        started: float | None = None,
    ) -> TraceNode:
        """`node("plugin", ...)` without keyword unpacking (one per plugin call); `started` backdates the
        node to a perf_counter() reading (a call that began before its node was recorded)."""
        self._count += 1
        node_id = f"n{self._count}"
        at = self._clock() if started is None else started
        node = TraceNode(
            id=node_id,
            kind="plugin",
            label=label,
            frameId=frame_id,
            pluginId=plugin_id,
            type=plugin_type,
            op=op,
            startMs=round((at - self._t0) * 1000.0, 3),
            input=summary,
        )
        self._add(node, parent)
        return node

    def backdate(self, node: TraceNode, started: float) -> None:
        """Move a node's start to a clock reading taken before the node was recorded."""
        node.startMs = round((started - self._t0) * 1000.0, 3)

    def _add(self, node: TraceNode, parent: str | None) -> None:
        self._nodes.append(node)
        self._by_id[node.id] = node
        if parent is not None:
            if parent and parent != node.id:
                self._edges.append(TraceEdge(src=parent, dst=node.id, kind="parent"))
        elif self.trace.root is None:
            self.trace.root = node.id

    def edge(self, src: str | None, dst: str | None, kind: EdgeKind, reason: str = "") -> None:
        if src and dst and src != dst:
            self._edges.append(TraceEdge(src=src, dst=dst, kind=kind, reason=reason))

    def finish(self, node: TraceNode, status: str | None = None, **output: Any) -> None:
        node.durationMs = round(self.now_ms() - node.startMs, 3)
        if status is not None:
            node.status = status
        if output:
            node.output = {**node.output, **output} if node.output else output

    def complete(self, node: TraceNode, status: str, duration_ms: float, output: dict[str, Any]) -> None:
        """End a plugin node with a known duration and its output detail (taken by reference)."""
        node.status = status
        node.durationMs = round(duration_ms, 3)
        node.output = {**node.output, **output} if node.output else output

    def llm_call(
        self,
        *,
        parent: str,
        frame_id: str,
        plugin_id: str,
        model: str,
        status: str,
        duration_ms: float,
        **detail: Any,
    ) -> TraceNode:
        """An LLM call made by a plugin through the bridge (recorded by the bridge once it reports calls)."""
        node = self.node("llm", model, parent=parent, frameId=frame_id, pluginId=plugin_id, status=status)
        node.durationMs = round(duration_ms, 3)
        node.output = detail
        return node

    def get(self, node_id: str) -> TraceNode:
        return self._by_id[node_id]

    def to_builtins(self) -> dict[str, Any]:
        return msgspec.to_builtins(self.trace)

    def to_json(self, *, keep: bool = False) -> bytes:
        """The trace as the store keeps it: the JSON of `to_builtins()`, byte for byte, encoded straight
        from the structs (half the CPU of building the dict first; a turn's trace is ~20 KB).

        `keep` (the turn's commit): the bytes are kept with where each call still running sits in them
        (a plugin node with no status yet, or `pending`) and each recordOutcome node (its fold may still
        write to it: `_WRITTEN_AFTER_END`), so that `json_again` re-encodes only those."""
        data = _ENCODER.encode(self.trace)
        if keep:
            self._kept = _kept(data, self.trace)
        return data

    def json_again(self) -> bytes:
        """`to_json()` once only the calls still running at `to_json(keep=True)` may have changed (a
        deferred recordOutcome: its node ends after the commit): those nodes encoded again, the rest of
        the kept bytes copied — the same bytes as a whole encode. A node or edge added, or a new root,
        since then (an LLM call's node) means a whole encode."""
        kept = self._kept
        trace = self.trace
        if kept is None or kept.sizes != (len(trace.nodes), len(trace.edges), trace.root):
            return _ENCODER.encode(trace)
        data = kept.data
        parts: list[bytes] = []
        at = 0
        for start, end, node in kept.spans:
            parts += (data[at:start], _ENCODER.encode(node))
            at = end
        parts.append(data[at:])
        return b"".join(parts)


_ENCODER = msgspec.json.Encoder()


# ops whose node a kernel task still writes to after the call ended: a recordOutcome's fold sets its
# `observationsStored` (kernel/engine/outcome.py `learn`), possibly after the commit that kept the bytes
_WRITTEN_AFTER_END = frozenset({"recordOutcome"})


class _Kept(msgspec.Struct):
    """A trace's JSON as one `to_json(keep=True)` made it, and the spans of the nodes that may still change."""

    data: bytes
    sizes: tuple[int, int, str | None]  # nodes, edges, root
    spans: list[tuple[int, int, TraceNode]]  # (start, end, node) in node order


def _kept(data: bytes, trace: Trace) -> _Kept | None:
    """Where each node that may still change sits in `data` (a node encodes alone as inside the trace; a node's
    `{"id":"n…"` opening cannot occur inside a JSON string, where quotes are escaped, and ids are
    unique, so the first match after the previous node's is that node). None when a span is not found."""
    spans: list[tuple[int, int, TraceNode]] = []
    at = 0
    for node in trace.nodes:
        may_change = node.status in (None, "pending") or node.op in _WRITTEN_AFTER_END
        if node.kind != "plugin" or not may_change:
            continue
        encoded = _ENCODER.encode(node)
        start = data.find(encoded, at)
        if start < 0:
            return None
        at = start + len(encoded)
        spans.append((start, at, node))
    return _Kept(data, (len(trace.nodes), len(trace.edges), trace.root), spans)


# --------------------------------------------------------------------------- summaries


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


STDERR_TAIL_CHARS = 2000


def clip_tail(text: str, limit: int = STDERR_TAIL_CHARS) -> str:
    """The end of a plugin's stderr, at most `limit` characters, cut at a line start: a failed call's
    trace node keeps its last words (the whole stream is in the plugin's log)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    tail = text[-(limit - 1) :]
    cut = tail.find("\n")
    return "…" + (tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail)


def _ids(ids: list[str]) -> list[str]:
    return ids[:MAX_IDS] + ([f"+{len(ids) - MAX_IDS} more"] if len(ids) > MAX_IDS else [])


def summarize_output(doc: CnlDocument, cnl: str) -> dict[str, Any]:
    """What a plugin returned, small enough to store with every turn: the result block's fields, what the
    sections hold, and the CNL itself (`cnl`: the text the plugin wrote, clipped; not re-rendered from
    `doc`, which would cost a render per call)."""
    res = doc.result
    out: dict[str, Any] = {}
    if res.confidence:
        out["confidence"] = clip(res.confidence, PROMPT_PREVIEW)
    if res.result:
        out["result"] = clip(res.result, PROMPT_PREVIEW)
    if res.evidence:
        out["evidence"] = clip(res.evidence, PROMPT_PREVIEW)
    if res.code:
        out["code"] = clip(res.code, PROMPT_PREVIEW)
    if res.notes:
        out["notes"] = clip(res.notes, PROMPT_PREVIEW)
    if res.llmCalls:
        out["llmCalls"] = res.llmCalls
    if doc.intents:
        out["intents"] = [f"{i.act}: {clip(i.intent, 120)}" for i in doc.intents]
    if doc.units:
        out["units"] = len(doc.units)
        out["unitIds"] = _ids([u.id for u in doc.units])
    if doc.resolved:
        out["resolved"] = [
            {
                "index": r.index,
                "sufficient": r.sufficient,
                "selected": len(r.selected),
                "guidance": len(r.guidance),
            }
            for r in doc.resolved
        ]
    if doc.plan is not None:
        out["plan"] = msgspec.to_builtins(doc.plan)
    if doc.answer is not None:
        out["answer"] = clip(doc.answer, ANSWER_PREVIEW)
    if doc.sources is not None:
        out["sources"] = _ids(doc.sources)
    out["cnl"] = clip(cnl.strip(), CNL_PREVIEW)
    return out
