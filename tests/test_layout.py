"""DESIGN.md §2 dependency rules, read from the source: kernel → protocol and plugins → protocol; kernel and
plugins never import each other; a plugin imports no other plugin, only plugins/sdk and its own family
folder (`<family>_common`, e.g. kb_common for kb_*)."""

from __future__ import annotations

import ast
from pathlib import Path

from mrpvm.kernel.config import PROJECT_ROOT

PLUGINS = PROJECT_ROOT / "plugins"
KERNEL = PROJECT_ROOT / "kernel"


def imported_modules(path: Path) -> set[str]:
    """Absolute module names a file imports (relative imports stay inside its own package: skipped)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            if node.module == "mrpvm.plugins":  # `from mrpvm.plugins import kb_fast`
                out.update(f"mrpvm.plugins.{alias.name}" for alias in node.names)
    return out


def allowed_folders(folder: str) -> set[str]:
    """The plugin folders `folder` may import: itself, sdk, and the family folders whose prefix it has."""
    families = {p.name for p in PLUGINS.iterdir() if p.is_dir() and p.name.endswith("_common")}
    own = {f for f in families if folder.startswith(f.removesuffix("common"))}
    return {folder, "sdk", *own}


def test_plugins_import_no_other_plugin_and_not_the_kernel():
    offences = []
    folders = [p for p in PLUGINS.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    assert len(folders) > 10
    for folder in folders:
        allowed = allowed_folders(folder.name)
        for path in folder.rglob("*.py"):
            for module in imported_modules(path):
                parts = module.split(".")
                if (
                    parts[:2] == ["mrpvm", "kernel"]
                    or parts[:2] == ["mrpvm", "plugins"]
                    and len(parts) > 2
                    and parts[2] not in allowed
                ):
                    offences.append(f"{path.relative_to(PROJECT_ROOT)} imports {module}")
    assert not offences, "\n".join(offences)


def test_the_kernel_never_imports_plugin_code():
    offences = [
        f"{path.relative_to(PROJECT_ROOT)} imports {module}"
        for path in KERNEL.rglob("*.py")
        for module in imported_modules(path)
        if module.startswith("mrpvm.plugins")
    ]
    assert not offences, "\n".join(offences)


def test_the_rule_catches_a_cross_plugin_import(tmp_path):
    """The checker itself: a sibling plugin import is found, a family or sdk import is not."""
    source = tmp_path / "x.py"
    source.write_text(
        "from mrpvm.plugins.sd_symbolic.roles import X\nfrom mrpvm.plugins.sdk.lexicon import word_set\n"
        "from mrpvm.plugins import kb_fast\nfrom .local import y\n"
    )
    modules = imported_modules(source)
    assert modules == {
        "mrpvm.plugins.sd_symbolic.roles",
        "mrpvm.plugins.sdk.lexicon",
        "mrpvm.plugins",
        "mrpvm.plugins.kb_fast",
    }
    allowed = allowed_folders("gs_symbolic")
    assert "sd_symbolic" not in allowed and "sdk" in allowed and "kb_common" not in allowed
    assert "kb_common" in allowed_folders("kb_thinkingdb") and "gs_llm_common" in allowed_folders(
        "gs_llm_deep"
    )
