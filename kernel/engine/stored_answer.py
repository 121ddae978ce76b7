"""The stored-answer cap: what a turn keeps of a very large answer (`engine.limits.maxStoredAnswerBytes`).

The client gets the whole answer; the store keeps each answer text (the response Markdown and every
group's `answerMarkdown`, subgroups included) cut to the cap at a UTF-8 character boundary, followed by
an explicit marker, and the turn record says `answerTruncated`. The response document also carries
`storedAnswerTruncated` (limit, and how many texts were cut) so a reader of the document alone sees it.
Without this five 15 MB answers made one session's explainability 75 MB.
"""

from __future__ import annotations

from typing import Any

MARKER = (
    "\n\n[answer truncated in storage: {kept} of {total} bytes kept (engine.limits.maxStoredAnswerBytes)]"
)


def cut(text: str, limit: int) -> tuple[str, bool]:
    """`text` itself when its UTF-8 form fits `limit` bytes, else its first `limit` bytes (never half a
    character) plus the marker."""
    if len(text) <= limit // 4:  # four bytes per character at most: fits without encoding
        return text, False
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text, False
    kept = raw[:limit].decode("utf-8", "ignore")  # a character cut in half is dropped whole
    return kept + MARKER.format(kept=len(kept.encode("utf-8", "surrogatepass")), total=len(raw)), True


def _cut_groups(groups: Any, limit: int) -> tuple[Any, int]:
    if not isinstance(groups, list):
        return groups, 0
    out: list[Any] = []
    count = 0
    for group in groups:
        if not isinstance(group, dict):
            out.append(group)
            continue
        group = dict(group)
        answer = group.get("answerMarkdown")
        if isinstance(answer, str):
            group["answerMarkdown"], was_cut = cut(answer, limit)
            count += was_cut
        if "subgroups" in group:
            group["subgroups"], sub = _cut_groups(group["subgroups"], limit)
            count += sub
        out.append(group)
    return out, count


def cap_answer(markdown: str, document: dict[str, Any], limit: int) -> tuple[str, dict[str, Any], bool]:
    """(markdown, document, truncated) as the store keeps them; the inputs are not changed."""
    stored_markdown, markdown_cut = cut(markdown, limit)
    groups, count = _cut_groups(document.get("groups"), limit)
    count += markdown_cut
    if not count:
        return markdown, document, False
    stored = {**document, "groups": groups} if "groups" in document else dict(document)
    stored["storedAnswerTruncated"] = {"limitBytes": limit, "textsCut": count}
    return stored_markdown, stored, True
