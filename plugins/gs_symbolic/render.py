"""How gs-symbolic writes what it quotes: sentences as sentences, code as code, and the label a passage
needs to be understood on its own (a definition's term, a footnote's subject, a dated entry's heading)."""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.document import KnowledgeUnit

from .evidence import Sentence, about
from .passages import Passage

_CODE_LIKE = lazy_pattern(r"^[-+./\w\[\]=:<>|{}@,~ ]+$")
MAX_LABEL = 80
# a shell prompt opening a line of a terminal session: "$ ", "% ", "(venv) $ ", "user@host:~/src$ ",
# PowerShell's "PS C:\> "
_PROMPT = lazy_pattern(
    r"^\s*(?:\([^()\s]{1,40}\)\s*)?(?:[A-Za-z_.@~:/-][\w.@~:/-]{0,59})?[$%]\s+\S|^\s*PS [^>\n]{0,80}>\s*\S"
)


# a Markdown link whose target is relative to the document's own site ("[nodes](/docs/admin/node)",
# "[labels](services.md#labels)"): it resolves nowhere the answer is read, so the quote keeps its text
_RELATIVE_LINK = lazy_pattern(r"(?<!!)\[([^\]\n]+)\]\((?![A-Za-z][A-Za-z0-9+.-]*:|//)[^()\s]*\)")


def as_sentence(text: str) -> str:
    """One line, ending as a sentence ends: a lead-in's colon or semicolon ("… as JSON:") becomes a period;
    a relative link is quoted as its text (the source cited names the document it belongs to)."""
    text = _RELATIVE_LINK.sub(r"\1", " ".join(text.split())).rstrip(":;, ")
    return text if not text or text[-1] in ".!?\"'”’)`" else text + "."


def session_commands(code: str) -> str:
    """A terminal session's commands without what the machine printed: the lines a shell prompt opens (and
    the lines a trailing backslash continues them on), when the block holds both; any other code whole.
    Quoted after the sentence that tells the reader to run it, the command is what the reader types; its
    output is the machine's reply, not the answer (code quoted on its own is kept whole: it is the evidence)."""
    lines = code.split("\n")
    kept: list[str] = []
    continued = False
    for line in lines:
        if continued or _PROMPT.match(line):
            kept.append(line)
            continued = line.rstrip().endswith("\\")
        else:
            continued = False
    return "\n".join(kept) if kept and len(kept) < len(lines) else code


def as_quote(s: Sentence, led: bool = False) -> str:
    """A prose sentence as a sentence; code inline when it is one line, else as a fenced block; code a
    sentence leads into (`led`: "… run:") by the commands of its terminal session."""
    if s.code:
        code = session_commands(s.text) if led else s.text
        return f"\n```\n{code}\n```\n" if "\n" in code else f"`{code.strip()}`"
    return as_sentence(s.text)


def join_quotes(sentences: list[Sentence]) -> str:
    """Consecutive sentences as one paragraph; a code block on lines of its own. A lead-in before code
    keeps its colon."""
    out: list[str] = []
    led = False  # the sentence before leads into this code
    for n, s in enumerate(sentences):
        nxt = sentences[n + 1] if n + 1 < len(sentences) else None
        if not s.code and nxt is not None and nxt.code and s.text.rstrip().endswith(":"):
            out.append(" ".join(s.text.split()))
            led = True
        else:
            out.append(as_quote(s, led))
            led = False
    text = " ".join(out)
    return re.sub(r" *\n *", "\n", text).strip()


def definition_label(unit: KnowledgeUnit) -> str | None:
    """What a definition unit's sentences are about: its term ("-f, --file=ARCHIVE"), or for a footnote
    what cites it ("linux-armv7l"); None for other units, for a question (a FAQ entry) or a long term."""
    if unit.chunkType != "definition" or not unit.title:
        return None  # an entry (a bullet with paragraphs) has a topic, not a term
    label = about(unit)
    if not label or len(label) > MAX_LABEL or label.rstrip().endswith("?"):
        return None
    return label


def labelled(label: str, text: str) -> str:
    """'`-k, --keep-old-files`: Don't replace …' (code-like labels in backticks)."""
    if text.lower().startswith(label.lower()):
        return text
    shown = f"`{label}`" if _CODE_LIKE.match(label) and (label[0] in "-+" or " " not in label) else label
    return f"{shown}: {text}"


def render_list(chosen: list[Sentence], as_list: bool) -> str:
    """One sentence as it is, several as a bulleted list; code as code: inline when one line, else a
    fenced block after the list."""
    lines = [as_quote(s) for s in chosen if not (s.code and "\n" in s.text)]
    blocks = [f"```\n{s.text}\n```" for s in chosen if s.code and "\n" in s.text]
    if len(lines) == 1 and not blocks and not as_list:
        return lines[0]
    parts = ["\n".join(f"- {line}" for line in lines)] if lines else []
    return "\n\n".join(parts + blocks)


def passage_text(p: Passage, shown: str = "") -> str:
    """The passage as quoted text with its definition term, unless `shown` (a label already written
    before it) names the term."""
    text = join_quotes(p.sentences)
    label = definition_label(p.sentences[0].unit)
    if not label or (shown and set(terms(shown)) <= set(terms(label))):
        return text
    return labelled(label, text)
