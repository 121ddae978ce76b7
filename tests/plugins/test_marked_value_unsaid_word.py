"""A question asking for a figure, a version, a date or a duration that turns on a word the documents never
use is refused (session 22, eval/dev/dev18's "Which release added multithreaded compression to gzip?").

Before, such an answer was weak: the judge still quoted the best candidate, and a release heading gave it a
version ("2.3.0: … Compression of the transfer stream is now on by default."). A value of a marked type is an
answer only as the value of the thing asked; when the documents never say that thing (no occurrence, no
inflection, no synonym in the passage), the value quoted is another thing's, so the documents do not say it.
"""

from __future__ import annotations

from answer_support import ask, units_of
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

CHANGES = """# Changelog

## 2.4.0 (2024-05-02)

- kestrel sync no longer loses the last line of a file without a trailing newline.
- Added the `--mirror` option, which copies deletions to the target as well.

## 2.3.0 (2023-11-20)

- Added the `--dry-run` option: kestrel reports what it would copy without copying anything.
- Compression of the transfer stream is now on by default.

## 2.2.0 (2023-06-01)

- The KESTREL_OPTS environment variable is no longer read.
- Faster checksums of large files.
"""


def test_a_release_of_something_the_notes_never_name_is_refused():
    doc = ask("Which release added multithreaded compression?", units_of(CHANGES, "CHANGELOG.md"))
    assert doc.answer == NO_CONTEXT_ANSWER
    assert doc.result is not None and doc.result.status == "no-context"


def test_a_release_of_what_the_notes_say_is_still_answered():
    units = units_of(CHANGES, "CHANGELOG.md")
    made = ask("Which release made compression the default?", units)
    assert "2.3.0" in made.answer and made.result is not None and made.result.status == "success"
    # a paraphrase: every word of it is the notes' own or stands for one of theirs
    copied = ask("Which release added the option that copies deletions?", units)
    assert "2.4.0" in copied.answer and "--mirror" in copied.answer
