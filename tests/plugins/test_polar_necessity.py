"""A yes/no question under a negated condition, answered by a stated necessity (issue 20: false refusals).

"Can I add a book to a shelf if I am not borrowing it?" over "Add books to the given shelf. Note that the
reader must be borrowing these books.": the necessity, negated, answers No (the best candidate: the
inference is the reader's). A condition that is not negated, a necessity of another action, or a condition
the necessity does not name leave the question refused."""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.polar_necessity import necessity_verdict
from mrpvm.plugins.gs_symbolic.question import analyse
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

API = """# Shelves API

Shelves group the books a reader keeps together.

## Add books to a shelf

```http
POST /api/v3/shelves/:id/books HTTP/1.1
```

Add books to the given shelf. Note that the reader must be borrowing these books.

**Returns:** Empty

## Remove books from a shelf

```http
DELETE /api/v3/shelves/:id/books HTTP/1.1
```

Remove books from the given shelf. The books stay in the reader's history.

## Rename a shelf

```http
PUT /api/v3/shelves/:id HTTP/1.1
```

Rename the given shelf. Any title may be used.
"""


def _ask(question: str) -> tuple[str, str]:
    doc = ask(question, units_of(API, "shelves.md"))
    return doc.result.status, doc.answer or ""


def test_the_negated_necessity_answers_no() -> None:
    status, answer = _ask("Can I add a book to a shelf if I am not borrowing it?")
    assert answer.startswith("No.") and "must be borrowing" in answer, answer
    assert status == "insufficient"  # weak: the reader's inference, not a sentence's


def test_no_answer_without_the_necessity_of_the_asked_case() -> None:
    for question in (
        "Can I add a book to a shelf if I am borrowing it?",  # the condition met: the necessity says nothing
        "Can I rename a shelf if I am not borrowing any book?",  # another action's necessity
        "Can I remove a book from a shelf if I am not borrowing it?",
        "Can I add a book to a shelf if I don't own it?",  # a condition the necessity does not name
    ):
        assert _ask(question)[1] == NO_CONTEXT_ANSWER, question


def test_bad_input() -> None:
    q = analyse("Can I add a book if I am not borrowing it?", None, "", [], "", "yes-no")
    assert necessity_verdict(q, [], {}) is None  # no evidence
    plain = analyse("Can I add a book?", None, "", [], "", "yes-no")
    assert necessity_verdict(plain, [], {}) is None  # no condition
