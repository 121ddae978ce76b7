"""Hugo shortcodes read as what they render to, not as braces quoted in an answer.

A Hugo site writes template calls inside its Markdown: `{{< name args >}}` (or `{{% name args %}}`), closed
by `{{< /name >}}` when the call wraps text. Read as text they leave braces in a quoted answer
("{{<required>}} String. The ID of the group."). What a call means follows from its syntax alone:
- a closing call, and a call that opens a wrapper closed on the same line (`{{< hint >}}…{{< /hint >}}`),
  render no text of their own: the text they wrap is the content;
- a call without arguments that wraps nothing is an inline badge (`{{<required>}}`, `{{< beta >}}`): its
  name, in parentheses ("(required)");
- a call with arguments inside a Markdown link's target (`[Group]({{< relref "entities/group" >}})`) is the
  link's address: its first argument's value;
- any other call with arguments renders what its display argument says (`caption=`, `title=`, `text=`,
  `label=`, `alt=`: the names Hugo's own and common theme shortcodes give the text a reader sees), or
  nothing (`{{< hint info >}}` on its own line opens a box; `{{< toc >}}` inserts generated navigation).
A line holding only calls that render nothing is a blank line for the block reader (blocks.py): a wrapper's
opening and closing lines do not join the text they wrap to the paragraphs around it.
"""

from __future__ import annotations

import re

from mrpvm.plugins.sdk.patterns import lazy_pattern

_CALL = lazy_pattern(
    r"\{\{(?P<delim>[<%])\s*(?P<close>/)?\s*(?P<name>[\w.-]+)(?P<args>(?:[^}>%]|[>%](?!\}\})|\}(?!\}))*?)"
    r"\s*/?\s*[>%]\}\}"
)
_ARG = lazy_pattern(
    r"(?:(?P<key>[\w-]+)\s*=\s*)?(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|`(?P<bq>[^`]*)`|(?P<bare>[^\s\"'`]+))"
)
_DISPLAY_KEYS = frozenset({"caption", "title", "text", "label", "alt"})


def has_shortcode(text: str) -> bool:
    return "{{" in text and _CALL.search(text) is not None


def _arguments(args: str) -> list[tuple[str, str]]:
    """(key, value) of each argument; key "" for a positional one."""
    out = []
    for m in _ARG.finditer(args):
        value = next((v for v in (m["dq"], m["sq"], m["bq"], m["bare"]) if v is not None), "")
        out.append((m["key"] or "", value))
    return out


def _render(text: str, m: re.Match[str]) -> str:
    if m["close"]:
        return ""
    name = m["name"]
    args = _arguments(m["args"])
    if not args:
        closed = re.search(r"\{\{[<%]\s*/\s*" + re.escape(name) + r"\s*[>%]\}\}", text[m.end() :])
        return "" if closed else f"({name.replace('-', ' ').replace('_', ' ')})"
    if text[: m.start()].endswith("]("):
        return args[0][1]
    return next((value for key, value in args if key.lower() in _DISPLAY_KEYS), "")


def render_shortcodes(text: str) -> str:
    """The text with every shortcode call replaced by what it renders to (see the module docstring); the
    blanks a removed call leaves are collapsed."""
    if "{{" not in text:
        return text
    out = _CALL.sub(lambda m: _render(text, m), text)
    return re.sub(r"[ \t]{2,}", " ", out).strip() if out != text else text


def markup_only(line: str) -> bool:
    """A line holding shortcode calls and nothing they render: a blank line for the block reader."""
    return "{{" in line and _CALL.search(line) is not None and not render_shortcodes(line).strip()
