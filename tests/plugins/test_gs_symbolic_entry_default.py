"""A default stated in its own sentence after a field's description ("Defaults to `gentle`." under the field
`boil_mode`) states that field's default: for a question asking the default, the field's name counts as the
sentence's own words, so another unit's sentence that merely names the field ("If the `boil_mode` is not
understood:") does not outrank it (issue 20 item 4). Document invented.
"""

from __future__ import annotations

from answer_support import ask, units_of

KETTLE = """# Kettle API

## Create a kettle

```http
POST /api/v1/kettles HTTP/1.1
```

Create a new kettle.

### Form data parameters

name
: String. The name of the kettle.

boil_mode
: String. One of `gentle`, `rolling`, or `off`. Defaults to `gentle`.

### Response

#### 422: Unprocessable entity

If the `boil_mode` is not understood:

```json
{
  "error": "'fierce' is not a valid boil_mode"
}
```
"""


def test_a_default_in_its_own_sentence_answers_for_its_field() -> None:
    doc = ask("What boil mode does a new kettle get if I don't set one?", units_of(KETTLE, "kettle.md"))
    assert doc.answer is not None and "Defaults to `gentle`" in doc.answer, doc.answer
    assert "not understood" not in doc.answer


def test_a_question_not_asking_a_default_is_answered_as_before() -> None:
    doc = ask(
        "Which error does the server send back for an unknown boil mode?", units_of(KETTLE, "kettle.md")
    )
    assert doc.answer is not None and "not a valid boil_mode" in doc.answer, doc.answer
