"""A question word the passage states by a near-synonym counts toward its coverage (issue 20: false refusals
where the question paraphrases the answering sentence).

"Above what size does a photo get divided into pieces?" shares no stem with "Each image larger than 40 MB is
split into parts before it is sent." (photo/image, divided/split, pieces/parts, size/larger), and its
sentence cosine (0.49) is under the meaning gate: main refused it. Soft term matching counts a question word
covered when a word of the passage is its near-synonym by MiniLM's word embedding (>= unsaid.SYNONYM). A
word that is only a relative ("video" / "image") or another action ("merged" / "split") does not count."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.gs_symbolic.soft_terms import words
from mrpvm.protocol.vocab import NO_CONTEXT_ANSWER

GUIDE = """# Tarnwick user guide

## Storage

Tarnwick writes its scratch data to the directory named by `TARNWICK_TMP`. When that variable is unset, the
folder `~/.tarnwick/tmp` is used. Old scratch data is deleted after seven days.

## Transfers

A transfer copies every new picture from the card to the server. Each image larger than 40 MB is split into
parts before it is sent. Up to four transfers run at the same time.

## Albums

To modify the title of an album, open it and click the pencil beside its name. Hidden albums are never
mirrored.
"""


def _ask(question: str) -> str:
    return ask(question, units_of(GUIDE, "guide.md")).answer or ""


def test_plain_words_only() -> None:
    # names, options, paths, code and numbers are matched by their own tokens, never by meaning
    assert words("Set `minify` to false in ~/.config/app or pass --fast to app.run() for 40 MB images") == [
        "set",
        "false",
        "pass",
        "images",
    ]


@needs_model
def test_a_paraphrased_question_is_answered() -> None:
    assert "40 MB" in _ask("Above what size does a photo get divided into pieces?")
    long = "Our trips produce lots of photos and some are huge. Above what size does a photo get divided into pieces?"
    assert "40 MB" in _ask(long)


@needs_model
def test_a_relative_or_another_action_is_no_synonym() -> None:
    assert _ask("Above what size does a video get divided into pieces?") == NO_CONTEXT_ANSWER
    assert _ask("Above what size does a photo get merged into one file?") == NO_CONTEXT_ANSWER
