"""A Jupyter notebook (.ipynb: nbformat 4 JSON) presented as the Markdown it is written in.

A notebook's file is JSON: every line of a cell is an escaped string (`"… values.\\n",`), the outputs carry
HTML tables and base64 images. Read as text, a unit quotes that JSON. Read here as the document its author
wrote, in the cells' order:
- a markdown cell: its source as written (a raw cell's too: the author's own text);
- a code cell: its source as fenced code in the notebook's language (metadata.language_info or
  metadata.kernelspec), the fence longer than any backtick run inside it;
- a code cell's text outputs (a stream's text, a result's or display's text/plain): a short fenced output
  block after the code (at most `MAX_OUTPUT_LINES` lines and `MAX_OUTPUT_CHARS` characters: a printed
  value, not a dump); HTML, images, other rich data, errors (tracebacks) and an object's default repr
  (`<Figure size 640x480 with 1 Axes>`: the text/plain beside a plot) are left out.
The Markdown reader (outline.read_source) then reads that text like any Markdown page.

A notebook is known by its shape alone: a JSON object holding a list of "cells" and an integer "nbformat"
(never by a file name). Invalid JSON, other JSON, or a cell of another shape is not a notebook: the text
keeps its own reader.
"""

from __future__ import annotations

from typing import Any

import msgspec
from mrpvm.plugins.sdk.patterns import lazy_pattern

MAX_OUTPUT_LINES = 12
MAX_OUTPUT_CHARS = 1_000
_BACKTICKS = lazy_pattern(r"`{3,}")
# an object shown by its default repr ("<Figure size 640x480 with 1 Axes>", "<Axes: >"): no value to read
_REPR = lazy_pattern(r"\[?<[^\n<>]* [^\n<>]*>\]?")  # a space inside: not a value such as "<NA>"
_PROBE = 4_096  # a notebook names its format in its first lines or its last (nbformat sorts keys: last)


class _Output(msgspec.Struct):
    output_type: str = ""
    text: str | list[str] = ""
    data: dict[str, Any] = {}


class _Cell(msgspec.Struct):
    cell_type: str
    source: str | list[str] = ""
    outputs: list[_Output] = []


class _Notebook(msgspec.Struct):
    cells: list[_Cell]
    nbformat: int
    metadata: dict[str, Any] = {}


_DECODER = msgspec.json.Decoder(_Notebook)


def notebook_markdown(text: str) -> str | None:
    """The notebook's cells as Markdown (see the module docstring), or None when `text` is not a notebook."""
    head = text.lstrip()[:1]
    if head != "{" or '"nbformat"' not in text[:_PROBE] + text[-_PROBE:] or '"cells"' not in text:
        return None
    try:
        notebook = _DECODER.decode(text)
    except msgspec.DecodeError:  # truncated or other JSON: not a notebook
        return None
    language = _language(notebook.metadata)
    parts: list[str] = []
    for cell in notebook.cells:
        source = _joined(cell.source).strip("\n")
        if cell.cell_type == "code":
            if source.strip():
                parts.append(_fenced(source, language))
            parts.extend(_fenced(out, "output") for out in _text_outputs(cell.outputs))
        elif source.strip():
            parts.append(source)
    return "\n\n".join(parts) + "\n" if parts else None  # nothing written: the text keeps its reader


def _joined(source: str | list[str]) -> str:
    """A cell's source or an output's text: nbformat writes it as a string or as a list of lines."""
    return source if isinstance(source, str) else "".join(source)


def _language(metadata: dict[str, Any]) -> str:
    """The notebook's language: its language_info's name, else its kernelspec's language; "" if neither."""
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        entry = metadata.get(key)
        if isinstance(entry, dict) and isinstance(entry.get(field), str):
            name: str = entry[field].strip()
            if name and name.replace("-", "").replace("+", "").replace("#", "").isalnum():
                return name.lower()
    return ""


def _fenced(body: str, info: str) -> str:
    """`body` in a backtick fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def _text_outputs(outputs: list[_Output]) -> list[str]:
    """A code cell's text outputs, each cut to a short block; rich data and errors left out."""
    texts: list[str] = []
    for out in outputs:
        if out.output_type == "stream":
            raw = out.text
        elif out.output_type in ("execute_result", "display_data"):
            plain = out.data.get("text/plain", "")
            raw = plain if isinstance(plain, str) or _all_str(plain) else ""
        else:
            continue
        short = _short(raw)
        if short and not _REPR.fullmatch(short):
            texts.append(short)
    return texts


def _all_str(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _short(raw: str | list[str]) -> str:
    """At most MAX_OUTPUT_LINES lines and MAX_OUTPUT_CHARS characters of an output, cut at a line's end."""
    if isinstance(raw, list):
        raw = "".join(raw[: MAX_OUTPUT_LINES + 1])  # a list is of lines: never join more than are kept
    lines = raw[: MAX_OUTPUT_CHARS + 1].strip("\n").split("\n")[:MAX_OUTPUT_LINES]
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line) + 1
        if size > MAX_OUTPUT_CHARS + 1:
            break
        kept.append(line.rstrip())
    return "\n".join(kept).strip("\n") if any(line.strip() for line in kept) else ""
