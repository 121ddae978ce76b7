"""The sentence of the chosen unit that carries what the question asks (issue 20 items 4-5, "right unit,
asked detail missing"; gs_symbolic/unit_detail.py):

- a sentence that repeats the question's words but writes a literal the question does not ("The merge
  operator is `|>>`.") is no echo of the question: it states the answer;
- so is the lead sentence of a glossary entry whose term the question does not write (the term answers);
- a sentence that refers back ("This only works when …") and states more of the question than its antecedent
  is quoted with its antecedent, not replaced by it;
- a lead-in that ends its unit over a table of rows ("Some glyphs have a short code." over `\\q - quench`)
  is quoted with the one row the question asks of;
- "How do I declare X?" answered by a sentence that only names X takes the next sentence, which refers back
  to it and tells the means ("These are declared by putting …");
- a Yes/No's verdict sentence that leads into a list ("… except for:") is quoted with its items.
The documents are invented."""

from __future__ import annotations

from answer_support import ask, needs_model, solve, units_of
from mrpvm.plugins.gs_symbolic.evidence import Sentence
from mrpvm.plugins.gs_symbolic.spans import named_antecedent
from mrpvm.plugins.gs_symbolic.windows import Passage
from mrpvm.plugins.sdk.text import terms
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit

STREAMS = """# Rivulet

## Streams

Rivulet reads events from named streams and writes them to sinks.

## Merging

The pipe merge joins two streams into one, keeping the order of their timestamps. The pipe merge operator
is `|>>`. A merged stream can be merged again.
"""

GLOSSARY = """Glossary
========

.. glossary::

   ``~>``
      The default waiting marker of the Rivulet console. Shown while a query is still open.

   ``=>``
      The marker of a finished query in the Rivulet console.
"""

GLYPHS = """# Glint

## Escapes

Glint strings are written between double quotes.

For convenience, some rare glyphs have a short code.

```
\\q   - quench          (G+0011)
\\w   - wobble          (G+0012)
\\y   - yodel           (G+0013)
\\z   - zigzag          (G+0014)
```

Any other glyph is written by its number.
"""

FRAMES = """# Stackfile

## Frame stacks

The remaining notation lets you declare frame stacks. These are declared by putting the stack's name between
double colons on a line of its own. Each later line with the same name adds a frame to that stack.

## Comments

A line that starts with a semicolon is a comment.
"""

NOTEBOOKS = """# Corvid privacy notice

## Private notebooks

Corvid staff do not read private notebooks without your permission except as this notice says and for:

* fraud investigations
* abuse reports from other users

## Cookies

Corvid sets one cookie to keep you signed in.
"""


@needs_model
def test_a_sentence_writing_a_literal_the_question_does_not_is_no_echo():
    doc = ask("What is the pipe merge operator?", units_of(STREAMS, "rivulet.md"))
    assert "|>>" in doc.answer  # main 755bd99: "The pipe merge joins two streams into one, …"


@needs_model
def test_a_glossary_term_the_question_does_not_write_is_the_answer():
    doc = ask(
        "What is the default waiting marker of the Rivulet console?", units_of(GLOSSARY, "glossary.rst")
    )
    assert "~>" in doc.answer  # main 755bd99: the "=>" entry, or the echoing sentence dropped


def _over_every_unit(question: str, text: str, name: str) -> CnlDocument:
    """gs-symbolic's answer with every atomic unit of the document as its evidence (the retriever's choice
    aside: a code block is handed over when its section is)."""
    group = IntentGroup(index=1, act="identify", intent=question, output="a short answer")
    return solve(group, [u for u in units_of(text, name) if u.kuType == "atomic"])


class _Judge:
    """What spans.named_antecedent asks of passages.Judge: every window answers, in no shaped type."""

    answer_type = "entity"
    default = False

    def answers(self, passage: Passage) -> bool:
        return True


def _sentence(text: str, index: int) -> Sentence:
    unit = KnowledgeUnit(id="u", sourceId="s", chunkId="c", kuType="atomic", role="Description", topic="t")
    return Sentence(text, unit, terms(text), (0, 0, index))


def test_a_referring_sentence_stating_more_of_the_question_keeps_its_place():
    lead = _sentence("zq{motion} Operator to trim a branch of the tree.", 0)
    only = _sentence('This only works when \'treemode\' is "static" or "pinned".', 1)
    # "Which tree modes does zq work with?": the referring sentence states all of it (with its antecedent's
    # words), the antecedent alone less than half, though it reads closer to the question as a whole
    referring = Passage([only], 1.15, 1.0, True, meaning=0.39)
    antecedent = Passage([lead], 0.55, 0.42, True, meaning=0.64)
    chosen = named_antecedent(referring, [referring, antecedent], _Judge())  # type: ignore[arg-type]
    assert chosen is referring  # main 755bd99: the antecedent alone, "Operator to trim a branch of the tree."
    kept = Passage([lead], 0.55, 1.0, True, meaning=0.64)  # an antecedent stating as much is still quoted
    assert named_antecedent(referring, [referring, kept], _Judge()) is kept  # type: ignore[arg-type]


@needs_model
def test_a_lead_in_over_a_table_is_quoted_with_the_asked_row():
    doc = _over_every_unit("Which short code stands for a wobble?", GLYPHS, "glint.md")
    assert "\\w" in doc.answer  # main 755bd99: the lead-in alone
    assert "quench" not in doc.answer and "yodel" not in doc.answer  # the asked row only


@needs_model
def test_a_lead_in_over_a_table_no_row_of_which_is_asked_stays_alone():
    doc = _over_every_unit("Which glyphs have a short code in Glint?", GLYPHS, "glint.md")
    assert "wobble" not in doc.answer or "quench" in doc.answer  # no one row picked for a question of all


@needs_model
def test_a_how_to_takes_the_sentence_telling_the_means():
    doc = _over_every_unit("How do I declare a frame stack?", FRAMES, "stackfile.md")
    assert "double colons" in doc.answer  # main 755bd99: "The remaining notation lets you declare …" only


@needs_model
def test_a_yes_no_verdict_that_leads_into_a_list_is_quoted_with_its_items():
    doc = ask(
        "Can Corvid staff read my private notebooks without my permission?", units_of(NOTEBOOKS, "c.md")
    )
    assert doc.answer.startswith("No.")
    assert "fraud investigations" in doc.answer  # main 755bd99: the lead-in cut at its colon
