"""A sentence that only refers the reader elsewhere is no answer (issue 20: unanswerable questions answered).

"Which status code should the server return when a merge fails?" over a specification whose only sentence
on the matter is "See [RFC 9999], Section 4 for considerations on merge failures, including suggested status
codes." The sentence shares most of the question's words, so it ranks first and reads as an answer; but
its words about the asked matter stand in a purpose clause ("for …") that says what another document
discusses, and the sentence asserts nothing of the matter itself: the reader is sent elsewhere. A
cross-reference is written as an imperative of reading ("See X for Y", "Refer to X for Y", "Consult X for Y")
or with the purpose first ("For Y, see X"). When every sentence of the answer is such a reference, the
documents point to where the answer is, they do not state it: the answer is the best candidate, `weak`,
never `success`. A question that asks where to read ("Where …?", location) or that asks for the target
itself ("Which section covers …?" over "See Section 4 for …": the asked kind written in the target) is
answered by the reference. A reference to a thing rather than to a document or a part of one ("For wide
characters, see L<Text::Wide>.", a module recommended by its name) or without a purpose clause ("`GIL`: See
:term:`global interpreter lock`.", a glossary's pointer to an entry) names the thing, and is left alone.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import sentences

from .question import DOCUMENT_NOUNS, Question

# the imperative of reading that opens a cross-reference
_READ = r"(?:see(?:\s+also)?|refer\s+to|consult)"
# "See [RFC 9999], Section 4 for considerations on …" / "Refer to the install guide for details on …":
# the target (no sentence end inside), then the purpose clause
_TARGET_FIRST = lazy_pattern(rf"^\(?\s*(?:please\s+)?{_READ}\s+(?P<target>[^;!?]+?)\s+for\s+\S", re.I)
# "For details on …, see the install guide." / "For more information, refer to Section 4."
_PURPOSE_FIRST = lazy_pattern(rf"^\(?\s*for\s+[^,;]+,\s*(?:please\s+)?{_READ}\s+(?P<target>.+)$", re.I)
# "Which section …", "what document …": the noun a question asks the identity of
_WHICH_NOUN = lazy_pattern(r"\b(?:which|what)\s+([A-Za-z]+)\b", re.I)
# a document or a part of one: a bracketed citation ("[RFC9999]"), a document's noun ("the install guide",
# "RFC 9999"), a part's ("Section 4", "chapter 2", "Appendix A")
_DOCUMENT = lazy_pattern(
    rf"\[[^\]]+\]|\b(?:{DOCUMENT_NOUNS}|sections?|chapters?|appendix|appendices|parts?)\b", re.I
)
# a label the answer is cited under ("`merge`: See …", "Errors: See …")
_LABEL = lazy_pattern(r"^[^\s:][^:]{0,80}:\s+(?=\S)")


def target(sentence: str) -> str | None:
    """What a cross-reference sends the reader to ("[RFC 9999], Section 4"), or None when the sentence is
    not one: it states something itself, it points without saying what for, or what it points to is no
    document or part of one ("For wide characters, see L<Text::Wide>." recommends a module by its name)."""
    text = sentence.strip()
    for m in (_TARGET_FIRST.match(text), _PURPOSE_FIRST.match(text)):
        if m and _DOCUMENT.search(m.group("target")):
            return m.group("target")
    return None


def refers_only(q: Question, answer: str) -> bool:
    """Every sentence of the answer (its cited label aside) only sends the reader elsewhere, and the question
    asks neither where to read nor for the reference's target (its asked kind written in the target)."""
    if q.answer_type == "location":
        return False
    said = [s for part in answer.split("\n\n") for s in sentences(_LABEL.sub("", part.strip(), count=1))]
    targets = [target(s) for s in said]
    if not said or any(t is None for t in targets):
        return False
    which = _WHICH_NOUN.search(q.focus or q.text)
    kinds = {q.kind, which.group(1) if which else ""} - {""}
    return not any(re.search(rf"\b{re.escape(k)}", t or "", re.I) for k in kinds for t in targets)
