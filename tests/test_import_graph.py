"""The import graph of the whole tree, built with `ast` from the source (docs/ARCHITECTURE.md §5).

Every import counts: relative ones, ones inside functions and ones under `if TYPE_CHECKING:` (a
type-only import is still a dependency a reader has to follow). No module reaches itself through its
imports, and inside the kernel the packages stack one way:

    base (config, errors, names, records, registry, plugin_command, store* and db/, node, budgets, trace,
          background, validator_records)
      ← llm, supervisor ← context (the composition root) ← engine

so the base modules never import the packages above them and the loop sees everything below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from mrpvm.kernel.config import PROJECT_ROOT

TREES = ("protocol", "kernel", "knowledge", "plugins", "shells")
# Inside the kernel: which layer may import which (besides itself).
KERNEL_LAYERS = {
    "base": set(),
    "llm": {"base"},
    "supervisor": {"base"},
    "context": {"base", "llm", "supervisor"},
    "engine": {"base", "llm", "supervisor", "context"},
}


def module_files(root: Path = PROJECT_ROOT) -> dict[str, Path]:
    """`mrpvm.<tree>.<...>` → file, for every module of the five trees."""
    out: dict[str, Path] = {}
    for tree in TREES:
        for path in sorted((root / tree).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(["mrpvm", *parts])] = path
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports (an imported name that is a submodule counts as that module;
    anything else as the module it comes from, or its nearest enclosing package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{node.module}" if node.module else anchor
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path = PROJECT_ROOT) -> dict[str, set[str]]:
    modules = module_files(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next((e for e in edges if e in graph), None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def kernel_layer(module: str) -> str | None:
    """The kernel layer of a module (None: not a kernel module)."""
    parts = module.split(".")
    if parts[:2] != ["mrpvm", "kernel"]:
        return None
    if len(parts) == 2:
        return "base"
    if parts[2] in ("llm", "supervisor", "engine", "context"):
        return parts[2]
    return "base"


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_graph_covers_the_tree(graph):
    assert len(graph) > 200
    assert "mrpvm.knowledge.ingest" in graph["mrpvm.knowledge.ops"]
    assert "mrpvm.kernel.engine.state" in graph["mrpvm.kernel.engine.turn"]


def test_no_module_imports_itself_through_others(graph):
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" → ".join(c) for c in found)


def test_the_kernel_layers_import_downwards_only(graph):
    offences = []
    for module, targets in graph.items():
        layer = kernel_layer(module)
        if layer is None:
            continue
        for target in sorted(targets):
            other = kernel_layer(target)
            if other is not None and other != layer and other not in KERNEL_LAYERS[layer]:
                offences.append(f"{module} ({layer}) imports {target} ({other})")
    assert not offences, "\n".join(offences)


def test_the_checks_catch_a_type_only_cycle_and_a_back_edge(tmp_path):
    """A cycle closed only by an `if TYPE_CHECKING:` import, and a base module importing the engine."""
    for tree in TREES:
        (tmp_path / tree).mkdir()
    kernel = tmp_path / "kernel"
    (kernel / "__init__.py").write_text("")
    (kernel / "engine").mkdir()
    (kernel / "engine" / "__init__.py").write_text("")
    (kernel / "engine" / "a.py").write_text("from .b import B\n")
    (kernel / "engine" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"
    )
    (kernel / "trace.py").write_text("def f():\n    from .engine import a\n")
    found = import_graph(tmp_path)
    assert cycles(found) == [["mrpvm.kernel.engine.a", "mrpvm.kernel.engine.b"]]
    assert found["mrpvm.kernel.trace"] == {"mrpvm.kernel.engine.a"}
    assert kernel_layer("mrpvm.kernel.trace") == "base" and "engine" not in KERNEL_LAYERS["base"]
