"""The execution trace of one turn: a DAG of frames, branches, seeds, plugin calls, LLM calls and results.

Nodes carry what happened (plugin, op, status, duration, an input summary and an output detail); edges
say how nodes relate: `parent` (containment), attempt order and backtracking (`next-candidate`,
`next-view`, `next-branch`, `next-planner`), `uses` (an input came from that node), `produces`
(that node made this result), `validates`, `decomposes` (a child frame was opened), `reuses` (an
earlier call's result or known failure). Stored with the turn as plain JSON; rendered by `mrpvm trace` as a tree, JSON or Mermaid.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
from mrpvm.protocol.document import CnlDocument

NODE_KINDS = ("frame", "branch", "seed", "plugin", "llm", "event", "result")
EDGE_KINDS = (
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
)
ANSWER_PREVIEW = 600
PROMPT_PREVIEW = 240
MAX_IDS = 24


class TraceNode(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str
    kind: str
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


class TraceEdge(msgspec.Struct, kw_only=True, frozen=True):
    src: str
    dst: str
    kind: str


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

    def now_ms(self) -> float:
        return (self._clock() - self._t0) * 1000.0

    def node(self, kind: str, label: str = "", *, parent: str | None = None, **fields: Any) -> TraceNode:
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

    def edge(self, src: str | None, dst: str | None, kind: str) -> None:
        if src and dst and src != dst:
            self._edges.append(TraceEdge(src=src, dst=dst, kind=kind))

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


# --------------------------------------------------------------------------- summaries


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ids(ids: list[str]) -> list[str]:
    return ids[:MAX_IDS] + ([f"+{len(ids) - MAX_IDS} more"] if len(ids) > MAX_IDS else [])


def summarize_output(doc: CnlDocument) -> dict[str, Any]:
    """What a plugin returned, small enough to store with every turn."""
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
    return out


# --------------------------------------------------------------------------- renderers


def _node_line(node: TraceNode) -> str:
    parts = [f"[{node.id}] {node.kind}"]
    if node.pluginId:
        parts.append(f"{node.pluginId}.{node.op}" if node.op else node.pluginId)
    if node.label:
        parts.append(clip(node.label, 90))
    if node.status:
        parts.append(f"→ {node.status}")
    if node.durationMs:
        parts.append(f"({node.durationMs:.1f} ms)")
    if node.ref:
        parts.append(f"[{node.ref}]")
    return " ".join(parts)


def _children(trace: Trace) -> tuple[dict[str, list[str]], dict[str, list[TraceEdge]]]:
    kids: dict[str, list[str]] = {}
    others: dict[str, list[TraceEdge]] = {}
    for edge in trace.edges:
        if edge.kind == "parent":
            kids.setdefault(edge.src, []).append(edge.dst)
        else:
            others.setdefault(edge.src, []).append(edge)
    return kids, others


def render_tree(trace: Trace | dict[str, Any]):
    """A rich Tree: containment as nesting, other edges as dim arrows under their source node."""
    from rich.markup import escape
    from rich.tree import Tree

    trace = as_trace(trace)
    nodes = {n.id: n for n in trace.nodes}
    kids, others = _children(trace)
    style = {"success": "green", "accepted": "green", "error": "red", "rejected": "red", "failed": "red"}
    root = Tree(f"[bold]turn {escape(trace.requestId)}[/bold]")

    def add(tree, node_id: str, seen: set[str]) -> None:
        if node_id in seen or node_id not in nodes:
            return
        seen.add(node_id)
        node = nodes[node_id]
        colour = style.get(node.status or "", "yellow" if node.status else "white")
        branch = tree.add(f"[{colour}]{escape(_node_line(node))}[/{colour}]")
        for edge in others.get(node_id, []):
            branch.add(f"[dim]{edge.kind} → {edge.dst}[/dim]")
        for child in kids.get(node_id, []):
            add(branch, child, seen)

    seen: set[str] = set()
    tops = [trace.root] if trace.root else []
    tops += [n.id for n in trace.nodes if n.id not in {e.dst for e in trace.edges if e.kind == "parent"}]
    for node_id in dict.fromkeys(t for t in tops if t):
        add(root, node_id, seen)
    return root


def render_tree_text(trace: Trace | dict[str, Any], width: int = 120) -> str:
    from rich.console import Console

    console = Console(width=width, record=True, file=_NullFile(), color_system=None)
    console.print(render_tree(trace))
    return console.export_text()


class _NullFile:
    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        pass


def _mermaid_text(text: str) -> str:
    return clip(text, 80).replace('"', "'").replace("\n", " ").replace("[", "(").replace("]", ")")


def render_mermaid(trace: Trace | dict[str, Any]) -> str:
    trace = as_trace(trace)
    lines = ["flowchart TD"]
    shapes = {
        "frame": ('[["', '"]]'),
        "branch": ('{{"', '"}}'),
        "seed": ('(["', '"])'),
        "result": ('[/"', '"/]'),
    }
    for node in trace.nodes:
        left, right = shapes.get(node.kind, ('["', '"]'))
        label = _mermaid_text(_node_line(node).split("] ", 1)[-1])
        lines.append(f"  {node.id}{left}{label}{right}")
    for edge in trace.edges:
        arrow = "-->" if edge.kind == "parent" else f"-.->|{edge.kind}|"
        lines.append(f"  {edge.src} {arrow} {edge.dst}")
    return "\n".join(lines) + "\n"


def render_json(trace: Trace | dict[str, Any]) -> str:
    data = trace if isinstance(trace, dict) else msgspec.to_builtins(trace)
    return msgspec.json.format(msgspec.json.encode(data), indent=2).decode()


def as_trace(trace: Trace | dict[str, Any]) -> Trace:
    return trace if isinstance(trace, Trace) else msgspec.convert(trace, Trace)


BACKTRACK_EDGES = ("next-candidate", "next-view", "next-branch", "next-planner")


def summary_line(trace: Trace | dict[str, Any]) -> str:
    """One line: node/edge counts, plugin calls by status, backtracks, frames and depth."""
    trace = as_trace(trace)
    calls = [n for n in trace.nodes if n.kind == "plugin"]
    statuses: dict[str, int] = {}
    for node in calls:
        statuses[node.status or "?"] = statuses.get(node.status or "?", 0) + 1
    frames = [n for n in trace.nodes if n.kind == "frame"]
    depth = max((int(n.input.get("depth", 0)) for n in frames), default=0)
    backtracks = sum(1 for e in trace.edges if e.kind in BACKTRACK_EDGES)
    by_status = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items(), key=lambda kv: -kv[1]))
    return (
        f"trace {trace.requestId}: {len(trace.nodes)} nodes, {len(trace.edges)} edges; "
        f"{len(calls)} plugin calls ({by_status}); {backtracks} backtracks; "
        f"{len(frames)} frame{'s' if len(frames) != 1 else ''} (max depth {depth})"
    )
