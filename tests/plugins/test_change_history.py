"""A change history's lines are records of events (gs_symbolic/history.py, session 23).

An API reference lists under each endpoint a "Version history" of lines like "2.4.0 - added `colour`": a
version label, then a change verb. Such a line shares the setting's name with any question about it, but
says only when the setting came in: it answers "In which version was colour added?", never "Which colour
does a new board get?" (it was quoted as that answer, `success`). And a NEWS entry under "release 2.1" that
ends "[bug introduced in ferry-1.3]" was fixed in 2.1: for "In which version was … fixed?" the version the
sentence gives to another event is not the answer, the release heading the entry stands under is.
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.plugins.gs_symbolic.history import asked_event, change_record, other_events_versions

BOARDS = """# Boards API

## Create a board

```http
POST /api/v2/boards HTTP/1.1
```

Create a new board for the signed-in user.

**Returns:** Board\\
**Scope:** `write:boards`\\
**Version history:**\\
1.0.0 - added\\
2.4.0 - added `colour`\\
2.6.0 - added `archived`

### Form data parameters

name
: String. The name shown on the board's tab.

colour
: String. One of `red`, `green` or `grey`. Defaults to `grey` when the request leaves it out.

archived
: Boolean. Whether the board starts hidden from the sidebar.

## Delete a board

```http
DELETE /api/v2/boards/:id HTTP/1.1
```

Remove a board and every card on it.

**Version history:**\\
1.0.0 - added
"""

NEWS = """Ferry NEWS                                    -*- outline -*-

* Noteworthy changes in release 2.1 (2024-02-01) [stable]

** Bug fixes

  ferry no longer truncates a transfer log whose file name holds a colon.
  [bug introduced in ferry-1.3]

** New features

  ferry now accepts the --resume option, which continues an interrupted copy.


* Noteworthy changes in release 2.0 (2023-05-05) [stable]

** Changes in behavior

  ferry now keeps partial files after a failed copy.

  ferry --version now prints the build date next to the version number.
"""


def test_a_version_label_then_a_change_verb_is_a_change_record() -> None:
    assert change_record("2.4.0 - added `colour`")
    assert change_record("v1.2: Removed the --fast flag")
    assert change_record("0.9.1 (2019-04-01) — deprecated")
    assert change_record("* 1.0.2: Added -K option for the wrapper")
    # a sentence about a version, or a change told as prose, records no event of a change log
    assert not change_record("Version 2.4.0 of the API is the last to accept form data.")
    assert not change_record("The colour was added for dark themes.")
    assert not change_record("2.4 GB of memory is enough - added swap helps.")


def test_a_history_line_is_not_the_answer_to_a_question_about_the_setting() -> None:
    answer = ask("What colour has a board when created?", units_of(BOARDS))
    assert "2.4.0 - added" not in answer.answer
    # the history line, as before, answers a question about the history
    history = ask("In which version was colour added?", units_of(BOARDS))
    assert history.result.status == "success"
    assert "2.4.0" in history.answer


def test_the_release_an_entry_stands_under_dates_its_fix() -> None:
    answer = ask("In which version was the bug that truncates a transfer log fixed?", units_of(NEWS, "NEWS"))
    assert answer.result.status == "success"
    assert answer.answer.startswith("2.1")
    # the event the sentence gives its version to is asked: that version answers
    came = ask(
        "In which version was the bug that truncates a transfer log introduced?", units_of(NEWS, "NEWS")
    )
    assert "ferry-1.3" in came.answer and not came.answer.startswith("2.1")


def test_versions_given_to_another_event_are_left_out() -> None:
    assert asked_event("In which version was the log problem fixed?") == "fixed"
    text = "Log names with a colon work again. [bug introduced in ferry-1.3]"
    assert "1.3" not in other_events_versions(text, "fixed")
    assert "1.3" in other_events_versions(text, "introduced")
    assert "1.3" in other_events_versions(text, "")  # no event asked: every version stays
    assert "2.0" not in other_events_versions("Broken since 2.0, now repaired.", "fixed")
    assert "3.1" in other_events_versions("The crash was fixed in 3.1.", "fixed")
