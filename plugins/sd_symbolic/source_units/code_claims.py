"""Code and steps in a unit's claim as Markdown: a code segment fenced and dedented, a procedure's steps
numbered in order, a plain-text example fenced under its lead-in (tree.py)."""

from __future__ import annotations

import re
import textwrap

from mrpvm.plugins.sdk.patterns import lazy_pattern

from .grouping import Spec
from .pieces import Piece, strip_step_marker

FENCED = lazy_pattern(r"^ {0,3}(?:```|~~~)", re.M)  # a Markdown fence on any line


def code_block(raw: str) -> str:
    """A code segment as a Markdown fence, dedented (a fenced block keeps its own fence lines)."""
    body = textwrap.dedent(raw).strip("\n")
    return body if FENCED.match(body) else f"```\n{body}\n```"


def numbered_steps(pieces: list[Piece]) -> list[str]:
    """Steps numbered in order; the code block a step shows follows it, unnumbered."""
    lines: list[str] = []
    step = 0
    for p in pieces:
        if p.seg.kind == "code":
            lines.append(code_block(p.clean))
        else:
            step += 1
            lines.append(f"{step}. {strip_step_marker(p.clean)}")
    return lines


def fenced(spec: Spec) -> str:
    """A plain-text example as Markdown: its lead-in, then its lines dedented inside a fence."""
    lead = [spec.intro.clean] if spec.intro else []
    code = [textwrap.dedent(p.clean).strip("\n") for p in spec.pieces if p.seg.kind == "code"]
    return "\n".join([*lead, "```", *code, "```"])
