"""`mrpvm plugin new`: a plugin folder that passes `mrpvm plugin check` as written.

A folder NAME (under --dir, default the current one) with a manifest, the code (Python with the SDK,
worker mode; Node.js or Go with no dependency, one-shot), a README whose first command is the
`cat input.json | ...` test, and that sample input.json. The plugin answers its type's main op from the
context items that share words with the prompt (an Intent Group for sd, a default Plan for a planner,
`accepted` for a validator) — a working start, not a stub: each answer is valid for its op. A Go plugin
is built at once when `go` is on PATH (plugin_tools/build.py); the manifest's `build` says how.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import msgspec
from mrpvm.kernel.errors import BadInput
from mrpvm.protocol.vocab import MAIN_OP

TEMPLATES = Path(__file__).resolve().parent / "templates"
LANGS = ("python", "node", "go")
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
SAMPLE_INPUT = {
    "prompt": "How do I rebuild only the changed targets?",
    "context": [
        {"title": "guide::chunk-002::unit-000", "sourceLink": "guide.md",
         "text": "Role: Procedure\nTopic: incremental builds\nProcedure: Run build --changed to rebuild the changed targets."},
        {"title": "guide::chunk-003::unit-000", "sourceLink": "guide.md",
         "text": "Role: Description\nTopic: cache\nClaim: The cache lives in the .cache folder."},
    ],
}  # fmt: skip
BEHAVIOUR = {
    "sd-plugin": "one Intent Group: the prompt itself",
    "mrp-plan-plugin": "a plan that keeps the kernel's default orders",
    "kb-plugin": "the context items that share a word with the prompt, as selected units",
    "gs-plugin": "the claims of the context items that share a word with the prompt; no-context otherwise",
    "val-plugin": "accepts every answer until you write its check",
}
HINTS = {
    "expectedLatencyMs": 50,
    "expectedLLMCalls": 0,
    "relativeCost": 0.2,
    "supportedActs": ["define", "describe", "identify"],
    "topicTags": ["scaffold"],
    "preferredDepth": "shallow",
    "fallbackRole": "secondary",
    "evidenceStyle": ["lexical"],
    "confidenceWhenMatched": 0.4,
}


class Scaffold(msgspec.Struct, kw_only=True):
    """What `plugin new` made: where, which files, and how to try and enable it."""

    id: str
    type: str
    lang: str
    folder: str
    files: list[str]
    try_command: str
    by_hand: str
    allowlist_command: str
    built: bool = False
    note: str = ""


def _manifest(plugin_id: str, plugin_type: str, lang: str) -> dict:
    data: dict = {
        "id": plugin_id,
        "name": f"{plugin_id} ({lang})",
        "type": plugin_type,
        "version": "0.1.0",
        "protocolVersion": 1,
        "description": f"Answers {MAIN_OP[plugin_type]}: {BEHAVIOUR[plugin_type]}. No LLM.",
        "costClass": "cheap",
        "usesLLM": False,
        "maxLLMCalls": 0,
        "timeoutMs": 5000,
        "maxInputSizeBytes": 1048576,
    }
    if plugin_type in ("sd-plugin", "kb-plugin", "gs-plugin"):
        data["plannerHints"] = HINTS
    if lang == "python":
        data.update(command="python", args=["plugin.py"], worker=True, concurrency=1)
    elif lang == "node":
        data.update(command="node", args=["plugin.js"], worker=False)
    else:
        build_args = ["build", "-trimpath", "-o", f"bin/{plugin_id}", "."]
        data.update(
            build={"command": "go", "args": build_args}, command=f"bin/{plugin_id}", args=[], worker=False
        )
    data.update(ops=[MAIN_OP[plugin_type]], reads=[])
    return data


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def new_plugin(name: str, plugin_type: str, lang: str, parent: Path) -> Scaffold:
    """Write the folder `parent/name`; raises BadInput for a bad name, language or an existing folder."""
    if not ID_PATTERN.match(name):
        raise BadInput(f"'{name}' cannot be a plugin id: letters, digits, '.', '_', '-' (at most 64)")
    if lang not in LANGS:
        raise BadInput(f"unknown language '{lang}' (one of {', '.join(LANGS)})")
    folder = (parent / name).resolve()
    if folder.exists() and any(folder.iterdir()):
        raise BadInput(f"{folder} exists and is not empty: choose another name or --dir")
    code_file = {"python": "plugin.py", "node": "plugin.js", "go": "main.go"}[lang]
    # A Python plugin imports the SDK: it runs with the interpreter MRP-VM is installed in (the one the
    # kernel starts for `"command": "python"`), so the line works from any shell, venv active or not.
    python = shlex.quote(sys.executable)
    run_line = {"python": f"{python} plugin.py", "node": "node plugin.js", "go": f"bin/{name}"}[lang]
    values = {
        "ID": name,
        "TYPE": plugin_type,
        "MAIN_OP": MAIN_OP[plugin_type],
        "LANG_NAME": {"python": "Python (the MRP-VM plugin SDK)", "node": "plain Node.js", "go": "Go"}[lang],
        "BEHAVIOUR": BEHAVIOUR[plugin_type],
        "CODE_FILE": f"`{code_file}`",
        "RUN_LINE": run_line,
        "BUILD_LINE": "mrpvm plugin build .        # or: go build -o bin/" + name + " .\n"
        if lang == "go"
        else "",
        "FOLDER": str(folder),
        "PARENT": str(folder.parent),
        "SHORT_TYPE": plugin_type.split("-")[0],
    }
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "manifest.json": json.dumps(_manifest(name, plugin_type, lang), indent=2) + "\n",
        code_file: _fill((TEMPLATES / f"{code_file}.txt").read_text(encoding="utf-8"), values),
        "README.md": _fill((TEMPLATES / "README.md.txt").read_text(encoding="utf-8"), values),
        "input.json": json.dumps(SAMPLE_INPUT, indent=2) + "\n",
    }
    if lang == "go":
        files["go.mod"] = f"module mrpvm.plugin/{name}\n\ngo 1.19\n"
        files[".gitignore"] = "bin/\n"
    for rel, text in files.items():
        (folder / rel).write_text(text, encoding="utf-8")
    scaffold = Scaffold(
        id=name,
        type=plugin_type,
        lang=lang,
        folder=str(folder),
        files=sorted(files),
        try_command=f"mrpvm plugin check {folder}",
        by_hand=f"cd {shlex.quote(str(folder))} && cat input.json | {run_line}",
        allowlist_command=f"export MRPVM_WRAPPER_FOLDERS={folder.parent} MRPVM_PLUGIN_ALLOWLIST={name}",
    )
    if lang == "go":
        _build(scaffold, folder)
    return scaffold


def _build(scaffold: Scaffold, folder: Path) -> None:
    from .build import BuildError, build_plugin

    if shutil.which("go") is None:
        scaffold.note = (
            "go is not on PATH: install it (Debian: apt-get install golang-go), then mrpvm plugin build"
        )
        return
    try:
        outcome = build_plugin(folder / "manifest.json", force=True)
    except BuildError as err:
        scaffold.note = f"the first build failed: {err}"
        return
    scaffold.built = outcome is not None and outcome.built
