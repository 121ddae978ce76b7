"""A unit's body field: its claim, with its TextBody only when that adds words. A TextBody that is the claim
as laid out in the source (a table's padded cells and rule row) is not counted twice."""

from __future__ import annotations

import msgspec
from mrpvm.protocol.analysis import terms
from mrpvm.protocol.document import KnowledgeUnit
from mrpvm.protocol.handoff import body_text

CLAIM = "| Port | Service |\n| 7001 | tide gauge |\n| 7002 | harbour log |"
LAID_OUT = "| Port | Service     |\n| ---- | ----------- |\n| 7001 | tide gauge  |\n| 7002 | harbour log |"


def _unit(claim: str, text_body: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id="u",
        sourceId="s",
        chunkId="c",
        kuType="atomic",
        role="Description",
        topic="Ports",
        claim=claim,
        textBody=text_body,
        chunkType="table",
    )


def test_a_table_laid_out_with_padding_and_a_rule_row_is_its_claim() -> None:
    body = body_text(_unit(CLAIM, LAID_OUT))
    assert body == CLAIM
    assert terms(body).count("7001") == 1


def test_a_text_body_with_words_the_claim_lacks_is_kept_beside_it() -> None:
    body = body_text(_unit("The gauge listens on port 7001.", "It answers every ten minutes."))
    assert "port 7001" in body and "ten minutes" in body


def test_a_text_body_that_contains_the_claim_replaces_it() -> None:
    body = body_text(_unit("The gauge listens.", "Note: The gauge listens. It logs hourly."))
    assert body == "Note: The gauge listens. It logs hourly."


def test_a_list_renumbered_in_its_claim_is_its_claim() -> None:
    claim = "1. Moor at the east pier. 2. Pay the harbour fee."
    body = body_text(_unit(claim, "- Moor at the east pier.\n- Pay the harbour fee."))
    assert body == claim


def test_a_units_position_in_its_source() -> None:
    """review34: one home for the source order gs-symbolic's evidence and kb-thinkingdb's facts read units in:
    the first character, else chunk and unit index, else the caller's fallback."""
    unit = _unit("A claim.", "")
    assert unit.position(7) == 7
    indexed = msgspec.structs.replace(unit, chunkIndex=2, unitIndex=3)
    assert indexed.position(7) == 200_003
    assert msgspec.structs.replace(indexed, charStart=41).position(7) == 41
