"""plugins/sdk/text.py: word tokens and the cached `terms` analyser."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.plugins.sdk import text
from mrpvm.plugins.sdk.lexicon import IRREGULAR
from mrpvm.plugins.sdk.text import (
    STOPWORDS,
    TERM_TOKEN,
    WORD_PATTERN,
    content_words,
    looks_like_code,
    markdown_pieces,
    stems,
    terms,
    trim_span,
    words,
)
from mrpvm.protocol import analysis


def reference_terms(value: str) -> list[str]:
    """The documented pipeline, uncached: a text of several words all in capitals in lower case; short
    options as they are; content words, apostrophes dropped, hyphen parts added, stemmed."""
    out: list[str] = []
    for token in TERM_TOKEN.findall(analysis.unshouted(value)):
        if token.startswith("-"):
            out.append(token)
            continue
        if token[0].isdigit() and "." in token:
            out += [token, token.split(".", 1)[0]]
            continue
        expanded: list[str] = []
        for word in content_words(token):
            word = IRREGULAR.get(word, word)
            expanded.append(word.replace("'", ""))
            if "-" in word:
                parts = word.split("-")
                numbers = all(p.isdigit() for p in parts)
                expanded.extend(
                    p for p in parts if (len(p) > 1 or (p.isdigit() and not numbers)) and p not in STOPWORDS
                )
        out.extend(stems(expanded))
    return out


@given(st.text(alphabet=st.sampled_from(list("abcdeXYZ '’-s.é0_\n")), max_size=80))
@settings(max_examples=300, deadline=None)
def test_cached_terms_equal_the_uncached_pipeline(value):
    first = terms(value)
    assert first == reference_terms(value)
    assert terms(value) == first  # served from the cache the second time


def test_terms_examples():
    assert terms("The runners' state-of-the-art shoes") == [
        "runner",
        "state-of-the-art",
        "state",
        "art",
        "shoe",
    ]
    assert terms("Bob’s ship and Bob's ship") == ["bob", "ship", "bob", "ship"]
    assert terms("a I of to") == []


def test_terms_keep_short_options_digits_and_naming_capitals():
    # "-f" and "-R" are options (case kept: "-r" is another one); "2" and "M" name things; "a", "I" do not
    assert terms("tar -f or -R, exit status 2, an M suffix") == [
        "tar",
        "-f",
        "-R",
        "exit",
        "status",
        "2",
        "m",
        "suffix",
    ]
    assert terms("a-b x -vkp 1-2") == ["a-b", "vkp", "1-2"]  # a cluster and a range are words
    # a dotted version is one term (and its major number): "3.12" is not "3" and "12"
    assert terms("GCC >= 10.1 and libstdc++ 6.0.28, v2.") == [
        "gcc",
        "10.1",
        "10",
        "libstdc",
        "6.0.28",
        "6",
        "v2",
    ]


def test_the_cache_is_bounded_and_clearing_it_changes_nothing(monkeypatch):
    monkeypatch.setattr(analysis, "_TERMS_CACHE_MAX", 3)
    monkeypatch.setattr(analysis, "_TERMS_CACHE", {})
    sentence = "lanterns harbour ferries timetables ships"
    expected = reference_terms(sentence)
    for _ in range(3):
        assert terms(sentence) == expected
        assert len(analysis._TERMS_CACHE) <= 3


@pytest.mark.parametrize(
    ("value", "tokens"),
    [
        ("state-of-the-art, don't stop", ["state-of-the-art", "don't", "stop"]),
        ("snake_case ends--here", ["snake", "case", "ends", "here"]),
        ("Éclair’s 42nd", ["éclair's", "42nd"]),
    ],
)
def test_word_pattern_and_words(value, tokens):
    assert words(value) == tokens
    assert [m.lower().replace("’", "'") for m in WORD_PATTERN.findall(value)] == tokens


@pytest.mark.parametrize(
    ("value", "a", "b", "expected"),
    [("  two words \n", 0, 13, "two words"), ("x\t\n ", 1, 4, ""), ("a b", 0, 3, "a b"), (" ab ", 2, 2, "")],
)
def test_trim_span(value, a, b, expected):
    start, end = trim_span(value, a, b)
    assert a <= start <= end <= b and value[start:end] == expected


def test_each_markdown_list_item_is_a_sentence_without_its_marker():
    from mrpvm.plugins.sdk.text import sentences

    text = (
        "1. Install it. Then build.\n"
        "- **One-shot**: stdin is JSON. Exit codes: 0 ok.\n"
        "* a lowercase item\n"
        "2) Run it\n"
        "Dr. Smith came.\n\n"
        "It fell -5 degrees. In 2020 we won."
    )
    assert sentences(text) == [
        "Install it.",
        "Then build.",
        "**One-shot**: stdin is JSON.",
        "Exit codes: 0 ok.",
        "a lowercase item",
        "Run it\nDr. Smith came.",  # no final punctuation: the line runs on
        "It fell -5 degrees.",
        "In 2020 we won.",
    ]


# --------------------------------------------------------------------------- Markdown pieces

MARKDOWN = """Every frame runs four phases:
| Phase | Plugin Type | What Happens |
|---|---|---|
| Seed Generation | sd-plugin | Extracts intents. |
Plan | mrp-plan-plugin | Builds a plan. |
After the table comes prose. It has two sentences.

```json
{"prompt": "x",
 "context": []}
```
"code": 2,
- first item
- second item
"""


def test_markdown_pieces_read_tables_as_statements_and_keep_code_apart():
    pieces = markdown_pieces(MARKDOWN)
    assert pieces == [
        ("Every frame runs four phases:", "sentence"),
        ("Seed Generation — Plugin Type: sd-plugin; What Happens: Extracts intents", "row"),
        ("Plan — Plugin Type: mrp-plan-plugin; What Happens: Builds a plan", "row"),
        ("After the table comes prose.", "sentence"),
        ("It has two sentences.", "sentence"),
        ('{"prompt": "x",\n "context": []}', "code"),
        ('"code": 2,', "code"),
        ("first item", "sentence"),
        ("second item", "sentence"),
    ]
    assert not any("|" in text or "---" in text for text, _ in pieces)


def test_rows_cut_off_from_their_header_use_the_given_columns():
    rows = markdown_pieces("| 4. Compose | (core) | Assembles. |", header=["Phase", "Type", "What"])
    assert rows == [("4. Compose — Type: (core); What: Assembles", "row")]
    # the header row itself, repeated in the text, is not a statement
    again = markdown_pieces(
        "| Phase | Type | What |\n| 1. Seed | sd | Detects. |", header=["Phase", "Type", "What"]
    )
    assert again == [("1. Seed — Type: sd; What: Detects", "row")]
    # without any header the cells are joined
    assert markdown_pieces("| a | b |") == [("a — b", "row")]


def test_prose_with_quotes_and_pipes_in_words_is_not_code_or_a_table():
    text = 'He said "go" and "stop" twice. Use a|b only in code.'
    assert [kind for _, kind in markdown_pieces(text)] == ["sentence", "sentence"]
    assert not looks_like_code("The plan (see below) is short.")
    assert looks_like_code("{ id: 'kb-fast', type: 'kb-plugin' }.") and looks_like_code('"title": "x",')
    assert looks_like_code("const x = f(y);") and looks_like_code("items: [")
    # prose: a line that opens with a link, a hard-wrapped line that ends with a semicolon
    assert not looks_like_code("[The guide](docs/guide.md) explains the cache.")
    assert not looks_like_code("We keep the cache on the local disk;")
    wrapped = "We keep the cache local;\nit is faster that way."
    assert markdown_pieces(wrapped) == [("We keep the cache local;\nit is faster that way.", "sentence")]


def test_a_tree_or_box_diagram_is_code_not_a_sentence():
    assert looks_like_code("Root Frame (request) ├── Seed: 3 intents └── Plan: kb-balanced")
    assert looks_like_code("wrappers/ ── manifest.json")
    assert not looks_like_code("The root frame — the first one — holds the seeds.")  # an em dash is prose


def test_a_bare_yes_or_no_is_a_sentence_but_no_before_a_number_abbreviates():
    assert text.sentences("No. The user name is fixed. See No. 5 for details. Yes. It is.") == [
        "No.",
        "The user name is fixed.",
        "See No. 5 for details.",
        "Yes.",
        "It is.",
    ]


def test_graded_adjectives_meet_their_base_form():
    assert text.terms("the largest message") == text.terms("a large message")
    assert text.terms("bigger, easier, hotter") == text.terms("big, easy, hot")
    assert IRREGULAR["newest"] == "new" and "interest" not in IRREGULAR  # only listed adjectives


def test_answer_types_read_the_question_and_the_answer_shape():
    from mrpvm.plugins.sdk.answer_shapes import mentions_type, names_in
    from mrpvm.plugins.sdk.answer_types import asked_noun, expected_type

    assert expected_type("Who approved the budget?") == "person"
    assert expected_type("Who is Mara Holt?") == "definition"  # asks what the named person is
    assert asked_noun("Which storage engine does the server use?") == "engine"
    assert asked_noun("Which exit code means that the file is missing?") is None  # verb unknown
    assert asked_noun("What is the default port?") is None
    assert names_in("Does Tideway scan mail? It was approved by Mara Holt.") == ["Mara Holt"]
    assert mentions_type("Default: number of CPUs", "number")
    assert not mentions_type("Default: off", "number")


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("With GCC 3.4 and later, the variable has a new name.", ["minimum"]),
        ("Requires Python 3.8 or newer.", ["minimum"]),
        ("GCC >= 10.1 is needed.", ["minimum"]),
        ("Run up to 4 jobs at once.", ["maximum"]),
        ("Releases 2.1 and earlier read the old format.", ["maximum"]),
        ("At least 2 and at most 8 workers.", ["minimum", "maximum"]),
        # an option's name states no comparison; neither does a word that only contains a cue
        ("Pass --max-count to stop early.", []),
        ("The minimum is reached in format mostly.", []),
    ],
)
def test_notation_terms_read_comparison_phrases_on_word_tokens(sentence: str, expected: list[str]) -> None:
    assert text.notation_terms(sentence) == [text.stem(word) for word in expected]


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Is the byte offset printed by grep -b counted from 0 or from 1?", ["from 0", "from 1"]),
        ("Should I build with make or cmake?", ["make", "cmake"]),
        ("Does it need GCC 10 or later?", []),
        ("Is it safe or not?", []),
        ("What is the default, 0 or 1?", []),  # a wh-question: its type says what it asks for
    ],
)
def test_the_options_of_a_choice_question(question: str, options: list[str]) -> None:
    from mrpvm.plugins.sdk.answer_types import alternatives

    assert alternatives(question) == options


def test_a_digit_part_of_a_hyphenated_word_is_a_term() -> None:
    assert {"0", "64"} <= set(terms("the 0-based offset on 64-bit hosts"))


def reference_notation_kinds(value: str) -> set[str]:
    """The definition: a sign in the text, or a set phrase at any word position (longest first)."""
    kinds = {kind for kind, signs in analysis._NOTATION_SIGNS.items() if any(s in value for s in signs)}
    tokens = [w.lower().replace("’", "'") for w in analysis.WORD_PATTERN.findall(value)]
    for i, token in enumerate(tokens):
        for rest, kind in analysis._PHRASE_STARTS.get(token, ()):
            if tuple(tokens[i + 1 : i + 1 + len(rest)]) == rest:
                kinds.add(kind)
                break
    return kinds


_PHRASE_WORDS = sorted({w for ps in analysis._NOTATION_PHRASES.values() for p in ps for w in p.split()})


@given(
    st.lists(
        st.one_of(
            st.sampled_from([*_PHRASE_WORDS, ">=", "≤", "İstanbul", "Least", "AT", "x’s"]),
            st.text(max_size=6),
        ),
        max_size=14,
    )
)
@settings(max_examples=300, deadline=None)
def test_words_and_notation_kinds_equal_their_definitions(parts: list[str]) -> None:
    value = " ".join(parts)
    assert analysis.words(value) == [
        w.lower().replace("’", "'") for w in analysis.WORD_PATTERN.findall(value)
    ]
    assert analysis._notation_kinds(value) == reference_notation_kinds(value)


def test_a_lowered_capital_that_grows_a_mark_splits_no_token() -> None:
    """'İ' lowers to 'i' plus a combining dot (not a word character): each token is lowered on its own."""
    assert analysis.words("İstanbul at least") == ["i̇stanbul", "at", "least"]


def test_a_digit_inside_a_name_is_no_number() -> None:
    from mrpvm.plugins.sdk.answer_shapes import mentions_type

    assert not mentions_type("remote X11 clients get full access", "number")
    assert not mentions_type("built for x86_64 and python3 only", "number")
    assert mentions_type("the server listens on port 5432", "number")
    assert mentions_type("set it to -1 to disable; 3.5 seconds by default", "number")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab./ -_é", max_size=14))
def test_file_title_is_the_posix_stem(name):
    from pathlib import PurePosixPath

    text.file_title.cache_clear()
    assert text.file_title(name) == PurePosixPath(name).stem


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("docs/tar.txt", "tar"),
        ("tar", "tar"),
        (".bashrc", ".bashrc"),
        ("archive.tar.gz", "archive.tar"),
        ("docs/", "docs"),
        ("a/./b.md/.", "b"),
        ("name.", "name."),
        ("/", ""),
        ("", ""),
    ],
)
def test_file_title_examples(name, title):
    assert text.file_title(name) == title


@pytest.mark.parametrize(
    "value",
    [
        "GCC 10.1 or later",
        "works on 10.1least",  # a version glued to a phrase word: "1least" to `words`, "least" to TERM_TOKEN
        "see https://example.org/at/least for details",  # plain text drops the URL, the notation reads it
        "[at least](https://example.org) two",
        "AT LEAST TWO COPIES",  # shouted: terms read it lowered
        "run grep -b at most once",
        "İstanbul at least",
        "up to 4 workers, at least 2",
        "",
    ],
)
def test_text_terms_are_the_body_terms_read_once(value: str) -> None:
    assert text.text_terms(value) == terms(text.plain_text(value)) + text.notation_terms(value)


@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    *_PHRASE_WORDS,
                    ">=",
                    "-b",
                    "-R",
                    "10.1",
                    "6.0.28",
                    "2least",
                    "İstanbul",
                    "AT",
                    "x’s",
                    "@",
                    "](x)",
                ]
            ),
            st.sampled_from(["https://a.org/at/most", "[up to](u)", "LEAST", ".", "-", "\n"]),
            st.text(max_size=6),
        ),
        max_size=14,
    ),
    st.sampled_from([" ", "", "."]),
)
@settings(max_examples=400, deadline=None)
def test_text_terms_equal_terms_plus_notation_terms(parts: list[str], sep: str) -> None:
    value = sep.join(parts)
    assert text.text_terms(value) == terms(text.plain_text(value)) + text.notation_terms(value)


# TERM_TOKEN as first written, its look-behinds before each alternative (slower: see analysis.py)
_LOOKBEHIND_FIRST = re.compile(
    r"(?<![\w-])-[^\W_](?![\w-])|(?<![\w.])\d+(?:\.\d+)+(?![\d])|" + WORD_PATTERN.pattern, re.UNICODE
)


@pytest.mark.parametrize(
    "value",
    [
        "-f",
        "a -f b",
        "x-f",
        "--f",
        "-f-",
        "-ab",
        "10.1",
        "v10.1",
        ".10.1",
        "10.1.2a",
        "1.2.",
        "_-x",
        "-_",
        "é-x 3.4",
    ],
)
def test_term_tokens_are_those_of_the_lookbehind_first_pattern(value: str) -> None:
    assert TERM_TOKEN.findall(value) == _LOOKBEHIND_FIRST.findall(value)


@given(st.text(alphabet=st.sampled_from(list("-._'’ a1Z9é_\n") + ["İ", "٣"]), max_size=24))
@settings(max_examples=600, deadline=None)
def test_term_tokens_equal_the_lookbehind_first_pattern(value: str) -> None:
    assert TERM_TOKEN.findall(value) == _LOOKBEHIND_FIRST.findall(value)


def test_looks_plural_reads_regular_plurals_and_not_their_lookalikes() -> None:
    from mrpvm.plugins.sdk.lexicon import looks_plural

    assert [w for w in ("readers", "Options", "hooks") if looks_plural(w)] == ["readers", "Options", "hooks"]
    # -ss, -us, -is endings, short function words and non-words are not plurals
    assert not any(looks_plural(w) for w in ("class", "status", "basis", "has", "its", "v1.2s", "x-ms"))
