"""What a model wrote: a grounded answer with the units it cites, `NO-CONTEXT`, `NEEDS-DECOMPOSITION`, or a
structured error saying why the completion is none of these (copied the prompt, cited what it was not
given, quoted what its cited units do not say, cited units that do not hold its words, attributed to units
that do not hold its words, empty, cut at max_tokens)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mrpvm.plugins.sdk import PluginFailure
from mrpvm.plugins.sdk.model_output import ModelOutputError, parse_model_sections
from mrpvm.plugins.sdk.text import content_words, stems
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER, ROLES

NO_CONTEXT = re.compile(r"^\W*NO[-_ ]CONTEXT\b", re.IGNORECASE)
NEEDS_DECOMPOSITION = re.compile(r"^\W*NEEDS[-_ ]DECOMPOSITION\b\W*(.*)", re.IGNORECASE | re.DOTALL)
_HEADING = re.compile(r"^## +(.*?)\s*$")
_KNOWN = ("Answer", "Sources")
_ID_WRAP = " \t[]()`'\"*."
_LABEL = re.compile(r"\bE\d+\b")
_LABEL_REFS = re.compile(r"\s*\[(?:E\d+)(?:\s*,\s*E\d+)*\]")
_OPENER = re.compile(r"^(?:the\s+)?answer\s+is\s*:\s*", re.IGNORECASE)
# Lines of the user message (prompts/question.md) and placeholders of the answer format
# (prompts/answer_format.md) that no answer holds: a completion with one copied the prompt. The evidence
# lines' `(Role; Topic)` headers are added per call (evidence_markers).
PROMPT_MARKERS = (
    "Question (",
    "Expected output:",
    "A good answer:",
    "<the answer in Markdown",
    "<the labels of the evidence",
    "more evidence items left out for length)",
)
# An evidence line's `(Role; Topic)` header with a topic the model made up ("(Definition; Debian 3.0)"):
# the form of the evidence list, never of an answer.
_EVIDENCE_HEADER = re.compile(r"\((?:" + "|".join(ROLES) + r"); [^)\n]*\)")
ATTRIBUTION_MIN = 0.6  # share of the answer's content words its attributed units must hold
# Share of a citing answer's content words (by stem) its cited units or the question must hold: at least
# half of what it says rests on what it cites (lower than ATTRIBUTION_MIN: a model that names its sources
# may add the connecting words of a recommendation). Not judged below CITED_MIN_WORDS words ("Probably not.").
CITED_MIN = 0.5
CITED_MIN_WORDS = 3
# A passage the answer presents as quoted: in straight or curly double quotes, or a `>` block line. Shorter
# than QUOTE_MIN_WORDS words it is a name or a scare quote ("yes", "--force"), not a quotation.
_QUOTE = re.compile(r'"([^"\n]+)"|“([^”\n]+)”|^[ \t]*>[ \t]?(.+)$', re.MULTILINE)
QUOTE_MIN_WORDS = 3
# Words of the criterion's opening that mark a copy ("answer describes the main facts accurately"): the
# criteria are the engine's own sentences, which no document's answer repeats word for word for this long.
CRITERION_MARKER_WORDS = 6


@dataclass(slots=True)
class Draft:
    status: str  # success | no-context | needs-decomposition
    answer: str = ""
    sources: list[str] | None = None
    reason: str = ""
    attributed: bool = False  # the plugin, not the model, named the sources


def read_answer(
    text: str,
    plugin_id: str,
    known: set[str] | dict[str, str],
    allow_decompose: bool,
    truncated: bool = False,
    texts: dict[str, str] | None = None,
    markers: tuple[str, ...] = PROMPT_MARKERS,
    question: str = "",
) -> Draft:
    """The model's answer as a Draft. Lenient about wrapping (missing heading, stray ## headings), strict
    about substance: a cut, empty, copied or ungrounded answer is a PluginFailure saying why. `known`: what
    may be cited (a label or id → the unit id); `texts`: unit id → its text, to attribute an answer that
    cites nothing; `markers`: text only a copy of the prompt holds (its fixed lines, the evidence lines'
    `(Role; Topic)` headers); `question`: its words may be in the answer without a unit holding them."""
    known_ids = known if isinstance(known, dict) else {i: i for i in known}
    stripped = text.strip()
    if not stripped:
        raise PluginFailure("INVALID_MODEL_OUTPUT", "the model's completion is empty", {"reason": "empty"})
    if truncated:
        raise PluginFailure(
            "INVALID_MODEL_OUTPUT",
            f"the model's answer was cut at its max_tokens limit: {_preview(stripped)!r}",
            {"reason": "truncated"},
        )
    if NO_CONTEXT.match(stripped):
        return Draft("no-context", NO_CONTEXT_ANSWER, [])
    match = NEEDS_DECOMPOSITION.match(stripped)
    if match:
        if allow_decompose:
            return Draft("needs-decomposition", reason=" ".join(match.group(1).split())[:300])
        raise PluginFailure(
            "INVALID_MODEL_OUTPUT", "the model asked for decomposition, which this request does not allow"
        )
    lines = stripped.split("\n")
    if lines and lines[0].strip().startswith("```") and lines[-1].strip() == "```":
        lines = lines[1:-1]
    if not any(_HEADING.match(line) and _HEADING.match(line).group(1) == "Answer" for line in lines):
        lines = ["## Answer", *lines]
    fixed = []
    for line in lines:
        heading = _HEADING.match(line)
        if heading and heading.group(1) not in _KNOWN and not heading.group(1).startswith("Plugin Result"):
            line = "#" + line  # a level-2 heading inside the answer becomes level 3
        fixed.append(line)
    block = ["## Plugin Result", "Status: success", f"Plugin: {plugin_id}", "Confidence: medium"]
    try:
        doc = parse_model_sections("\n".join(fixed), "solve", block)
        answer, cited = (doc.answer or "").strip(), list(doc.sources or [])
    except ModelOutputError:
        answer, cited = _loose_answer(fixed), []
    answer = _without_trailing_headings(answer)
    if not answer:  # an empty section after the answer the model wrote first ("No, ...\n\n## Answer")
        answer = _without_trailing_headings("\n".join(_preamble(fixed)))
    answer = _OPENER.sub("", answer, count=1).strip()  # SmolLM2's "The answer is:" says nothing
    if not _flat(_LABEL_REFS.sub("", answer)):  # nothing, or only labels and punctuation
        raise PluginFailure("INVALID_MODEL_OUTPUT", "the model's answer is empty", {"reason": "empty-answer"})
    if NO_CONTEXT.match(answer) or _flat(answer).startswith(_flat(NO_CONTEXT_ANSWER)):
        return Draft("no-context", NO_CONTEXT_ANSWER, [])  # also the protocol's refusal sentence, written out
    copied = next((m for m in markers if m and m in answer), None)
    if copied is None and (header := _EVIDENCE_HEADER.search(answer)) is not None:
        copied = header.group(0)
    if copied is not None:  # it continued the prompt or the evidence list instead of answering
        raise PluginFailure(
            "INVALID_MODEL_OUTPUT",
            f"the model copied the prompt ({copied!r}) instead of answering: {_preview(answer)!r}",
            {"reason": "copied-prompt"},
        )
    cited = [c.strip(_ID_WRAP) for c in cited]
    cited = [c for c in dict.fromkeys(cited) if c]
    if not cited:  # no Sources line: take the labels and ids the answer mentions
        mentioned = [i for i in known_ids if i in answer and not _LABEL.fullmatch(i)]
        mentioned += _LABEL.findall(answer)
        cited = list(dict.fromkeys(sorted(mentioned, key=answer.index)))
    unknown = [i for i in cited if i not in known_ids]
    if unknown:  # a made-up (or left-out) source: the answer may rest on it, so it is not trusted
        raise PluginFailure(
            "UNGROUNDED_ANSWER",
            f"the model cited {len(unknown)} id(s) it was not given ({', '.join(unknown[:4])}): "
            f"{_preview(answer)!r}",
            {"reason": "hallucinated-source", "cited": cited[:12], "unknown": unknown[:12]},
        )
    answer = _LABEL_REFS.sub("", answer).strip()  # `[E2]` means nothing to the user: the sources say it
    if cited:
        sources = list(dict.fromkeys(known_ids[c] for c in cited))
        check_cited(answer, sources, texts or {}, question)
        return Draft("success", answer, sources)
    sources, share = attribute(answer, texts or {})
    if share < ATTRIBUTION_MIN:  # an answer that rests on no evidence unit is not grounded
        raise PluginFailure(
            "UNGROUNDED_ANSWER",
            f"the model's answer cites no evidence unit and only {share:.0%} of its words are in the "
            f"evidence: {_preview(answer)!r}",
            {"reason": "no-source"},
        )
    check_cited(answer, list(texts or {}), texts or {}, question)  # a quotation from any given unit
    return Draft("success", answer, sources, attributed=True)


def check_cited(answer: str, sources: list[str], texts: dict[str, str], question: str = "") -> None:
    """UNGROUNDED_ANSWER unless the cited units hold what the answer says: every quoted passage
    (`quotations`) word for word in one of them (case, punctuation and spacing aside), and at least
    CITED_MIN of the answer's content words (by stem) in them or in the question. Sources without a text
    (guidance units: instructions, not evidence) are not judged."""
    bodies = [texts[uid] for uid in sources if uid in texts]
    if not bodies:
        return
    flat = [_flat(body) for body in bodies]
    for quote in quotations(answer):
        if not any(_flat(quote) in body for body in flat):
            raise PluginFailure(
                "UNGROUNDED_ANSWER",
                f"the model quotes {_preview(quote)!r}, which is not in the unit(s) it cites "
                f"({', '.join(sources[:4])}): {_preview(answer)!r}",
                {"reason": "misquoted-source", "quote": quote[:300], "cited": sources[:12]},
            )
    for uid in sources:  # an id cited inline is a reference, not a word of the answer
        answer = answer.replace(uid, " ")
    wanted = set(stems(content_words(answer)))  # stems: "shared" is held by "share"
    if len(wanted) < CITED_MIN_WORDS:
        return
    held = wanted & set(stems(content_words(" ".join([*bodies, question]))))
    if len(held) / len(wanted) < CITED_MIN:
        missing = sorted(wanted - held)
        raise PluginFailure(
            "UNGROUNDED_ANSWER",
            f"only {len(held) / len(wanted):.0%} of the answer's words are in the unit(s) it cites "
            f"({', '.join(sources[:4])}; not there: {', '.join(missing[:6])}): {_preview(answer)!r}",
            {"reason": "unsupported-by-cited", "cited": sources[:12], "missing": missing[:12]},
        )


def quotations(answer: str) -> list[str]:
    """The passages the answer quotes (double quotes or `>` lines) of at least QUOTE_MIN_WORDS words."""
    found = (next(g for g in m.groups() if g is not None) for m in _QUOTE.finditer(answer))
    return [q.strip() for q in found if len(q.split()) >= QUOTE_MIN_WORDS]


def _flat(text: str) -> str:
    """Lower-cased words separated by single spaces: a quotation matches whatever the punctuation."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def attribute(answer: str, texts: dict[str, str]) -> tuple[list[str], float]:
    """(the units that hold the answer's content words, greedily by how many new words each adds; the share
    of the answer's words they hold)."""
    wanted = set(content_words(answer))
    if not wanted or not texts:
        return [], 0.0
    words = {uid: set(content_words(text)) & wanted for uid, text in texts.items()}
    chosen: list[str] = []
    covered: set[str] = set()
    while True:
        best = max(words, key=lambda uid: (len(words[uid] - covered), -list(words).index(uid)))
        gain = words[best] - covered
        if not gain:
            break
        chosen.append(best)
        covered |= gain
    return chosen, len(covered) / len(wanted)


def evidence_markers(units: list[KnowledgeUnit]) -> list[str]:
    """The `(Role; Topic)` header of each unit's prompt line (sdk.llm.unit_line): an answer holding one
    copied the evidence list."""
    return [f"({u.role}; {u.topic})" for u in units]


def criterion_marker(intent: IntentGroup) -> list[str]:
    """The opening of the intent's criterion (shown as `A good answer: ...`) without its first word, when
    it is long enough to be recognised: a small model copies it as "This answer describes the main facts
    accurately …" and goes on in words of its own, so only the opening is looked for."""
    words = intent.criterion.split()
    return [" ".join(words[1 : 1 + CRITERION_MARKER_WORDS])] if len(words) >= 5 else []


def _preamble(lines: list[str]) -> list[str]:
    """The lines before the first `## ` heading."""
    out: list[str] = []
    for line in lines:
        if _HEADING.match(line):
            break
        out.append(line)
    return out


def _without_trailing_headings(answer: str) -> str:
    """Drop heading-only lines a model leaves at the end (an empty `## Sources`, a repeated `## Answer`)."""
    lines = answer.rstrip().split("\n")
    while lines and lines[-1].lstrip().startswith("#"):
        lines.pop()
    return "\n".join(lines).strip()


def _preview(text: str) -> str:
    return " ".join(text.split())[:160]


def _loose_answer(lines: list[str]) -> str:
    """Everything between `## Answer` and `## Sources` (or the end), when the strict parse failed."""
    out, inside = [], False
    for line in lines:
        heading = _HEADING.match(line)
        if heading:
            inside = heading.group(1) == "Answer"
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip()
