"""Task signals a planner reads from the turn: acts, symbolic cues, sub-questions (no LLM, no clock).

Cue words are read from what the user asked (each intent's text and its context phrases), never from the
Criterion/Evidence lines a seed detector writes from templates (an explain criterion says "causes", which
is not a relation cue of the question). The knowledge profile (counted by the kernel from unit fields)
says whether the knowledge in scope is rich in symbolic facts; relational questions over such knowledge
favour relation-sensitive retrieval.
"""

from __future__ import annotations

import re

import msgspec
from mrpvm.plugins.sdk.answer_types import expected_type
from mrpvm.plugins.sdk.text import terms, words
from mrpvm.protocol.document import IntentGroup
from mrpvm.protocol.envelope import KnowledgeProfile

# Words that signal a relation between things: multi-hop, dependency or causal reasoning.
RELATION_WORDS = frozenset(
    [
        "depend",
        "depends",
        "depended",
        "dependent",
        "dependency",
        "dependencies",
        "relevant",
        "relevance",
        "irrelevant",
        "relate",
        "relates",
        "related",
        "relation",
        "relations",
        "relationship",
        "relationships",
        "cause",
        "causes",
        "caused",
        "causing",
        "because",
        "lead",
        "leads",
        "led",
        "affect",
        "affects",
        "affected",
        "impact",
        "impacts",
        "connect",
        "connects",
        "connected",
        "connection",
        "link",
        "links",
        "linked",
        "chain",
        "chains",
        "implies",
        "imply",
        "implied",
        "consequence",
        "consequences",
        "prerequisite",
        "prerequisites",
        "require",
        "requires",
        "required",
        "indirectly",
        "transitively",
        "underlying",
        "enable",
        "enables",
        "enabled",
    ]
)
# Words that signal a comparison.
COMPARE_WORDS = frozenset(
    [
        "compare",
        "compared",
        "comparing",
        "comparison",
        "versus",
        "vs",
        "difference",
        "differences",
        "differ",
        "differs",
        "better",
        "worse",
        "tradeoff",
        "tradeoffs",
        "trade-off",
        "trade-offs",
        "advantage",
        "advantages",
        "disadvantage",
        "disadvantages",
        "pros",
        "cons",
        "similar",
        "similarity",
        "similarities",
        "contrast",
    ]
)
EXPLAIN_WORDS = frozenset(["explain", "explains", "explanation", "why", "how"])
# Relation verbs of the symbolic fact vocabulary (DS005): a cue only when the knowledge holds such facts.
FACT_WORDS = frozenset(
    [
        "provide",
        "provides",
        "provided",
        "providing",
        "use",
        "uses",
        "used",
        "using",
        "support",
        "supports",
        "supported",
        "benefit",
        "benefits",
        "capability",
        "capabilities",
        "part",
        "instance",
    ]
)
# Knowledge is "symbolic" when enough of its atomic units carry a triple.
MIN_FACTS = 3
MIN_FACT_SHARE = 0.25
FACTUAL_ACTS = frozenset({"define", "identify", "describe", "evaluate", "verify"})
EXPLAIN_ACTS = frozenset({"explain", "diagnose", "recommend"})
_WH = r"(?:what|why|how|when|where|which|who|whom|whose|is|are|does|do|can|should)"
_JOINED_QUESTION = re.compile(rf"(?:\band\b|;|,)\s+(?:also\s+)?{_WH}\b", re.IGNORECASE)
SHORT_FACTUAL_WORDS = 10
_SUBORDINATORS = frozenset(
    [
        "if",
        "when",
        "whenever",
        "after",
        "before",
        "once",
        "since",
        "because",
        "while",
        "although",
        "though",
        "unless",
        "given",
        "with",
    ]
)


def task_kind(intent: IntentGroup) -> str:
    """`act/answer-type` of one intent (e.g. `describe/number`), or the act alone when the type is
    unknown: the finest key the planner learns under."""
    kind = expected_type(intent.intent)
    return f"{intent.act}/{kind}" if kind else intent.act


class TaskSignals(msgspec.Struct, kw_only=True):
    acts: list[str]
    terms: list[str]
    intent_count: int
    relation_cues: int
    multi_hop: bool
    comparative: bool
    explanatory: bool
    short_factual: bool
    sub_questions: dict[str, int]  # intent ref -> number of questions it holds
    kinds: list[str] = []  # task_kind of each intent: learned utility is looked up by these first
    symbolic_knowledge: bool = False  # the knowledge in scope is rich in symbolic facts
    relational: bool = False  # a relational/causal question over symbolic knowledge

    @property
    def compound_intents(self) -> bool:
        """Every intent holds two or more questions the seed detector did not split."""
        return bool(self.sub_questions) and all(n >= 2 for n in self.sub_questions.values())

    @property
    def several_sub_questions(self) -> list[str]:
        return [ref for ref, n in sorted(self.sub_questions.items()) if n >= 2]

    @property
    def multi_part(self) -> bool:
        return self.intent_count >= 2 or bool(self.several_sub_questions)

    def describe(self) -> str:
        cues = [
            name
            for name, on in (
                ("multi-hop", self.multi_hop),
                ("relational over symbolic facts", self.relational and not self.multi_hop),
                ("comparison", self.comparative),
                ("explanation", self.explanatory),
                ("short factual", self.short_factual),
                ("multi-part", self.multi_part),
            )
            if on
        ]
        return ", ".join(cues) or "none"


def count_questions(text: str) -> int:
    """How many questions one intent text holds: question marks, or questions joined by 'and'/','/';'."""
    marks = text.count("?")
    if marks >= 2:
        return marks
    first = words(text[:40])[:1]
    if marks == 0 and not (first and re.fullmatch(_WH, first[0])):
        return 1  # a statement or an instruction, not a question
    count = 1
    start = 0
    for m in _JOINED_QUESTION.finditer(text):
        before = words(text[start : m.start()])
        # "If I don't pass -f, where …": a clause that sets a condition before the question is not one
        if before and before[0] not in _SUBORDINATORS:
            count += 1
        start = m.start()
    return count


def symbolic(knowledge: KnowledgeProfile | None) -> bool:
    if knowledge is None or knowledge.symbolicFacts < MIN_FACTS:
        return False
    return knowledge.symbolicFacts >= MIN_FACT_SHARE * max(1, knowledge.atomicUnits)


def read_signals(
    prompt: str, intents: list[IntentGroup], knowledge: KnowledgeProfile | None = None
) -> TaskSignals:
    """Signals from the intents (post-seed) or from the raw prompt (pre-seed, no intents yet)."""
    texts = [f"{i.intent} {i.context}" for i in intents] or [prompt]
    all_words = [w for t in texts for w in words(t)]
    word_set = set(all_words)
    acts = sorted({i.act for i in intents})
    relation_cues = sum(1 for w in all_words if w in RELATION_WORDS)
    multi_hop = (
        ("why" in word_set and relation_cues >= 1)
        or bool(
            word_set
            & {"depend", "depends", "dependency", "dependencies", "indirectly", "transitively", "chain"}
        )
        or relation_cues >= 2
    )
    comparative = "compare" in acts or bool(word_set & COMPARE_WORDS)
    explanatory = bool(set(acts) & EXPLAIN_ACTS) or bool(word_set & EXPLAIN_WORDS)
    subq = (
        {i.ref: count_questions(i.intent) for i in intents}
        if intents
        else {"prompt": count_questions(prompt)}
    )
    symbolic_kb = symbolic(knowledge)
    relational = symbolic_kb and (
        multi_hop
        or relation_cues >= 1
        or bool(word_set & FACT_WORDS)
        or "why" in word_set
        or "explain" in acts
    )
    short = (
        not multi_hop
        and not relational
        and not comparative
        and (not acts or set(acts) <= FACTUAL_ACTS)
        and all(len(words(t)) <= SHORT_FACTUAL_WORDS for t in ([i.intent for i in intents] or [prompt]))
        and all(n == 1 for n in subq.values())
        and not (word_set & EXPLAIN_WORDS)
    )
    return TaskSignals(
        acts=acts,
        terms=sorted(set(terms(" ".join(texts)))),
        intent_count=len(intents),
        relation_cues=relation_cues,
        multi_hop=multi_hop,
        comparative=comparative,
        explanatory=explanatory,
        short_factual=short,
        sub_questions=subq,
        kinds=sorted({task_kind(i) for i in intents}),
        symbolic_knowledge=symbolic_kb,
        relational=relational,
    )
