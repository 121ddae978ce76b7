"""Patterns compiled on first use (plugins/sdk/patterns.py): the same answers as `re.compile`, and a plugin
worker's start compiles none of sd-symbolic's or gs-symbolic's module-level patterns (a cold `mrpvm ask` used
to compile ~145 at sd-symbolic's import and ~100 at gs-symbolic's, half of them never used by its calls)."""

from __future__ import annotations

import json
import re
import string
import subprocess
import sys

from mrpvm.plugins.sdk.patterns import LazyPattern, lazy_pattern

TEXTS = ["", "Run `tessel build --changed` now.", "a-b_c  D\n--flag=1; x", "ÉCOLE école 3.10.2"]


def test_a_lazy_pattern_answers_as_the_compiled_one():
    for source, flags in [
        (r"(?P<word>[a-z]+)-(\w)", 0),
        (r"\b(?:école|run)\b", re.I),
        (r"--?[a-z]+", re.M),
        (r"\s+", 0),
    ]:
        lazy, compiled = lazy_pattern(source, flags), re.compile(source, flags)
        assert isinstance(lazy, LazyPattern) and lazy.compiled is None
        assert lazy.pattern == compiled.pattern and lazy.compiled is None  # the source needs no compile
        for text in TEXTS:
            for method in ("search", "match", "fullmatch"):
                got, want = getattr(lazy, method)(text), getattr(compiled, method)(text)
                assert (got and got.group(0)) == (want and want.group(0))
            assert lazy.findall(text) == compiled.findall(text)
            assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
            assert lazy.sub("<\\g<0>>", text) == compiled.sub("<\\g<0>>", text)
            assert lazy.sub(lambda m: m.group(0).upper(), text, count=1) == compiled.sub(
                lambda m: m.group(0).upper(), text, count=1
            )
            assert lazy.subn("", text) == compiled.subn("", text)
            assert lazy.split(text, maxsplit=1) == compiled.split(text, maxsplit=1)
        assert (lazy.flags, lazy.groups, dict(lazy.groupindex)) == (
            compiled.flags,
            compiled.groups,
            dict(compiled.groupindex),
        )
        first = lazy.compiled
        assert first is not None
        lazy.search("x")
        assert lazy.compiled is first  # compiled once
        assert lazy.search.__self__ is first  # later calls go straight to the compiled pattern


# a fresh interpreter: imports a plugin as its worker does and reports its module-level patterns
COUNT = string.Template("""
import json, sys
import mrpvm.plugins.$plugin.__main__
from mrpvm.plugins.sdk.patterns import LazyPattern

def patterns(value, depth=0):
    if isinstance(value, LazyPattern):
        yield value
    elif depth < 3 and isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from patterns(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            yield from patterns(item, depth + 1)

found = {id(p): p for name, module in list(sys.modules.items())
         if name.startswith(("mrpvm.plugins.$plugin", "mrpvm.plugins.sdk"))
         for value in vars(module).values() for p in patterns(value)}
print(json.dumps({"lazy": len(found), "compiled": sum(p.compiled is not None for p in found.values())}))
""")


def start_counts(plugin: str) -> dict[str, int]:
    code = COUNT.substitute(plugin=plugin)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_sd_symbolic_compiles_no_pattern_at_its_start():
    counts = start_counts("sd_symbolic")
    assert counts["lazy"] >= 100  # sd-symbolic's and the sdk's module-level patterns
    assert counts["compiled"] == 0


def test_gs_symbolic_compiles_no_pattern_at_its_start():
    counts = start_counts("gs_symbolic")
    assert counts["lazy"] >= 90  # gs-symbolic's and the sdk's module-level patterns
    assert counts["compiled"] == 0
