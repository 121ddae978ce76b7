"""Read a model's answer as CNL sections: strip the wrapping models add, fill structural fields, validate.

A prompt asks the model for the sections of an op only (`## Intent Group 1`, `## Context Unit 1` ...).
`parse_model_sections` removes an enclosing code fence, any preamble before the first `## ` heading and a
`## Plugin Result` block the model may have written, lets the caller rename headings and add structural
fields a model should not have to invent (ids, SourceId ...), prepends the plugin's own result block and
parses the whole with the protocol's one parser. Problems are reported with the line numbers of the
model's own text, ready to be quoted back in a corrective prompt.
"""

from __future__ import annotations

from collections.abc import Callable

from mrpvm.protocol.cnl import CnlError, CnlIssue, parse_document
from mrpvm.protocol.document import CnlDocument

Rename = Callable[[str], str]  # heading text (without "## ") -> new heading text
Inject = Callable[[str], dict[str, str]]  # heading text -> fields to add when the section lacks them


class ModelOutputError(ValueError):
    """The model's text is not valid CNL for the op; `issues` carry the model's own line numbers."""

    def __init__(self, issues: list[CnlIssue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues[:3]) or "invalid output")

    def for_prompt(self, limit: int = 12) -> str:
        """The issues as a list a corrective prompt can quote."""
        lines = [f"- {issue}" for issue in self.issues[:limit]]
        if len(self.issues) > limit:
            lines.append(f"- ... and {len(self.issues) - limit} more")
        return "\n".join(lines)


def _unfence(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    body = [(n, t) for n, t in lines if t.strip()]
    if len(body) >= 2 and body[0][1].lstrip().startswith("```") and body[-1][1].strip() == "```":
        first, last = body[0][0], body[-1][0]
        return [(n, t) for n, t in lines if n not in (first, last)]
    return lines


def parse_model_sections(
    text: str,
    op: str,
    result_block: list[str],
    *,
    rename: Rename | None = None,
    inject: Inject | None = None,
    keep_preamble: bool = False,
) -> CnlDocument:
    """Validate a model's sections for `op` behind `result_block` (the plugin's own `## Plugin Result` lines).

    Raises ModelOutputError when the text has no section or breaks the grammar.
    """
    lines = _unfence(list(enumerate(text.replace("\r\n", "\n").split("\n"), 1)))
    start = next((i for i, (_, t) in enumerate(lines) if t.startswith("## ")), None)
    if start is None:
        raise ModelOutputError([CnlIssue(1, "no-sections", "the answer has no '## ' section heading")])
    if not keep_preamble:
        lines = lines[start:]
    out: list[tuple[int, str]] = [(0, line) for line in result_block] + [(0, "")]
    skipping = False
    i = 0
    while i < len(lines):
        number, line = lines[i]
        if line.startswith("## "):
            heading = line[3:].strip()
            skipping = heading == "Plugin Result"
            if skipping:
                i += 1
                continue
            if rename is not None:
                heading = rename(heading)
            out.append((number, f"## {heading}"))
            if inject is not None:
                present = _fields_of_section(lines, i + 1)
                for name, value in inject(heading).items():
                    if name not in present:
                        out.append((number, f"{name}: {value}"))
            i += 1
            continue
        if not skipping:
            out.append((number, line))
        i += 1
    try:
        return parse_document("\n".join(t for _, t in out), op)
    except CnlError as err:
        mapped = []
        for issue in err.issues:
            origin = out[issue.line - 1][0] if 0 < issue.line <= len(out) else 0
            mapped.append(CnlIssue(origin or 1, issue.rule, issue.message))
        raise ModelOutputError(mapped) from None


def _fields_of_section(lines: list[tuple[int, str]], start: int) -> set[str]:
    names = set()
    for _, line in lines[start:]:
        if line.startswith("## "):
            break
        if line and not line[0].isspace():
            name = line.split(":", 1)[0]
            if name.isalnum():
                names.add(name)
    return names
