"""An option documented as a YAML mapping is one unit: its description and its fields
(sd_symbolic/source_units/yaml_entries.py). Read as Markdown, the description's `- ` items ran on through
`type:` and `default:` into the next option's key, so an option's default stood in the unit of the option
before it: "What is the default value of retries?" could not quote it, and the unit of `backoff` ended
with "retries: description.". Here the key is the unit's term, and the default is quoted."""

from __future__ import annotations

from answer_support import ask, needs_model, units_of
from mrpvm.plugins.sd_symbolic.source_units.blocks import parse_blocks

MODULE = """# kestrel_snapshot - take a snapshot of a volume

DOCUMENTATION = r'''
module: kestrel_snapshot
short_description: Take a snapshot of a volume
description:
     - Takes a snapshot of a volume and stores it in the vault.
     - The snapshot is verified before the module returns.
options:
  volume:
    description:
      - The name of the volume to snapshot.
    type: str
    required: true
  backoff:
    description:
      - Seconds to wait between two attempts to reach the vault.
      - The wait doubles after every failed attempt.
    type: int
    default: 4
  retries:
    description:
      - How many times the module tries to reach the vault before it fails.
    type: int
    default: 3
  compress:
    description:
      - Whether the snapshot is compressed before it is stored.
    type: bool
    default: true
    version_added: "2.1"
'''

RETURN = r'''
snapshot_id:
  description: The identifier the vault gave to the new snapshot
  returned: success
  type: str
'''
"""

PROSE = """Setup:
  - install the package
  - run kestrel init

Options:
  verbose: print more
  quiet: print less
"""


def test_an_option_its_description_and_fields_are_one_definition():
    blocks = parse_blocks(MODULE)
    entries = {b.title: MODULE[b.start : b.end] for b in blocks if b.kind == "definition"}
    assert set(entries) >= {"volume", "backoff", "retries", "compress", "snapshot_id"}
    assert "default: 4" in entries["backoff"] and "retries" not in entries["backoff"]
    assert "default: 3" in entries["retries"]
    assert "returned: success" in entries["snapshot_id"]
    # the module's own description stays a list, and ends before the mapping's next key
    listed = [MODULE[b.start : b.end] for b in blocks if b.kind == "list"]
    assert any("verified before" in text and "options" not in text for text in listed)
    # a key over a sequence opens its own block: "description:" is not the end of the paragraph above it
    labels = [MODULE[b.start : b.end] for b in blocks if b.kind == "paragraph"]
    assert "description:" in labels and not any(
        "short_description" in t and "description:\n" in t for t in labels
    )


def test_a_list_under_a_label_in_prose_is_no_entry():
    assert not [b for b in parse_blocks(PROSE) if b.kind == "definition"]


@needs_model
def test_the_default_of_an_option_is_quoted_from_its_own_entry():
    units = units_of(MODULE, "kestrel_snapshot.py")
    doc = ask("What is the default value of retries?", units)
    assert "default: 3" in (doc.answer or ""), doc.answer
    doc = ask("What does the backoff option do?", units)
    assert "between two attempts" in (doc.answer or ""), doc.answer
    assert "retries" not in (doc.answer or ""), doc.answer
