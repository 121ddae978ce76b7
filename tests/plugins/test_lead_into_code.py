"""A lead-in that says what the code block after it shows (issue 20: false refusals).

An API reference lists error replies as a lead-in and a block: "If the `date` is missing:" over the JSON the
server answers. The lead-in alone shares only a word or two with "What error comes back when I create a
booking without a date?"; the block holds the rest (the error). The lead-in is scored with the block's words
and the block is quoted with it. A question about an error the reference never shows stays refused."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

REFERENCE = """# Bookings API

Reserve rooms of the Harbour Lane co-working house.

## Create a booking

```http
POST /api/v2/bookings HTTP/1.1
```

Creates a booking for one room and one day.

### Responses

##### 200: OK

The booking was stored.

##### 422: Unprocessable entity

If the `date` is missing:

```json
{
  "fault": "Validation failed: Date can't be blank"
}
```

If the `room` does not exist:

```json
{
  "fault": "Record not found"
}
```
"""


def _answer(question: str) -> str:
    return ask(question, units_of(REFERENCE, "bookings.md")).answer


@needs_model
def test_the_block_a_lead_in_introduces_answers() -> None:
    answer = _answer("Which fault comes back when I create a booking without a date?")
    assert "Date can't be blank" in answer, answer
    assert "Record not found" not in answer


@needs_model
def test_an_error_never_shown_is_refused() -> None:
    assert _answer("Which fault comes back when the payment card is declined?") == NO_CONTEXT_ANSWER
