"""docs/ARCHITECTURE.md stays true: every path it names exists, its reading order covers the whole engine,
its code map names every CLI command module, and the README links it."""

from __future__ import annotations

import re

from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.shells.cli.main import COMMAND_MODULES

DOC = (PROJECT_ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
TREES = (
    "protocol/",
    "kernel/",
    "knowledge/",
    "plugins/",
    "shells/",
    "tests/",
    "bench/",
    "manifests/",
    "wrappers/",
    "config/",
)


def named_paths(text: str) -> set[str]:
    """Repository paths written in backticks or as link targets (`kernel/engine/turn.py`, ../shells/...)."""
    spans = re.findall(r"`([^`\s]+)`", text) + re.findall(r"\]\(\.\./([^)#\s]+)\)", text)
    paths = {s.split(":")[0].rstrip(",") for s in spans if s.startswith(TREES)}
    return {p for p in paths if not set(p) & set("<>*")}  # `manifests/<id>.json` is a pattern


def test_every_path_the_document_names_exists():
    paths = named_paths(DOC)
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (PROJECT_ROOT / p).exists())
    assert not missing, f"docs/ARCHITECTURE.md names paths that do not exist: {missing}"


def test_the_reading_order_covers_every_engine_module():
    order = DOC.split("### Reading order", 1)[1].split("\n## ", 1)[0]
    engine = sorted(
        p.name for p in (PROJECT_ROOT / "kernel" / "engine").glob("*.py") if p.name != "__init__.py"
    )
    unread = [name for name in engine if name not in order]
    assert not unread, f"add to the reading order: {unread}"


def test_the_code_map_names_every_command_group():
    code_map = DOC.split("### Code map", 1)[1].split("### Reading order", 1)[0]
    groups = [m.rsplit(".", 1)[1] for m in COMMAND_MODULES]
    assert len(groups) >= 10
    missing = [g for g in groups if f"`{g}`" not in code_map]
    assert not missing, f"command groups missing from the code map: {missing}"


def test_the_readme_links_the_architecture():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/ARCHITECTURE.md)" in readme
