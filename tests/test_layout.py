"""The layout rules (docs/ARCHITECTURE.md §5), read from the source.

Dependencies point one way: protocol imports nothing of the project; kernel → protocol; knowledge (the
KB lifecycle) → kernel and protocol; plugins → protocol; shells → knowledge, kernel and protocol. Kernel and plugins never import each other, nobody imports the
shells, and a plugin imports no other plugin, only plugins/sdk and its own family folder
(`<family>_common`, e.g. kb_common for kb_*). No module passes 800 lines, and the console script lives
in the shells.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from mrpvm.kernel.config import PROJECT_ROOT

PLUGINS = PROJECT_ROOT / "plugins"
TREES = ("protocol", "kernel", "knowledge", "plugins", "shells")
KERNEL_MAX_LINES = 400
MAX_LINES = 800
# What each tree may import of the project (besides itself).
ALLOWED = {
    "protocol": set(),
    "kernel": {"protocol"},
    "knowledge": {"protocol", "kernel"},
    "plugins": {"protocol"},
    "shells": {"protocol", "kernel", "knowledge"},
}
SHELL_LIBRARIES = ("typer", "rich", "click")  # the CLI's; the kernel serves without them


def imported_modules(path: Path) -> set[str]:
    """Absolute module names a file imports (relative imports stay inside its own package: skipped)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            if node.module in ("mrpvm", "mrpvm.plugins"):  # `from mrpvm.plugins import kb_fast`
                out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def project_imports(path: Path) -> set[str]:
    """The project trees (protocol, kernel, knowledge, plugins, shells) a file imports."""
    return {m.split(".")[1] for m in imported_modules(path) if m.startswith("mrpvm.") and m.count(".") >= 1}


def sources(tree: str) -> list[Path]:
    return sorted((PROJECT_ROOT / tree).rglob("*.py"))


def allowed_folders(folder: str) -> set[str]:
    """The plugin folders `folder` may import: itself, sdk, and the family folders whose prefix it has."""
    families = {p.name for p in PLUGINS.iterdir() if p.is_dir() and p.name.endswith("_common")}
    own = {f for f in families if folder.startswith(f.removesuffix("common"))}
    return {folder, "sdk", *own}


@pytest.mark.parametrize("tree", TREES)
def test_dependencies_point_one_way(tree):
    """protocol → nothing; kernel → protocol; knowledge → kernel, protocol; plugins → protocol;
    shells → knowledge, kernel, protocol."""
    files = sources(tree)
    assert len(files) >= 5
    offences = [
        f"{path.relative_to(PROJECT_ROOT)} imports mrpvm.{other}"
        for path in files
        for other in sorted(project_imports(path) - ALLOWED[tree] - {tree})
    ]
    assert not offences, "\n".join(offences)


@pytest.mark.parametrize("tree", ["protocol", "kernel", "knowledge"])
def test_the_kernel_and_protocol_need_no_cli_library(tree):
    offences = [
        f"{path.relative_to(PROJECT_ROOT)} imports {module}"
        for path in sources(tree)
        for module in imported_modules(path)
        if module.split(".")[0] in SHELL_LIBRARIES
    ]
    assert not offences, "\n".join(offences)


def test_plugins_import_no_other_plugin():
    offences = []
    folders = [p for p in PLUGINS.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    assert len(folders) > 10
    for folder in folders:
        allowed = allowed_folders(folder.name)
        for path in folder.rglob("*.py"):
            for module in imported_modules(path):
                parts = module.split(".")
                if parts[:2] == ["mrpvm", "plugins"] and len(parts) > 2 and parts[2] not in allowed:
                    offences.append(f"{path.relative_to(PROJECT_ROOT)} imports {module}")
    assert not offences, "\n".join(offences)


def test_no_module_is_longer_than_800_lines():
    files = [p for tree in (*TREES, "tests", "bench") for p in sources(tree)]
    lengths = {p: len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    long = [f"{p.relative_to(PROJECT_ROOT)}: {n} lines" for p, n in lengths.items() if n > MAX_LINES]
    assert not long, "split these modules:\n" + "\n".join(long)


def test_no_kernel_module_is_longer_than_400_lines():
    """The kernel is read first (docs/ARCHITECTURE.md's reading order): its modules stay small."""
    lengths = {p: len(p.read_text(encoding="utf-8").splitlines()) for p in sources("kernel")}
    long = [f"{p.relative_to(PROJECT_ROOT)}: {n} lines" for p, n in lengths.items() if n > KERNEL_MAX_LINES]
    assert not long, "split these kernel modules:\n" + "\n".join(long)


def test_the_console_script_lives_in_the_shells():
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target = project["scripts"]["mrpvm"]
    module, _, function = target.partition(":")
    assert module.startswith("mrpvm.shells."), target
    path = PROJECT_ROOT / Path(*module.split(".")[1:]).with_suffix(".py")
    defined = {
        n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)
    }
    assert function in defined


def test_the_rules_catch_what_they_forbid(tmp_path):
    """The checkers themselves: a cross-tree, a sibling-plugin and a CLI-library import are found."""
    source = tmp_path / "x.py"
    source.write_text(
        "from mrpvm.plugins.sd_symbolic.shared.roles import X\nfrom mrpvm.plugins.sdk.lexicon import word_set\n"
        "from mrpvm.plugins import kb_fast\nfrom .local import y\nimport mrpvm.shells.cli.main\n"
        "from mrpvm import kernel\nimport rich.console\n"
    )
    modules = imported_modules(source)
    assert modules == {
        "mrpvm.plugins.sd_symbolic.shared.roles",
        "mrpvm.plugins.sdk.lexicon",
        "mrpvm.plugins",
        "mrpvm.plugins.kb_fast",
        "mrpvm.shells.cli.main",
        "mrpvm",
        "mrpvm.kernel",
        "rich.console",
    }
    assert project_imports(source) == {"plugins", "shells", "kernel"}
    assert project_imports(source) - ALLOWED["kernel"] - {"kernel"} == {"plugins", "shells"}
    allowed = allowed_folders("gs_symbolic")
    assert "sd_symbolic" not in allowed and "sdk" in allowed and "kb_common" not in allowed
    assert "kb_common" in allowed_folders("kb_thinkingdb") and "gs_llm_common" in allowed_folders(
        "gs_llm_deep"
    )


def test_no_tracked_file_holds_a_merge_conflict_marker():
    import subprocess

    listed = subprocess.run(
        ["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    if not listed:
        pytest.skip("not a git checkout")
    markers = ("<<<<<<< ", ">>>>>>> ")
    found = []
    for name in listed:
        path = PROJECT_ROOT / name
        if (
            path.suffix not in (".py", ".md", ".json", ".js", ".css", ".html", ".toml", ".cfg", "")
            or not path.is_file()
        ):
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{name}:{n}" for n, line in enumerate(lines, 1) if line.startswith(markers)]
    assert not found, "unresolved merge conflicts: " + ", ".join(found)
