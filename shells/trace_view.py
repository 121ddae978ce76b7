"""How a stored turn trace is shown (`mrpvm trace`, the demo): a rich tree, Mermaid, JSON, a one-line summary."""

from __future__ import annotations

import io
from typing import Any

import msgspec
from mrpvm.kernel.trace import Trace, TraceEdge, TraceNode, clip, error_line


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
    code, message = node.output.get("code"), node.output.get("message")
    if node.status == "error" and code:  # a failed call: what went wrong, in the tree itself
        parts.append(f"— {error_line(str(code), str(message or ''))}")
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

    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(render_tree(trace))
    return console.export_text()


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
