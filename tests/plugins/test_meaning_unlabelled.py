"""A sentence read under a heading that is not about it (issue 20: false refusals).

gs-symbolic reads each sentence with the heading it stands under, so an option's description carries the
option. When sd-symbolic takes a line that is no heading for one (a license's capitalised clause before a
copyright record), the prefix pulls the sentence's vector away from what it says, and the meaning floor
refused "Written by Tamsin Ollerenshaw." for "Who wrote lexer.c?" (cosine 0.1 with the prefix, 0.4 without).
At the floor, the sentence is read once more without its heading; a sentence unlike the question either way
stays refused."""

from __future__ import annotations

from answer_support import needs_model, solve
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

_HEADING = "LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM"


def _unit(n: int, claim: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=f"doc::chunk-002::unit-{n:03d}",
        sourceId="doc",
        chunkId="doc::chunk-002",
        kuType="atomic",
        role="Description",
        topic="t",
        claim=claim,
        sectionTitle=_HEADING,
        unitIndex=n,
        chunkType="paragraph",
    )


UNITS = [
    _unit(6, "Files: lexer.c Copyright: (c) 1992 by the university of Lakeside."),
    _unit(7, "Written by Tamsin Ollerenshaw. Not derived from licensed software."),
]


def _ask(question: str) -> tuple[str, str]:
    group = IntentGroup(
        index=1, act="identify", intent=question, output="a short answer", answerType="person"
    )
    doc = solve(group, UNITS)
    return doc.result.status, doc.answer or ""


@needs_model
def test_a_sentence_under_a_false_heading_is_read_alone_at_the_floor() -> None:
    status, answer = _ask("Who wrote lexer.c?")
    assert "Tamsin Ollerenshaw" in answer, (status, answer)


@needs_model
def test_a_sentence_unlike_the_question_either_way_stays_refused() -> None:
    assert _ask("Who audited the harbour accounts?")[1] == NO_CONTEXT_ANSWER
