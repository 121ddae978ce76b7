"""sd-symbolic reads a C-family source file (a library's public header) declaration by declaration: the comment
right above a declaration documents it, so the comment and the declaration are one unit headed by the name
declared, and a comment's first line is no section title (issue 20 item 4). Documents invented; shapes that
only look alike (prose, Markdown with a C example, a Python module, a configuration file) keep their readers.
"""

from __future__ import annotations

from mrpvm.plugins.sd_symbolic.source_units.c_source import c_source_blocks, looks_like_c_source
from reader_units import atomic_units, unit_holding

KILN = """/*
   kilnctl - a controller library for electric pottery kilns.

   Copyright (c) 2031 The Kilnctl Authors.
   Licensed under the MIT licence.
*/

#ifndef KILNCTL_H
#define KILNCTL_H 1

#include <stddef.h>

#define KILN_MAX_SEGMENTS 32

typedef struct KilnHandle *Kiln;

/* The states a firing can be in. */
enum Kiln_State {
  KILN_IDLE,
  KILN_HEATING,
  /* Added in kilnctl 1.4. */
  KILN_SOAKING,
  KILN_COOLING
};

/* Called once a minute while a firing runs; temperature is in degrees
   Celsius and elapsed in whole minutes.
*/
typedef void(KILNCALL *Kiln_ProgressHandler)(void *userData, int temperature,
                                             int elapsed);

/* Opens the kiln attached to the serial port named by device and returns a
   handle, or NULL when no kiln answers within five seconds.
*/
KILNAPI(Kiln)
kiln_open(const char *device);

/* Sets the cone the firing aims for.  The target must lie between cone 022
   and cone 10.

   Returns 1 if successful, 0 when called after the firing has started.

   Added in kilnctl 2.1.
*/
KILNAPI(int)
kiln_set_cone(Kiln kiln, int cone);

/**
 * Stops the firing at once and opens the vent.
 *
 * The elements stay off until kiln_open is called again.
 */
KILNAPI(void)
kiln_abort(Kiln kiln) KILN_ATTR_NONNULL(1);

// Releases every resource the handle holds; the handle is unusable after.
KILNAPI(void)
kiln_free(Kiln kiln);

typedef struct {
  int cone;
  int hold_minutes;
} Kiln_Schedule;

/* Reads the thermocouple. */
#define kiln_temperature(kiln) (*(int *)(kiln))

#endif /* KILNCTL_H */
"""


def _units(text: str, name: str = "kilnctl.h") -> list:
    return atomic_units(text, name)


_holding = unit_holding


def test_a_comment_and_the_declaration_after_it_are_one_unit_headed_by_its_name() -> None:
    units = _units(KILN)
    opener = _holding(units, "no kiln answers within five seconds")
    assert opener.sectionTitle == "kiln_open", opener.sectionTitle
    assert "kiln_open(const char *device);" in (opener.claim or "")
    # a comment's first line is no section title
    assert not any((u.sectionTitle or "").startswith(("/*", "Opens the kiln")) for u in units)


def test_every_paragraph_of_a_comment_stands_under_the_declared_name() -> None:
    units = _units(KILN)
    for words in ("Returns 1 if successful", "Added in kilnctl 2.1.", "between cone 022"):
        unit = _holding(units, words)
        assert unit.sectionTitle == "kiln_set_cone", (words, unit.sectionTitle)


def test_comment_marks_are_no_text() -> None:
    units = _units(KILN)
    abort = _holding(units, "Stops the firing at once")
    assert abort.sectionTitle == "kiln_abort"
    prose = (abort.claim or "").split("```")[0]
    assert "*" not in prose and "/" not in prose, prose
    assert "The elements stay off" in prose
    freed = _holding(units, "Releases every resource")
    assert freed.sectionTitle == "kiln_free" and "//" not in (freed.claim or "").split("```")[0]


def test_the_declared_name_of_each_shape() -> None:
    titles = [b.title for b in c_source_blocks(KILN) if b.kind == "definition"]
    assert titles == [
        "Kiln_State",  # an enum's tag
        "Kiln_ProgressHandler",  # a function pointer type
        "kiln_open",  # a function under an export macro
        "kiln_set_cone",
        "kiln_abort",  # an attribute macro after it
        "kiln_free",
        "kiln_temperature",  # a function-like macro
    ]


def test_a_comment_between_an_enum_s_members_stays_in_the_enum() -> None:
    blocks = c_source_blocks(KILN)
    state = [b for b in blocks if b.title == "Kiln_State"]
    assert state and "KILN_COOLING" in KILN[state[0].start : state[0].end]
    assert "Added in kilnctl 1.4." in KILN[state[0].start : state[0].end]


PROSE = """Firing a kiln

Load the shelves loosely; pots must not touch each other (they fuse).
Close the lid, set the cone, and start the program.

The firing takes about nine hours, then the kiln cools overnight.
Do not open the lid above 100 degrees (the pots crack).
"""

MARKDOWN = """# kilnctl

Open a kiln and fire it:

```c
/* open the first kiln */
Kiln k = kiln_open("/dev/ttyUSB0");
kiln_set_cone(k, 6);
kiln_free(k);
```

The library needs a serial port; see the manual for wiring.
"""

PYTHON = '''"""Kiln helpers."""

# the cone table, coolest first
CONES = (22, 10, 6)


def cone_after(cone):
    # the next hotter cone
    if cone == CONES[-1]:
        return None
    return CONES[CONES.index(cone) + 1]
'''

CONFIG = """# kiln daemon settings
# the serial port
port = /dev/ttyUSB0
# minutes between readings
interval = 1
"""


def test_shapes_that_only_look_alike_are_not_c_sources() -> None:
    assert looks_like_c_source(KILN)
    for text in (PROSE, MARKDOWN, PYTHON, CONFIG):
        assert not looks_like_c_source(text), text[:30]


def test_a_version_note_answers_for_the_declaration_it_documents() -> None:
    from answer_support import ask, units_of

    doc = ask("In which kilnctl version was kiln_set_cone added?", units_of(KILN, "kilnctl.h"))
    assert doc.answer is not None and "2.1" in doc.answer, doc.answer
    assert doc.result.status != "no-context", doc.result
    returned = ask(
        "What does kiln_set_cone return when it is called after the firing has started?",
        units_of(KILN, "kilnctl.h"),
    )
    assert returned.answer is not None and "0 when called after the firing has started" in returned.answer


def test_a_long_commented_body_is_read_in_one_pass(monkeypatch) -> None:
    """A function body with a comment on every other line and no blank line: each comment asks whether the
    code run before it leaves a brace open. Counting the run's braces again each time read the body once per
    comment (a 1 MB body: ~10 s); the run keeps its balance as it grows, so each line is counted once."""
    from mrpvm.plugins.sd_symbolic.source_units import c_source

    body = "".join(f"    // step {i} of the glaze cycle\n    heat += {i};\n" for i in range(400))
    text = (
        f"/* Fires the kiln. */\nvoid kiln_fire(void);\n/* Runs the cycle. */\nint glaze(void) {{\n{body}}}\n"
    )
    scanned: list[int] = []
    real = c_source._balance

    def counted(text_: str, lines: list[tuple[int, int]], first: int, last: int) -> int:
        scanned.append(lines[last][1] - lines[first][0])
        return real(text_, lines, first, last)

    monkeypatch.setattr(c_source, "_balance", counted)
    blocks = c_source_blocks(text)
    assert sum(scanned) <= len(text)  # every line once
    glaze = next(b for b in blocks if b.title == "glaze")
    assert glaze.kind == "definition" and glaze.end == len(text) - 1  # the comments stay in the body


def test_a_comment_mark_inside_a_string_literal_opens_no_comment() -> None:
    """`"/*"` in a string literal on a code line is text: read as an opened comment it swallowed every
    declaration up to the next `*/`, so the next comment's declaration lost its unit."""
    text = KILN.replace(
        "#define KILN_MAX_SEGMENTS 32\n",
        "#define KILN_MAX_SEGMENTS 32\n#define KILN_GLOB \"/*\"\nstatic const char KILN_STAR = '*';\n",
    )
    titles = [b.title for b in c_source_blocks(text) if b.kind == "definition"]
    assert titles[:3] == ["Kiln_State", "Kiln_ProgressHandler", "kiln_open"], titles
    assert looks_like_c_source(text)
    opener = _holding(_units(text), "no kiln answers within five seconds")
    assert opener.sectionTitle == "kiln_open"
