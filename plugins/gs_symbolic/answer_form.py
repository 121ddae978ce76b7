"""What the form of a question asks its answer to state, beyond the question's own words.

A passage may repeat every word of a question and still not answer it: "Max number of login retries." for
"How many login retries are allowed?" names the quantity without stating it. The judge (passages.py) chooses
the best passage; `success` further asks that the quoted answer (its label included) holds what the
question's form asks for (Li & Roth's coarse answer types, read from the question, never from a document):
- an answer of a recognisable shape (a number, a version, a date, a duration, an option, a path): one the
  question does not write itself ("the minimum Rust version for v10.0.0" is not answered by "v10.0.0"); a
  figure, moreover, that is not "the number of <what was asked>" nor a release;
- "what is the default …" / "… by default": the answer says what the default is (it names a default);
- "which file …": a file's name or a path;
- a sentence that announces what follows it ("run this command:", "as follows") without what follows.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.answer_shapes import mentions_type, options_named
from mrpvm.plugins.sdk.answer_types import asked_noun
from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.place_answers import asks_origin, states_place
from mrpvm.plugins.sdk.text import stems
from mrpvm.plugins.sdk.time_answers import states_circumstance, states_frequency

from .documented import marks_documented
from .question import Question

# "the default X", "X by default", "defaults to": the question asks for a default (not how to change one)
_DEFAULT_ASKED = lazy_pattern(r"\bdefaults?\b", re.I)
_DEFAULT_STATED = lazy_pattern(r"default", re.I)  # "(default: 8)", "Defaults to", "defaultBranch"
DEFAULT_STEMS = frozenset(stems(["default", "defaults"]))
# a default stated as a value: "The default is 8", "defaults to 8", "Default: 8", "(default 8)", "8 is the
# default", "… by default" — not "default" as a modifier of the setting ("the default port can be changed")
_DEFAULT_VALUE = lazy_pattern(
    r"\bdefaults?\s*(?:value\s+)?(?:is|was|are|:|=|to)(?!\w)|\bdefault(?:s|ing)?\s+to\b|\(\s*defaults?\b"
    r"|\b(?:is|are|was)\s+(?:the\s+)?default\b|\bby\s+default\b"
    # "The default port is 8080", "Default level changed to -6": the setting named between, a value after
    r"|\bdefault\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are|was|(?:changed|set)\s+to)\s+(?=[`\"'\d-])",
    re.I,
)
_UNASKING_TYPES = frozenset({"procedure", "command", "reason", "yes-no", "comparison"})
# "number of days": what a figure counts, named without the figure
_COUNTED = lazy_pattern(r"\bnumber\s+of\s+([^\W\d_]+)", re.I)
# "version 3.3", "v10.0.0", "1.2.3": a release, not a quantity
_RELEASE = lazy_pattern(
    r"\b(?:versions?|releases?|v)\s*\d+(?:\.\d+)*[\w~+-]*|\b\d+(?:\.\d+){2,}[\w~+-]*", re.I
)
# "RFC 3647", "ISO 8601", "PEP 8": a numeral that completes a name written in capitals designates the
# thing named (a standard, a document), it counts nothing (the numeral of a named entity, not a cardinal)
_DESIGNATION = lazy_pattern(r"\b[A-Z]{2,}[ -]?\d+(?:[.:]\d+)*\b")
_NUMERAL = lazy_pattern(r"\d+(?:[.,]\d+)*")
_WRITTEN = lazy_pattern(r"(?<![\w-])--?[A-Za-z][\w-]*|\d+(?:[.,]\d+)*")  # an option or a numeral, as written
_INSTANCE_TYPES = frozenset({"number", "version", "date", "duration", "option", "location"})
_FILE_NOUNS = frozenset(["file", "files", "filename", "filenames"])
# "pyproject.toml", ".bashrc", "/etc/login.defs": a file named (not "e.g." nor "3.12")
_FILE_NAMED = lazy_pattern(r"(?<![\w.])(?:[\w-]+)?\.[A-Za-z][\w-]{1,7}\b(?!\.\w)|(?:^|[\s(`'\"])~?/[\w.@+-]+")
# a sentence that points at what follows it: "run this command", "as follows", "the following:", a sentence
# ending on "the following"
_ANNOUNCES = lazy_pattern(
    r"\b(?:th(?:is|ese)|the\s+following)\s+(?:commands?|code|snippets?|examples?|lines?|steps?|syntax)\b"
    r"|\bas\s+follows\b|\bthe\s+following\s*:|:\s*$"
    # "use a syntax like the following (substituting your user name)." ends where its example would follow
    r"|\bthe\s+following\s*(?:\([^()\n]*\)\s*)?(?:[.:](?!\w)|[ \t]*$)",
    re.I | re.M,
)
# "run the following command", "enter this command": a lead-in pointing forward to a command quoted after it
# ("This command is deprecated." points back)
_ANNOUNCED_COMMAND = lazy_pattern(
    r"\bthe\s+following\s+commands?\b|\b(?:run|enter|type|execute|issue|paste)\s+th(?:is|ese)\s+commands?\b",
    re.I,
)


def announces_command(text: str) -> bool:
    """The text points at a command that follows it ("run the following command in that directory, where
    `app-name` is …"): a code span inside it is a placeholder it explains, not the command announced."""
    return _ANNOUNCED_COMMAND.search(text) is not None


_OPENED = lazy_pattern(r"[^.!?]*?:\s*\S")  # "… run this command to set X: wsl --set-default-version 2"
_LABEL = lazy_pattern(
    r"^\s*(?:\*\*)?`[^`\n]*`(?:\*\*)?:\s", re.M
)  # "`-k, --keep-old-files`: …" labels a quote


# answer types whose value is marked plainly when a passage states it (a figure, a version, a date, a
# duration): a best passage without one means the evidence does not say it. An option or a place is written
# in too many ways (`inject`, a host's name) for its absence to be read so.
_MARKED_TYPES = frozenset({"number", "version", "date", "duration"})
NO_DEFAULT = "no default stated"
NO_FILE = "no file named"


def unanswered(q: Question, lack: str) -> bool:
    """The reason `lack` (from `unstated`, for the best passage the evidence gives) says the evidence does not
    hold what the question's form asks: a value of a marked type, a default, a file's name. Not so for an
    option or a place, nor for a sentence announcing a quote it lacks (its command may stand elsewhere)."""
    if lack in (NO_DEFAULT, NO_FILE):
        return True
    return lack.endswith("beyond the question's own") and q.answer_type in _MARKED_TYPES


# a word of a heading besides its versions and dates ("v2.3", "2021-05-03", "(released"): "Tessel v2.3 Release
# Notes" is a release's label; "Heron Shared Source Licence v2.1+ (see LICENCE or https://…)" is a sentence that
# mentions a version, and dates nothing under it
_LABEL_WORD = lazy_pattern(r"[^\W\d_][\w'’-]*")
MAX_RELEASE_WORDS = (
    5  # words of a release heading besides its version and date ("What's New In Python 3.12": 4)
)


def labels_release(heading: str) -> bool:
    """The heading is a release's label (a version or date and a few words: "## 2.3.0 (2021-05-03)", "Tessel
    v2.3 Release Notes"), so the version it holds dates the section under it; a longer heading (a licence
    line, a sentence) only mentions one."""
    words = [w for w in heading.split() if not any(c.isdigit() for c in w) and _LABEL_WORD.search(w)]
    return len(words) <= MAX_RELEASE_WORDS


def marked(q: Question) -> bool:
    """The question asks for a value of a marked type (a figure, a version, a date, a duration): a value that
    is only an answer when it is the value of the thing asked."""
    return q.answer_type in _MARKED_TYPES


def asks_default(q: Question) -> bool:
    """ "What is the default X?", "… by default?": the question asks for a default (not how to change one)."""
    return q.answer_type not in _UNASKING_TYPES and bool(_DEFAULT_ASKED.search(q.focus or q.text))


def states_default(text: str) -> bool:
    """The text states a default as a value ("Defaults to 8"), not only names a default setting."""
    return bool(_DEFAULT_VALUE.search(text))


def defaults_elsewhere(q: Question, said: set[str]) -> bool:
    """For "what is the default X?": the passage chosen (its words with its headings, `said`) names none of
    the question's words but "default" itself. The ranking may prefer it for that word alone ("The default
    is 3." under "retries" for "What is the default timeout?"); it states another setting's default, and the
    asked setting's, which the documents name, is never stated."""
    if not asks_default(q):
        return False
    asked = set(q.terms) - DEFAULT_STEMS
    return bool(asked) and not asked & said


def unstated(q: Question, answer: str) -> str:
    """Why the quoted `answer` (labels included) does not state what the question's form asks for; "" when
    it does."""
    focus = q.focus or q.text
    if q.answer_type in _INSTANCE_TYPES and not _states_instance(answer, q):
        return f"no {q.answer_type} stated beyond the question's own"
    if asks_default(q) and not _DEFAULT_STATED.search(answer):
        return NO_DEFAULT
    if (asked_noun(focus) or "") in _FILE_NOUNS and not _FILE_NAMED.search(answer):
        return NO_FILE
    if any(not _fulfilled(m, answer) for m in _ANNOUNCES.finditer(answer)):
        return "announces what it does not quote"  # the command it leads to is not quoted
    return ""


def _fulfilled(announcing: re.Match[str], answer: str) -> bool:
    """What an announcing phrase points at follows it in the answer: code, or a colon and what it opens."""
    rest = _LABEL.sub("", answer[announcing.end() :])
    if announcing.group(0).rstrip().endswith(":"):
        return bool(rest.strip())
    return "`" in rest or _OPENED.match(rest) is not None


def _states_instance(text: str, q: Question) -> bool:
    """An answer of the asked shape that the question does not write itself; a figure, outside releases and
    "the number of <asked>"."""
    asked = q.focus or q.text
    own = set(_NUMERAL.findall(asked)) | set(options_named(asked))
    text = _WRITTEN.sub(lambda m: " " if m.group(0) in own else m.group(0), text)
    if q.frequency and states_frequency(text):
        return True  # "how often …": "weekly", "every morning"
    if q.answer_type == "number":
        return states_figure(text, set(q.terms))
    if q.circumstance and states_circumstance(text):
        return True
    if q.answer_type == "location":
        return states_place(text, asks_origin(asked))
    if q.answer_type == "option" and marks_documented(text, q.documented):
        return True  # "O(path) and O(port) are …": keys the document's own entries document
    return mentions_type(text, q.answer_type)


def states_figure(text: str, asked: set[str]) -> bool:
    """A figure outside releases ("Added in version 3.3") and outside "the number of <an asked term>" ("Number
    of days warning given" names what "How many days …" asks, without the figure) and outside a name it
    completes ("audited for RFC 3647 compliance" states no quantity)."""
    text = _DESIGNATION.sub(" ", _RELEASE.sub(" ", text))
    text = _COUNTED.sub(lambda m: " " if set(stems([m.group(1).lower()])) & asked else m.group(0), text)
    return mentions_type(text, "number")
