"""gs-symbolic's explicit-statement checks: a proposition (subject + predicate) stated by one clause.

Golden cases written for these tests (no story of the eval suites): each question must be answered from
the sentence that states it, or refused with the exact no-context sentence when no sentence does.
"""

from __future__ import annotations

import answer_support
import pytest
from mrpvm.plugins.gs_symbolic.propositions import read_question
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER


def unit(n: int, claim: str, **kw) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=f"kb::chunk-000::unit-{n:03d}",
        sourceId="kb",
        chunkId="kb::chunk-000",
        kuType="atomic",
        role="Description",
        topic=kw.pop("topic", "kb"),
        claim=claim,
        unitIndex=n,
        **kw,
    )


def solve(question: str, claims: list[str], *, output: str = "yes/no", context: str = "") -> CnlDocument:
    units = [unit(i, c) for i, c in enumerate(claims)]
    return answer_support.solve(
        IntentGroup(index=1, act="evaluate", intent=question, output=output, context=context), units
    )


def verdict(question: str, claims: list[str], **kw) -> str:
    doc = solve(question, claims, **kw)
    if doc.result.status == "no-context":
        assert doc.answer == NO_CONTEXT_ANSWER and doc.sources == []
        return "refused"
    assert doc.result.status == "success", doc.answer
    return doc.answer.split(".")[0]


KETTLE = [
    "The Aurora T3 is a glass kettle for shared kitchens.",
    "Its jug holds 1.5 litres and rests on a cordless base. The heating plate reaches boiling point in three minutes.",
    "Never clean the T3 with bleach, because bleach clouds the glass.",
    "The T3 does not need a filter and switches off when the jug is lifted.",
]
SCANNERS = [
    "The Lumen S2 is a document scanner for home offices.",
    "It scans 30 pages per minute. The S2 is set up through a desktop app and works without an internet connection.",
    "The Lumen S8 is a document scanner for print shops.",
    "The S8 is managed only through the Lumen web portal, so it requires a Lumen portal login.",
    "Neither scanner has a built-in printer.",
]
SERVICES = [
    "The billing service depends on the ledger database.",
    "The search service does not depend on the ledger database.",
    "If the disk fills up, the uploader rejects new files.",
    "The archiver may compress old invoices.",
    "The mailer lacks a retry limit.",
    "The importer runs without a cache and writes plain files.",
    "The gateway, which restarts nightly, keeps sessions in memory.",
    "Operators must not delete the audit table.",
    "Ines Duarte approved the rollout plan.",
    "The proxy would drop requests if the pool were empty.",
    "Unless the licence is renewed, the dashboard stops working.",
]
TALE = [
    "Mara Venn crossed the salt flats at night to reach the harbour town of Esk.",
    "She carried a sealed letter from the council, which she had sworn never to open.",
    "The harbour master refused to let her board the ship without a permit.",
    "Had the letter been lost, the council would have fallen.",
]


@pytest.mark.parametrize(
    ("question", "claims", "expected"),
    [
        # a command with "never" answers "Can I …" (generic subject), modifiers in any order
        ("Can I clean the T3 with bleach?", KETTLE, "No"),
        ("Can I use bleach to clean the T3?", ["Never use bleach to clean the T3."], "No"),
        ("Should I descale the kettle with citric acid?", ["Descale the kettle with citric acid."], "Yes"),
        # auxiliary inversion and inflection: "Does X require Y" ↔ "X requires Y"; a pronoun subject
        ("Does the Lumen S8 require a portal login?", SCANNERS, "Yes"),
        ("Is the S8 managed through the Lumen web portal?", SCANNERS, "Yes"),
        # a possessive opening a sentence resolves to the previous sentence's subject
        ("Does the jug hold 1.5 litres?", KETTLE, "Yes"),
        ("Does the jug rest on a cordless base?", KETTLE, "Yes"),
        # the first sentence of a unit takes its antecedent from the unit before it
        ("Does the Lumen S2 scan 30 pages per minute?", SCANNERS, "Yes"),
        # negation: not, neither, lack; its scope stops at a coordinator
        ("Does the T3 need a filter?", KETTLE, "No"),
        ("Does the T3 switch off when the jug is lifted?", KETTLE, "Yes"),
        ("Does either scanner have a built-in printer?", SCANNERS, "No"),
        ("Does the mailer have a retry limit?", SERVICES, "No"),
        ("Does the search service depend on the ledger database?", SERVICES, "No"),
        ("Does the billing service depend on the ledger?", SERVICES, "Yes"),
        ("Does the importer write plain files?", SERVICES, "Yes"),
        ("Does the importer run without a cache?", SERVICES, "Yes"),
        ("Can the S2 work without an internet connection?", SCANNERS, "Yes"),
        ("Does the S2 work with an internet connection?", SCANNERS, "No"),
        # the main clause resumes after a relative clause; the relative clause has the same subject
        ("Does the gateway keep sessions in memory?", SERVICES, "Yes"),
        ("Does the gateway restart nightly?", SERVICES, "Yes"),
        ("Can I delete the audit table?", SERVICES, "No"),
        # irregular past forms and a shorter form of the name
        ("Did Ines approve the rollout plan?", SERVICES, "Yes"),
        ("Is it true that the billing service depends on the ledger database?", SERVICES, "Yes"),
        # a conditional question answered by the sentence that states exactly that conditional
        ("If the disk fills up, does the uploader reject new files?", SERVICES, "Yes"),
        ("Would the proxy drop requests if the pool were empty?", SERVICES, "Yes"),
        ("If the licence is not renewed, does the dashboard stop working?", SERVICES, "Yes"),
        # an inverted counterfactual condition ("Had X been …, Y would …") states exactly that conditional
        ("If the letter had been lost, would the council have fallen?", TALE, "Yes"),
        ("Would the council have fallen if the letter had been lost?", TALE, "Yes"),
        ("Did Mara Venn cross the salt flats?", TALE, "Yes"),
        ("Did the harbour master refuse to let her board?", TALE, "Yes"),
    ],
)
def test_states_the_answer(question: str, claims: list[str], expected: str) -> None:
    assert verdict(question, claims) == expected


@pytest.mark.parametrize(
    ("question", "claims"),
    [
        ("Does the ledger database depend on the billing service?", SERVICES),  # relation reversed
        ("Does the heating plate of the T3 clean the glass?", KETTLE),  # words nearby, no statement
        ("Does the T3 cost 40 euros?", KETTLE),
        ("Does the S2 require a portal login?", SCANNERS),  # stated of the other model
        ("Does the Lumen S2 require a Lumen portal login?", SCANNERS),
        ("Does the T3 hold 1.5 litres?", KETTLE),  # the jug does, by its own statement
        ("Does the glass clean bleach?", KETTLE),  # a subject that is the object of the statement
        ("If the disk is empty, does the uploader reject new files?", SERVICES),  # another condition
        ("Would the proxy drop requests?", SERVICES),  # a prediction stated only under a condition
        ("Would the billing service depend on the ledger if Ines left?", SERVICES),  # unstated conditional
        ("Had the ledger failed, would the billing service stop?", SERVICES),
        ("Were the ledger to fail, would the mailer retry?", SERVICES),
        ("Would the search service be faster instead of the billing service?", SERVICES),  # counterfactual
        ("Did Marco Duarte approve the rollout plan?", SERVICES),  # another person
        ("Does the mailer need a filter?", SERVICES),
        ("Would the council have fallen?", TALE),  # only under the stated condition
        ("Did Mara open the letter?", TALE),
        ("Did the harbour master let Mara board the ship?", TALE),
        ("Did Mara cross the desert?", TALE),
    ],
)
def test_refuses_what_no_sentence_states(question: str, claims: list[str]) -> None:
    assert verdict(question, claims) == "refused"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Does the uploader reject new files?", "Yes, if the disk fills up."),
        ("Does the dashboard stop working?", "Yes, unless the licence is renewed."),
        ("Does the proxy drop requests?", "Possibly, if the pool were empty."),
    ],
)
def test_a_statement_true_under_a_condition_answers_with_it_weakly(question: str, expected: str) -> None:
    """Issue 20: the condition is what the answer holds under, quoted (polar_reader.py), never `success`."""
    doc = solve(question, SERVICES)
    assert doc.answer.startswith(expected), doc.answer
    assert doc.result.status != "success"


def test_contradicting_clauses_give_no_answer() -> None:
    claims = ["The relay supports IPv6.", "The relay, unlike the hub, does not support IPv6."]
    assert verdict("Does the relay support IPv6?", claims) == "refused"


def test_pronoun_question_uses_the_intent_context() -> None:
    assert verdict("Does it require a portal login?", SCANNERS, context="Lumen S8") == "Yes"
    assert verdict("Does it require a portal login?", SCANNERS) == "refused"


def test_one_word_subject_answer_resolves_the_pronoun() -> None:
    doc = solve("Which scanner requires a portal login?", SCANNERS, output="single word")
    assert doc.result.status == "success"
    assert doc.answer in ("S8", "Lumen S8")  # "… so it requires …": "it" is the S8 of the clause before
    doc = solve("Which service depends on the ledger database?", SERVICES, output="single word")
    assert doc.answer.lower() == "billing service"  # the denied statement supplies nothing


def test_which_of_the_n_asks_for_a_subject_and_refuses_without_one() -> None:
    assert verdict("Which of the two scanners has the longer cable?", SCANNERS, output="single word") == (
        "refused"
    )


@pytest.mark.parametrize(
    ("question", "subject", "predicate"),
    [
        ("Does the Lumen S8 require a portal login?", ["Lumen", "S8"], {"requir", "portal", "login"}),
        ("Can I clean the T3 with bleach?", [], {"clean", "t3", "bleach"}),
        ("Is the heating plate of the T3 hot?", ["heating", "plate"], {"hot"}),
    ],
)
def test_question_reading(question: str, subject: list[str], predicate: set[str]) -> None:
    first = (read_question(question) or [None])[0]
    assert first is not None
    assert [t.text for t in first.subject] == subject
    assert first.predicate == predicate
    assert first.generic == (subject == [])


def test_codes_keep_sentences_about_other_models_out_of_a_free_answer() -> None:
    claims = [
        "Fault F2 means the lid is open. Fault F5 means the heater failed; unplug the unit and wait ten minutes.",
    ]
    doc = solve("What does fault F2 mean?", claims, output="paragraph")
    assert "lid is open" in doc.answer and "F5" not in doc.answer


def test_a_generic_question_needs_its_verb_stated_and_keep_doing_asks_about_the_doing() -> None:
    names = ["The user name is fixed when the account is created.", "Aliases can be added at any time."]
    assert verdict("Can I change my user name?", names) == "refused"  # the nouns match, the verb does not
    keys = [
        "Release 7.2 added SHA-2 signatures, and existing RSA keys will automatically use the stronger algorithm.",
        "The relay restarts every night.",
    ]
    # "keep using" asks whether they can be used; the scene ("after release 8.8 …") is not the proposition
    assert verdict("Can I keep using my existing RSA keys after release 8.8 disabled SHA-1?", keys) == "Yes"
    assert verdict("Can I keep using my existing DSA keys?", keys) == "refused"


@pytest.mark.parametrize(
    ("question", "claims"),
    [
        ("Does the archiver compress old invoices?", SERVICES),
        ("Does the Lumen S8 require a Lumen login?", ["The Lumen S8 may require a Lumen login."]),
    ],
)
def test_a_hedged_statement_answers_possibly_never_yes(question: str, claims: list[str]) -> None:
    """A hedge ("may") is read, not dropped: the answer says as much as the sentence does, and quotes it."""
    assert verdict(question, claims) == "Possibly"
