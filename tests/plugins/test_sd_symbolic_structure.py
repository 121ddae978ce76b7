"""Golden tests of structure that labels truthfully (issue 20, item 4), on documents written here: a man
page option's own line is its unit's heading, so a citation names the heading the quoted sentence stands
under (also after an option with a long description); a step keeps the code block that follows it; a
default stated in its own sentence after an option's description belongs to the option's unit and is
quoted."""

from __future__ import annotations

import json

import msgspec
from mrpvm.kernel.engine.response import _ref
from mrpvm.plugins.gs_symbolic.__main__ import plugin as gs
from mrpvm.plugins.sd_symbolic.source_units.assemble import build_tree
from mrpvm.plugins.sd_symbolic.source_units.tree import SourceMeta
from mrpvm.protocol.cnl import parse_document
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit

LONG = " ".join(
    f"Sentence {i} of the long description says something about forwarding rules." for i in range(30)
)
MAN = f"""FETCHER(1)                         User Commands                        FETCHER(1)

NAME
       fetcher - transfer a URL

OPTIONS
       -L, --location
              If the server reports that the requested page has moved, this option makes fetcher
              redo the request on the new place.

       --forward-rules
              {LONG}

       --max-redirs <num>
              Set the maximum number of redirections to follow when --location is used.

              The default is 50.

       -m, --max-time <seconds>
              Set the maximum time in seconds that you allow the whole operation to take.
"""
GUIDE = """# Quill setup guide

## Installing Quill

1. Download the release archive and unpack it.
2. Build the binary with the bundled script:

   ```
   ./build.sh --release
   ```

3. Run `quill --version` to check the install.

## Configuration

The `cache_size` setting controls how many pages Quill keeps in memory. It accepts a number of pages.

The default is 256.

The `sync` setting decides when Quill writes to disk.
"""


def units(text: str, name: str) -> list[KnowledgeUnit]:
    return build_tree(text, SourceMeta(name, name, "text"))


def solve(question: str, evidence: list[KnowledgeUnit], act: str = "identify") -> CnlDocument:
    payload = {
        "intent": msgspec.to_builtins(IntentGroup(index=1, act=act, intent=question, output="free text")),
        "evidence": msgspec.to_builtins([u for u in evidence if u.kuType == "atomic"]),
        "guidance": [],
        "allowDecompose": False,
    }
    request = {"op": "solve", "prompt": question, "context": [], "payload": payload}
    return parse_document(gs.handle(json.dumps(request).encode()), "solve")


def unit_saying(found: list[KnowledgeUnit], words: str) -> KnowledgeUnit:
    return next(u for u in found if u.kuType == "atomic" and words in (u.claim or u.procedure or ""))


def test_an_option_line_is_the_heading_its_description_is_cited_under():
    found = units(MAN, "fetcher.1")
    max_time = unit_saying(found, "maximum time in seconds")
    assert max_time.heading == "-m, --max-time <seconds>"
    assert max_time.sectionTitle == "OPTIONS > -m, --max-time <seconds>"
    doc = solve("What does --max-time do?", found)
    cited = [_ref(u) for u in found if u.id in doc.sources]
    assert cited and all(r.section == "-m, --max-time <seconds>" for r in cited), cited
    # an option with a long description stays a definition, not the section of every later option
    assert unit_saying(found, "Sentence 0 of the long").heading == "--forward-rules"
    assert unit_saying(found, "maximum number of redirections").heading == "--max-redirs <num>"


def test_a_default_in_its_own_sentence_belongs_to_the_option_and_is_quoted():
    found = units(MAN, "fetcher.1")
    assert "The default is 50." in unit_saying(found, "maximum number of redirections").claim
    assert "The default is 50." in solve("What is the default of --max-redirs?", found).answer
    guide = units(GUIDE, "guide.md")
    cache = unit_saying(guide, "controls how many pages")
    assert cache.claim.endswith(
        "The default is 256."
    )  # its own paragraph, joined to what it is the default of
    assert "The `sync` setting" not in cache.claim
    assert "256" in solve("What is the default cache_size?", guide).answer


def test_a_step_keeps_the_code_block_that_follows_it():
    guide = units(GUIDE, "guide.md")
    steps = unit_saying(guide, "Build the binary")
    assert steps.role == "Procedure"
    assert (
        "2. Build the binary with the bundled script:\n```\n./build.sh --release\n```\n3. Run"
        in steps.procedure
    )
    answer = solve("How do I install Quill?", guide, act="implement").answer
    assert "2. Build the binary with the bundled script:\n   ```\n   ./build.sh --release\n   ```" in answer
    assert "3. Run `quill --version`" in answer  # numbering goes on after the code block
