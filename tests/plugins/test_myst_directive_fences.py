"""A MyST directive fence whose body is prose is read as the page's text (issue 20: false refusals with the
evidence in hand).

MyST Markdown writes an admonition, a tab or a dropdown as a fenced block whose info string names the
directive in braces (```` ```{tab} Windows ````). Read as code, a tab set's definition lists were one code
unit: "Where is the cache folder on Windows?" was refused with the path in the evidence. The opening fence,
its option lines and the closing fence are markup; a code directive (`{code-block}`) and a plain code fence
stay code, and so does a directive written inside a code fence. A tab's title is the heading of its body when
the tab set ends its section (the next line is another tab, a heading or the end), so "on Windows" is written
over the Windows tab's entries."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.sd_symbolic.source_units.directive_fences import without_directive_fences

GUIDE = """# Fernlight settings

Fernlight reads its settings from a cache folder and a settings file.

## Where files are kept

```{note}
Fernlight never writes outside these two places.
```

````{tab} Linux

Cache
: The cache folder is {file}`~/.cache/fernlight`.

Settings
: The settings file is {file}`~/.config/fernlight/fern.ini`.
````

````{tab} Windows
:sync: win

Cache
: The cache folder is {file}`%LOCALAPPDATA%\\Fernlight\\cache`, created on first start.

Settings
: The settings file is {file}`%APPDATA%\\Fernlight\\fern.ini`.
````

## Example

```{code-block} ini
[fern]
theme = moss
```
"""


def test_fences_blanked_offsets_kept() -> None:
    out = without_directive_fences(GUIDE)
    assert len(out) == len(GUIDE) and out.count("\n") == GUIDE.count("\n")
    assert "{tab}" not in out and ":sync: win" not in out and "{note}" not in out
    assert "Fernlight never writes outside these two places." in out
    assert "### Linux" in out and "### Windows" in out  # the tabs end the section: their titles head them
    assert "```{code-block} ini" in out  # a code directive stays code


def test_a_tab_followed_by_text_is_no_section() -> None:
    text = "## Paths\n\n```{tab} Linux\nThe cache is in ~/.cache.\n```\n\nBoth paths can be changed.\n"
    out = without_directive_fences(text)
    assert "Linux" not in out and "The cache is in ~/.cache." in out  # "Both paths …" is no Linux text


def test_a_directive_inside_code_stays_code() -> None:
    text = "# Writing notes\n\nWrite a note like this:\n\n````markdown\n```{note}\nA note.\n```\n````\n"
    assert without_directive_fences(text) == text


def test_a_tab_body_is_read_as_text() -> None:
    units = [u for u in units_of(GUIDE, "guide.md") if u.kuType == "atomic"]
    claims = {u.claim or "" for u in units}
    assert any("LOCALAPPDATA" in c and "```" not in c for c in claims)
    assert not any(u.chunkType == "code" and "LOCALAPPDATA" in (u.claim or "") for u in units)
    assert any(u.chunkType == "code" and "theme = moss" in (u.claim or "") for u in units)


@needs_model
def test_a_path_inside_a_tab_answers() -> None:
    doc = ask("Where is the cache folder on Windows?", units_of(GUIDE, "guide.md"))
    # on main: the tab read as code, then as prose, gave a weak answer quoting its option line
    assert "LOCALAPPDATA" in (doc.answer or "") and ":sync:" not in (doc.answer or "")
    assert doc.result.status == "success"


def test_nested_directives_are_rewritten_in_line_order_once() -> None:
    """A tab set's tab items (a directive in another's body) are edited after the outer closing fence:
    rewritten in that order, the inner bodies were written twice and every later offset moved."""
    text = (
        "# Setup\n\n````{tab-set}\n```{tab-item} Linux\nRun the quillet installer.\n```\n"
        "```{tab-item} Windows\nRun quillet.exe instead.\n```\n````\n\nThen restart the shell.\n"
    )
    out = without_directive_fences(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert out.count("Run the quillet installer.") == 1 and out.count("Run quillet.exe instead.") == 1
    assert "`" not in out and out.endswith("Then restart the shell.\n")


def test_an_inner_directive_left_open_ends_on_the_outer_fence() -> None:
    text = "````{dropdown}\n```{note}\nKeep the lid shut.\n````\nAfter.\n"
    out = without_directive_fences(text)
    assert len(out) == len(text) and "`" not in out and out.count("Keep the lid shut.") == 1


# review34: what a unit quotes is sliced from the text the blocks were read from (outline.read_source), the last
# tab of a tab set is headed like the ones before it, and MyST's colon fence is a directive fence too.
STEPS = """# Quillet vault

## Syncing

1. Open the vault.

   ```{warning}
   :class: strong
   Close every other editor first.
   ```

2. Press sync.

```{note}
:class: tip
Quillet keeps its notes in the vault folder.
```
The vault folder can be moved.
"""


def test_no_unit_quotes_the_fences_or_options() -> None:
    """The blocks were read from the rewritten text but the units sliced the source: a list item spanning
    the warning quoted "```{warning} :class: strong" in its claim, and a unit running from the note's body
    into the next paragraph quoted the closing fence in its text body."""
    units = units_of(STEPS, "vault.md")
    quoted = [" ".join(filter(None, (u.claim, u.textBody, u.procedure))) for u in units]
    assert any("Close every other editor first." in q for q in quoted)
    assert any("Quillet keeps its notes in the vault folder." in q for q in quoted)
    assert not any("`" in q or ":class:" in q or "{warning}" in q for q in quoted)


def test_the_last_tab_of_a_tab_set_is_headed() -> None:
    """The last tab item's closing fence is followed by the tab set's own: passed over, the section ends."""
    text = (
        "# Setup\n\n## Install\n\n````{tab-set}\n```{tab-item} Linux\nRun the quillet installer.\n```\n"
        "```{tab-item} Windows\nRun quillet.exe instead.\n```\n````\n\n## Use\n\nOpen a vault.\n"
    )
    out = without_directive_fences(text)
    assert len(out) == len(text)
    assert "### Linux" in out and "### Windows" in out
    titles = {u.title for u in units_of(text, "setup.md") if u.kuType == "composite"}
    assert {"Linux", "Windows"} <= titles


def test_a_colon_fence_is_a_directive_fence() -> None:
    text = (
        "# Quillet\n\nQuillet stores notes.\n\n:::{note}\n:class: tip\nQuillet never deletes a note without"
        " asking.\n:::\n\n::::{tab-set}\n:::{tab-item} Linux\nRun the installer.\n:::\n::::\n"
    )
    out = without_directive_fences(text)
    assert len(out) == len(text) and ":::" not in out and ":class:" not in out and "## Linux" in out
    claims = [u.claim or "" for u in units_of(text, "notes.md") if u.kuType == "atomic"]
    assert any("never deletes a note" in c for c in claims) and not any(":::" in c for c in claims)
    fenced = "# Quillet\n\n```markdown\n:::{note}\nA note.\n:::\n```\n"
    assert without_directive_fences(fenced) == fenced  # written inside a code fence: code


def test_options_written_as_a_yaml_block_are_markup() -> None:
    """MyST's other way to write a directive's options: a YAML block between two `---` lines opening its
    body. Read as text, its last option line over the closing `---` became a setext heading."""
    text = (
        "# Quillet\n\n```{warning}\n---\nclass: strong\nname: sync-warning\n---\nClose every other editor"
        " first.\n```\n\nThen sync.\n"
    )
    out = without_directive_fences(text)
    assert len(out) == len(text) and "---" not in out and "class: strong" not in out
    assert "Close every other editor first." in out
    headings = {u.title for u in units_of(text, "sync.md") if u.kuType == "composite"}
    assert "name: sync-warning" not in headings
