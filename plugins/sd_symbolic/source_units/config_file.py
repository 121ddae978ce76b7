"""Annotated configuration files (/etc/login.defs, sshd_config, a service's sample config): settings and
the comments that describe them.

A configuration file says in comments what a manual says in prose, and says it *above* what it describes:
a block of `#` lines over a setting describes that setting; a commented-out setting ("#MAIL_FILE .mail")
shows a default or an example. Read as Markdown its `# ` lines would be headings; read as plain text its
descriptions would stand under the setting before them. Read here:
- a setting line (`KEY value`, `key = value`), commented out or not, is a definition whose term is the
  line and whose description is the comment block right above it (its sentences, `#` marks left out);
  consecutive settings under one comment ("PASS_MAX_DAYS 99999", "PASS_MIN_DAYS 0", "PASS_WARN_AGE 7" under
  "Password aging controls: …") are one definition, its term all of their lines;
- a comment block that no setting follows (the file's header, a note between groups) is a paragraph.
The file is one when a good share of its lines are comments and every other line is a setting.
"""

from __future__ import annotations

from mrpvm.plugins.sdk.patterns import lazy_pattern
from mrpvm.plugins.sdk.text import starts_statement

from .segments import Block, Segment, sentences_in

_COMMENT = lazy_pattern(r"^[ \t]*#")
_MARK = lazy_pattern(r"^[ \t]*#+[ \t]?")
# a setting: an identifier-like key, then '=', ':' or blanks, then a short value (not a sentence)
_SETTING = lazy_pattern(
    r"^[ \t]*(?P<key>[A-Za-z_][\w.\-]*)(?P<sep>[ \t]*[=:][ \t]*|[ \t]+)(?P<value>\S[^\n]{0,200}?)[ \t]*$"
)
# UPPER_SNAKE, snake_case, dotted.keys, CamelCase or camelCase (what prose words are not)
_KEY = lazy_pattern(r"[A-Z][A-Z0-9_]{2,}|\w*[a-z0-9][_.]\w[\w.]*|[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
# a commented-out setting's key is unlike a capitalised word opening a comment ("# REQUIRED for …"):
# snake_case, dotted or CamelCase
_COMMENTED_KEY = lazy_pattern(r"\w*[A-Za-z0-9][_.]\w[\w.]*|[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
MAX_VALUE_WORDS = 4
MIN_SETTINGS = 3
MIN_COMMENT_SHARE = 0.3
MAX_LINES_READ = 20_000


def _setting(line: str, commented: bool = False) -> bool:
    """A `KEY value` line: an identifier-like key and a short value that does not end as a sentence."""
    m = _SETTING.match(line)
    if m is None or not (_COMMENTED_KEY if commented else _KEY).fullmatch(m["key"]):
        return False
    value = m["value"]
    return len(value.split()) <= MAX_VALUE_WORDS and not value.endswith((".", "!", "?"))


def looks_like_config(text: str) -> bool:
    """A share of the lines are `#` comments and every other non-blank line is a setting: one pass over
    the lines, which stops at the first line that is neither (a prose source's first line)."""
    comments = settings = 0
    for ln in text.split("\n", MAX_LINES_READ)[:MAX_LINES_READ]:
        if not ln.strip():
            continue
        if _COMMENT.match(ln):
            comments += 1
        elif _setting(ln):
            settings += 1
        else:
            return False
    return settings >= MIN_SETTINGS and comments >= MIN_COMMENT_SHARE * (comments + settings)


def _lines(text: str) -> list[tuple[int, int]]:
    out, a = [], 0
    for line in text.split("\n"):
        out.append((a, a + len(line.rstrip("\r"))))
        a += len(line) + 1
    return out


def _statements(text: str, run: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """A comment paragraph's lines as its statements: a comment often says one thing a line, without a full
    stop (sdk.text.starts_statement); a wrapped sentence stays whole."""
    parts: list[list[tuple[int, int]]] = []
    for a, b in run:
        line = _MARK.sub("", text[a:b], count=1)
        if parts and not starts_statement(_MARK.sub("", text[slice(*parts[-1][-1])], count=1), line):
            parts[-1].append((a, b))
        else:
            parts.append([(a, b)])
    return parts


def config_blocks(text: str) -> list[Block]:
    """The blocks of an annotated configuration file (see the module docstring)."""
    blocks: list[Block] = []
    comment: list[tuple[int, int]] = []  # the comment lines since the last setting or blank line

    def described(block_index: int) -> list[Segment]:
        """The sentences of the pending comment block, paragraph by paragraph (an empty `#` line parts them)."""
        segs: list[Segment] = []
        run: list[tuple[int, int]] = []
        for a, b in [*comment, (-1, -1)]:
            content = a >= 0 and text[a:b].strip("#").strip()
            if content:
                run.append((a, b))
                continue
            for part in _statements(text, run):
                start = part[0][0] + _MARK.match(text[part[0][0] : part[0][1]]).end()  # type: ignore[union-attr]
                for seg in sentences_in(text, start, part[-1][1], block_index):
                    seg.comment = True
                    segs.append(seg)
            run = []
        return segs

    def flush_paragraph() -> None:
        segs = described(len(blocks))
        if segs:
            blocks.append(Block("paragraph", segs[0].start, segs[-1].end, segments=segs))
        comment.clear()

    run: list[Segment] = []  # consecutive setting lines: the comment above describes them together

    def flush_run() -> None:
        if run:
            segs = described(len(blocks)) + run
            for seg in run:
                seg.block = len(blocks)
            title = "; ".join(" ".join(text[t.start : t.end].split()) for t in run)
            blocks.append(Block("definition", segs[0].start, run[-1].end, title=title, segments=segs))
            run.clear()
            comment.clear()

    for a, b in _lines(text):
        line = text[a:b]
        if not line.strip():
            flush_run()
            flush_paragraph()
            continue
        commented = bool(_COMMENT.match(line))
        if _setting(_MARK.sub("", line, count=1) if commented else line, commented):
            run.append(Segment(a + len(line) - len(line.lstrip(" \t#")), b, "term", len(blocks)))
            continue
        flush_run()
        comment.append((a, b))
    flush_run()
    flush_paragraph()
    return blocks
