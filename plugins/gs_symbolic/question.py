"""What the intent asks and in what form: content terms, act, and output constraints.

Output constraints come from the intent's Output field, from guidance KUs scoped to the goal solver,
and from instruction sentences inside the question itself ("Answer with a single word."). An
instruction sentence is one whose every content word is format vocabulary; it is removed from the
question before matching, so "Answer Yes or No" never counts as evidence to look for.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.answer_types import alternatives, asked_noun, expected_type, type_qualifiers
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import STOPWORDS, iter_words, notation_terms, sentences, stems, terms
from mrpvm.plugins.sdk.time_answers import asks_circumstance, asks_frequency, asks_untimed_number

from .framing import FORMAT_WORDS, FRAMING
from .lexicon import ADVERBS, CONNECTIVES, LIGHT_STEMS, LIGHT_VERBS, PREPOSITIONS

_CLOSED_CLASS = CONNECTIVES | PREPOSITIONS | ADVERBS

_YES_NO = lazy_pattern(r"\byes\s*(?:/|or|-)\s*no\b|\bboolean\b|\btrue\s*(?:/|or)\s*false\b", re.I)
_SINGLE_WORD = lazy_pattern(r"\b(?:single|one)[- ]word\b|\bin a word\b|\bone term\b", re.I)
_BRIEF = lazy_pattern(r"\b(?:brief|briefly|concise|concisely|short answer|one sentence)\b", re.I)
_LIST = lazy_pattern(r"\b(?:list|bullet(?:s|ed)?|enumerate)\b", re.I)
_STEPS = lazy_pattern(
    r"\b(?:steps?|step-by-step|procedure|instructions)\b|\bhow (?:do|can|should|would) (?:i|we|you|one)\b|\bhow to\b",
    re.I,
)
# A question answered by a command or a snippet: code blocks of the evidence may be quoted.
_CODE = lazy_pattern(
    r"\b(?:commands?|syntax|examples?|snippets?|scripts?|usage|invocation|flags?|cli)\b"
    r"|\bhow (?:do|can|should|would) (?:i|we|you|one) (?:run|start|install|launch|invoke|call|test|build|deploy|configure)\b",
    re.I,
)
_COMPARE = lazy_pattern(
    r"\b(?:compare|comparing|comparison|contrast|versus|vs\.?|differences? between|differ)\b", re.I
)
_AUX = [
    "is",
    "are",
    "was",
    "were",
    "am",
    "do",
    "does",
    "did",
    "can",
    "could",
    "would",
    "will",
    "should",
    "shall",
    "has",
    "have",
    "had",
    "may",
    "might",
    "must",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "don't",
    "doesn't",
    "didn't",
    "can't",
    "couldn't",
    "wouldn't",
    "won't",
    "shouldn't",
    "hasn't",
    "haven't",
    "hadn't",
]
_POLAR = lazy_pattern(r"(?:^|,\s+)(?:" + "|".join(re.escape(a) for a in _AUX) + r")\s+\S", re.I)
_WH = lazy_pattern(r"^\s*(?:who|whom|whose|which|what|where|when|name|identify)\b", re.I)
# Hypothetical or counterfactual framing: such questions are never stated explicitly by evidence.
_HYPOTHETICAL = lazy_pattern(
    r"\b(?:if|suppose|supposing|imagine|hypothetical(?:ly)?|counterfactual|instead|otherwise|would|might|could|"
    r"whether or not)\b|\bhad\s+\w+(?:ed|en)\b",
    re.I,
)


# a capitalised word, or one with a capital inside ("macOS", "iPhone", "chunksSortMode"): a name as written
_NAME_TOKEN = lazy_pattern(r"[A-Z][\w'’-]*|[a-z]+[A-Z][\w'’-]*")
_TITLES = frozenset(["dr", "mr", "mrs", "ms", "prof", "st", "sr", "jr", "gen", "col", "capt", "lt", "sgt"])


def name_runs(text: str) -> list[str]:
    """Runs of capitalised words ("Dr. Elara Vance"); a run ends at punctuation other than a title's dot.

    A capitalised question word or instruction verb opening a run ("Compare", "How", "The") is not
    part of the name.
    """
    runs: list[str] = []
    current: list[re.Match[str]] = []

    def close() -> None:
        while current and _is_framing(current[0].group(0), _sentence_start(text, current[0].start())):
            current.pop(0)
        if current:
            runs.append(text[current[0].start() : current[-1].end()])
        current.clear()

    for tok in _NAME_TOKEN.finditer(text):
        if tok.start() > 0 and (text[tok.start() - 1].isalnum() or text[tok.start() - 1] == "-"):
            continue  # inside a word, or an option's letter ("-F"): no name
        if current:
            gap = text[current[-1].end() : tok.start()]
            prev = current[-1].group(0).lower()
            if not (gap == " " or (gap == ". " and prev in _TITLES)):
                close()
        current.append(tok)
    close()
    return runs


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".?!:;\"'(“"


def _is_framing(word: str, starts_sentence: bool) -> bool:
    """A word that opens a capitalised run without being part of a name: a question or instruction word,
    or a closed-class word capitalised only because it starts the sentence ("Since which version …";
    mid-sentence, "Still Waters" stays a name)."""
    low = word.lower()
    if low in STOPWORDS or low in FORMAT_WORDS or (starts_sentence and low in _CLOSED_CLASS):
        return True
    return stems([low])[0] in FRAMING


class Question(msgspec.Struct):
    text: str  # the question with instruction sentences removed
    act: str
    yes_no: bool = False
    single_word: bool = False
    brief: bool = False
    wants_list: bool = False
    wants_steps: bool = False
    wants_code: bool = False
    compare: bool = False
    polar: bool = False
    hypothetical: bool = False
    wh: bool = False
    focus: str = ""  # the question sentence a constrained answer must address
    sub_questions: list[str] = msgspec.field(default_factory=list)
    terms: list[str] = msgspec.field(default_factory=list)  # content stems, framing removed, first-seen order
    names: list[list[str]] = msgspec.field(
        default_factory=list
    )  # the terms of each multi-word name ("Kaelen Voss")
    context: str = ""  # the intent group's Context line
    support: list[str] = msgspec.field(
        default_factory=list
    )  # content stems of the context, not already in terms
    answer_type: str = ""  # what kind of answer is expected (protocol.vocab.ANSWER_TYPES), "" unknown
    name_terms: set[str] = msgspec.field(
        default_factory=set
    )  # terms of the names the question uses ("Ubuntu")
    collection: dict[str, float] = msgspec.field(default_factory=dict)  # the retriever's term weights (idf)
    year: bool = False  # "in which year …": a date answer must name a year
    untimed: bool = False  # "which port …": a number answer must be no duration ("after 20 minutes")
    circumstance: bool = False  # "when does …": a condition or a span answers as a date does
    frequency: bool = False  # "how often …": a frequency ("weekly") answers as a figure does
    kind: str = ""  # stem of the noun a "which <noun> …" question asks for ("database"), "" if none
    options: list[set[str]] = msgspec.field(
        default_factory=list
    )  # the terms of each option a choice question offers
    foreign: str = ""  # a focus word the documents never hold (focus.py), set when the evidence is known
    documented: frozenset[str] = frozenset()  # the keys the evidence documents as entries (record_fields.py)
    qualifiers: set[str] = msgspec.field(
        default_factory=set
    )  # names qualifying the asked kind ("Python version")
    examples: set[str] = msgspec.field(
        default_factory=set
    )  # terms of an example given ("an encoding like UTF-16")

    @property
    def keyable(self) -> list[str]:
        """The terms that may make the question specific (keys): not those of an example it gives."""
        return [t for t in self.terms if t not in self.examples]

    @property
    def constrained(self) -> bool:
        return self.yes_no or self.single_word


def is_instruction(sentence: str) -> bool:
    """True when every content word of the sentence is format vocabulary ("Answer with a single word.")."""
    seen = False
    for w in iter_words(sentence):
        if w in FORMAT_WORDS:
            seen = True
        elif w not in STOPWORDS:
            return False  # a content word: most evidence sentences stop here, at their first word or two
    return seen


def analyse(
    text: str,
    act: str | None,
    output: str = "",
    guidance: list[str] | None = None,
    context: str = "",
    answer_type: str = "",
) -> Question:
    """Read the question, its act and its output constraints.

    `context` is the intent group's Context line (what the seed detector resolved the question to be
    about, e.g. the people a pronoun refers to); its terms support the match at a lower weight.
    """
    guidance = guidance or []
    parts = sentences(text) or [text]
    instructions = [s for s in parts if is_instruction(s)]
    body = [s for s in parts if not is_instruction(s)] or parts
    question_text = " ".join(body).strip()
    format_text = " ".join([output, *guidance, *instructions])
    questions = [s for s in body if s.rstrip().endswith("?")]
    focus = questions[-1] if questions else (body[-1] if body else text)
    options = [set(terms(option)) for option in alternatives(focus)]
    # a choice question ("Is it counted from 0 or from 1?") is answered by the option stated, not Yes/No
    polar = bool(_POLAR.search(focus.strip())) and not _WH.match(focus) and not options
    q = Question(text=question_text, act=act or _guess_act(question_text, polar), focus=focus)
    q.yes_no = bool(_YES_NO.search(format_text)) or bool(_YES_NO.search(question_text) and polar)
    q.single_word = bool(_SINGLE_WORD.search(format_text))
    if q.single_word and polar:
        q.yes_no = True
    q.brief = bool(_BRIEF.search(format_text))
    q.wants_list = bool(_LIST.search(format_text))
    q.wants_steps = bool(_STEPS.search(format_text) or _STEPS.search(question_text)) or q.act == "implement"
    q.wants_code = bool(_CODE.search(question_text))
    q.compare = q.act == "compare" or bool(_COMPARE.search(question_text))
    q.polar = polar
    q.hypothetical = bool(_HYPOTHETICAL.search(focus))
    q.wh = bool(_WH.match(focus))
    q.sub_questions = questions
    framed = _how_words(focus) | light_inflections(question_text)
    q.terms = [t for t in content_terms(question_text) if t not in framed]
    # "the highest level", "the minimum version": the extreme asked for, however the source writes it
    q.terms += [t for t in notation_terms(focus) if t not in q.terms]
    # "… according to PEP 518?": the source the question cites is where to look, not what the answer
    # states (the answer's sentence rarely names its own document): it supports the match, as context does
    cited = attributed_terms(question_text)
    q.terms = [t for t in q.terms if t not in cited and t not in _ATTRIBUTING] or q.terms
    q.year = bool(_YEAR_ASKED.search(focus))
    q.untimed = asks_untimed_number(focus)
    noun = asked_noun(focus)
    q.kind = next(iter(stems([noun])), "") if noun else ""
    q.context = context
    q.support = [t for t in content_terms(context) if t not in q.terms]
    q.support += [t for t in cited if t not in q.terms and t not in q.support]
    q.names = name_groups(question_text) + name_groups(context.replace(";", ","))
    # a task followed by the question that elaborates it ("Analyze why X … What made him …?") is asked
    # as the task
    task_led = bool(body) and body[0] not in questions and _TASK.match(body[0]) is not None
    q.answer_type = answer_type or expected_type(body[0] if task_led else focus)
    q.circumstance = q.answer_type == "date" and asks_circumstance(focus)
    q.frequency = asks_frequency(focus)
    q.name_terms = {t for run in name_runs(question_text) for t in content_terms(run)} - cited - _ATTRIBUTING
    # an option the question writes ("a --sort option") names one thing, however common its word ("sort")
    q.name_terms |= {t for m in _OPTION_WRITTEN.finditer(question_text) for t in terms(m.group(0))[:1]}
    # so does an identifier ("export_json", "LOGIN_TIMEOUT"): all its parts, whose other spellings are other things
    q.name_terms |= {t for m in _IDENTIFIER_WRITTEN.finditer(question_text) for t in terms(m.group(0))}
    q.options = options
    q.qualifiers = set(content_terms(" ".join(type_qualifiers(focus)))) & q.name_terms
    # "a multi-part extension such as tar.gz": the example illustrates the kind asked about; a passage about the
    # kind answers without it ("Files with multiple extensions can be found"), so it is no key
    q.examples = {t for m in _EXAMPLE.finditer(question_text) for t in terms(m.group(1) or m.group(2))}
    q.examples -= set(terms(without_examples(question_text)))  # what the question says besides stays asked
    q.name_terms -= q.examples
    return q


def with_collection(q: Question, weights: dict[str, float]) -> Question:
    """The question with the retriever's term weights. A name qualifying the asked kind ("In which Python
    version …") says which kind of answer is wanted, and the answer seldom repeats it ("Added in version
    3.4"): it is no key the answer must state, unless the documents never use it (then the question is
    about something they do not cover)."""
    q.collection = weights
    q.name_terms -= {t for t in q.qualifiers if weights.get(t) != 0}
    return q


_OPTION_WRITTEN = lazy_pattern(r"(?<![\w-])--[A-Za-z][\w-]*")
# an example the question gives: one written token after "such as", "like", "e.g.", "for example/instance";
# after "like" only a token shaped like a name (a digit, a capital, inner punctuation: "like UTF-16", not "like to")
_EXAMPLE = lazy_pattern(
    r"\b(?:such\s+as|e\.g\.,?|for\s+(?:example|instance),?)\s+([^\s,;?]+)"
    r"|\blike\s+((?=[^\s,;?]*(?:\d|[A-Z]|\w[._-]\w))[^\s,;?]+)"
)


def without_examples(text: str) -> str:
    """The text without the examples it gives ("a multi-part extension such as tar.gz" -> "a multi-part
    extension"): a statement about the kind states it of every instance."""
    return _EXAMPLE.sub(" ", text)


_IDENTIFIER_WRITTEN = lazy_pattern(r"(?<![\w$.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
DOCUMENT_NOUNS = (
    "guide|manual|documentation|docs|readme|faq|changelog|spec|specification|standard|article|handbook"
    "|tutorial|page|document|paper|report|notes|pep|rfc|how-to"
)
_ATTRIBUTION = lazy_pattern(
    r"\b(?:according to|as (?:stated|described|defined|specified|documented) (?:in|by))\s+([^,;?]+)"
    # "In the Harbor guide, …": a leading phrase naming a document
    rf"|^\s*in\s+((?:the\s+)?[^,;?]{{0,60}}\b(?:{DOCUMENT_NOUNS}))\s*,",
    re.I,
)


def attributed_terms(text: str) -> set[str]:
    """The terms of the source a question cites ("… according to the manual", "as described in RFC 9110")."""
    return {t for m in _ATTRIBUTION.finditer(text) for t in content_terms(m.group(1) or m.group(2))}


_NAME_STEMS = frozenset(stems(["name"]))
_ATTRIBUTING = frozenset(stems(["according"]))  # "According to X, …" opens a sentence capitalised
_TASK = lazy_pattern(
    r"^\s*(?:explain|analy[sz]e|compare|contrast|describe|discuss|trace|evaluate|assess|summari[sz]e|outline)\b",
    re.I,
)
_YEAR_ASKED = lazy_pattern(r"\b(?:which|what)\s+years?\b", re.I)
_HOW = lazy_pattern(r"\bhow\s+(long|much|many|often|far|big|large|old|soon|fast|high|tall|wide|deep)\b", re.I)


def _how_words(focus: str) -> set[str]:
    """The adverb of "how long/much/many/often …": the kind of answer asked for, not what it is about."""
    return set(stems([m.group(1).lower() for m in _HOW.finditer(focus)]))


_IMPERATIVE_NAME = lazy_pattern(r"^\s*(?:please\s+)?(?:name|identify|list)\b", re.I)


_WORD = lazy_pattern(r"[A-Za-z]+")


def light_inflections(text: str) -> set[str]:
    """The stems of light verbs the question writes inflected ("Where is the cache *kept*?", "… *made*
    …"): a verb that carries no content, so no answer need state it. A bare form may name a thing (the
    "make" tool, "the use of …") and stays a term."""
    return {
        t
        for word in _WORD.findall(text)
        if word.lower() not in LIGHT_VERBS
        for t in terms(word)
        if t in LIGHT_STEMS
    }


def content_terms(text: str) -> list[str]:
    """Stemmed content words of a question, without question-framing words, in first-seen order. "name"
    is framing only as the request "Name the …" ("the archive name" is content)."""
    framing = FRAMING if _IMPERATIVE_NAME.match(text) else FRAMING - _NAME_STEMS
    # a hyphenated word counts through its parts ("aura-city" → aura, citi), not three times; a short
    # option ("-f") is a term of its own
    return list(dict.fromkeys(t for t in terms(text) if t not in framing and ("-" not in t or t[0] == "-")))


def name_groups(text: str) -> list[list[str]]:
    """Terms of each multi-word proper name: a sentence naming any part of it mentions the entity."""
    groups = []
    for run in name_runs(text):
        toks = [t for t in content_terms(run) if t not in _TITLES]
        if len(toks) >= 2:
            groups.append(toks)
    return groups


def _guess_act(text: str, polar: bool) -> str:
    low = text.lower()
    if _COMPARE.search(low):
        return "compare"
    if polar:
        return "evaluate"
    if re.match(r"\s*(?:which|who|whom|name|identify)\b", low):
        return "identify"
    if _STEPS.search(low):
        return "implement"
    if re.match(r"\s*(?:what is|what are|define)\b", low):
        return "define"
    if re.match(r"\s*(?:why|explain)\b", low):
        return "explain"
    return "describe"
