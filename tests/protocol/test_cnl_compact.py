"""The compact reply (protocol/cnl_compact.py, SPEC.md "Compact reply"): a normalizePersistentContext answer
as one MessagePack map, read back into the document its CNL gives and refused by the same rules."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.kernel.config import PROJECT_ROOT
from mrpvm.kernel.supervisor.worker import reply_request_id
from mrpvm.plugins.sd_symbolic.__main__ import plugin as sd_symbolic
from mrpvm.protocol.cnl import CnlError, parse_document, render_document
from mrpvm.protocol.cnl_compact import (
    CompactReply,
    ShippedAnalysis,
    compact_request_id,
    decode_compact,
    encode_compact,
    is_compact,
    read_compact,
)
from mrpvm.protocol.cnl_render import carried_text
from mrpvm.protocol.document import CnlDocument, IntentGroup, KnowledgeUnit, PluginResult
from mrpvm.protocol.envelope import Budget, NormalizePayload, Request, encode_request
from mrpvm.protocol.examples import EXAMPLE_RESPONSES
from mrpvm.protocol.handoff import (
    ANALYSER,
    UnitAnalysis,
    analyse_unit,
    analyse_units,
    encode_handoff,
    ship_analysis,
)

OP = "normalizePersistentContext"


def normalize_request(
    text: str, reply_form: str = "msgpack", request_id: int | None = 7, scope: str = "kb"
) -> bytes:
    payload = NormalizePayload(
        sourceId="src-t", sourceName="t.md", text=text, replyForm=reply_form, scope=scope
    )  # type: ignore[arg-type]
    return encode_request(
        Request(
            prompt="n", context=[], op=OP, payload=payload, budget=Budget(deadlineMs=60_000), id=request_id
        )
    )


def tessel_tree() -> CnlDocument:
    doc, failure, _ = sd_symbolic.run(
        normalize_request((PROJECT_ROOT / "examples" / "tessel-build.md").read_text())
    )
    assert failure is None and doc is not None and len(doc.units) > 10
    return doc


def unit(**changes) -> KnowledgeUnit:
    fields = dict(id="s::u1", sourceId="s", chunkId="s::c0", kuType="atomic", role="Description", topic="t")
    fields.update(claim="A claim.")
    fields.update(changes)
    return KnowledgeUnit(**fields)


def reply_of(*units: KnowledgeUnit, **result) -> bytes:
    block = dict(status="success", plugin="p", confidence="high") | result
    return encode_compact(CnlDocument(result=PluginResult(**block), units=list(units)))


@pytest.mark.parametrize("doc", [EXAMPLE_RESPONSES[OP], "tessel"], ids=["spec example", "sd-symbolic tessel"])
def test_a_compact_reply_reads_back_the_document_its_cnl_gives(doc):
    doc = tessel_tree() if doc == "tessel" else doc
    data = encode_compact(doc)
    assert is_compact(data) and not is_compact(render_document(doc).encode())
    assert decode_compact(data, OP) == parse_document(render_document(doc), OP)


def test_the_sdk_answers_compact_only_when_asked():
    """sd-symbolic through the SDK: payload.replyForm msgpack -> the MessagePack form, carrying the request
    id where the worker's id check reads it and each unit's analysis as the kernel makes it; cnl (the
    default, what a plain request says) -> CNL text, the same units."""
    source = "# Title\n\nThe cache holds built files. Clean it with tessel clean.\n"
    doc, _, _ = sd_symbolic.run(normalize_request(source))
    assert sd_symbolic.compact and is_compact(data := sd_symbolic.reply_bytes(doc))
    assert reply_request_id(data) == compact_request_id(data) == b"7"
    read, shipped = read_compact(data, OP)
    assert read == CnlDocument(result=doc.result, units=doc.units) and len(read.units) >= 3
    assert shipped is not None and shipped.analyser == ANALYSER
    assert msgspec.msgpack.decode(shipped.analysis, type=list[UnitAnalysis]) == [
        analyse_unit(u) for u in read.units
    ]
    session, _, _ = sd_symbolic.run(normalize_request(source, scope="session"))  # no units file: no analysis
    session_read, session_shipped = read_compact(sd_symbolic.reply_bytes(session), OP)
    assert len(session_read.units) == len(read.units) and session_shipped is None
    cnl_doc, _, _ = sd_symbolic.run(normalize_request(source, reply_form="cnl"))
    text = sd_symbolic.reply_bytes(cnl_doc)
    assert not sd_symbolic.compact and text.startswith(b"## Plugin Result") and reply_request_id(text) == b"7"
    undated = [msgspec.structs.replace(u, createdAt=None) for u in read.units]  # two runs: two clocks
    assert [
        msgspec.structs.replace(u, createdAt=None) for u in parse_document(text.decode(), OP).units
    ] == undated


def test_the_kernel_takes_a_shipped_analysis_only_where_it_fits():
    """protocol/handoff.py `analyse_units`: a unit's shipped analysis is used when it is by this analyser,
    aligned and carries the unit's hash; a unit the kernel changed, another analyser, a list of another
    length or bytes that are no analysis: analysed again. The units file is the same either way."""
    units = tessel_tree().units
    shipped = ship_analysis([analyse_unit(u) for u in units])
    assert encode_handoff("s", "t", "x", units, shipped=shipped) == encode_handoff("s", "t", "x", units)
    fake = [msgspec.structs.replace(analyse_unit(u), body="planted") for u in units]
    changed = [msgspec.structs.replace(units[0], hash="other", claim="Another claim."), *units[1:]]
    used = analyse_units(changed, ship_analysis(fake))
    assert used[0] == analyse_unit(changed[0]) and used[1:] == fake[1:]
    for other in (
        ShippedAnalysis("mrpvm-terms-0", ship_analysis(fake).analysis),
        ship_analysis(fake[1:]),
        ShippedAnalysis(ANALYSER, msgspec.Raw(b"\xc0")),
    ):
        assert analyse_units(units, other) == [analyse_unit(u) for u in units]


BROKEN = [
    (reply_of(unit(kuType="molecule")), "enum"),
    (reply_of(unit(role="Wish")), "enum"),
    (reply_of(unit(utilityActs=["explain", "dance"])), "enum"),
    (reply_of(unit(topic="")), "required-field"),
    (reply_of(unit(procedure="Do it.")), "claim-or-procedure"),
    (reply_of(unit(claim=None)), "claim-or-procedure"),
    (reply_of(unit(role="Procedure")), "procedure-role"),
    (reply_of(unit(subject="a", relation="uses")), "triple-all-or-none"),
    (reply_of(unit(subject="a", relation="uses", object="b", confidence=1.5)), "confidence-range"),
    (reply_of(unit(confidence=0.5)), "confidence-needs-triple"),
    (reply_of(unit(chunkIndex=-1)), "int"),
    (reply_of(unit(score=float("nan"))), "float"),
    (reply_of(unit(parentUnitIds=["a, b"])), "csv"),
    (reply_of(unit(id="two words")), "bad-heading"),
    (reply_of(unit(), unit()), "duplicate-section"),
    (reply_of(unit(), confidence=None), "confidence-required"),
    (reply_of(unit(), status="splendid"), "enum"),
    (
        encode_compact(
            CnlDocument(
                result=PluginResult(status="success", plugin="p", confidence="high"),
                intents=[IntentGroup(act="explain", intent="why", output="prose")],
            )
        ),
        "section-not-allowed",
    ),
    (b"\x81\xa6result\xc0", "compact"),  # result: nil
    (b"\x82\xa6result\x81\xa6status\xa7success", "compact"),  # truncated
    (msgspec.msgpack.encode({"units": []}), "compact"),  # no result block
]


@pytest.mark.parametrize(("data", "rule"), BROKEN, ids=[rule for _, rule in BROKEN])
def test_a_broken_compact_reply_is_refused_by_the_cnl_rules(data, rule):
    with pytest.raises(CnlError) as info:
        decode_compact(data, OP)
    assert rule in {issue.rule for issue in info.value.issues}


def test_only_normalize_may_be_answered_compact():
    data = reply_of(unit())
    assert decode_compact(data, OP).units == [unit()]
    with pytest.raises(CnlError) as info:
        decode_compact(data, "retrieve")
    assert "compact" in {issue.rule for issue in info.value.issues}


_TEXT_PARTS = st.sampled_from([*"ab ,:#-\t\n\r\x0b\x0c\x85\u2028\u2010", "## ", "\n## ", "  ", "\r\n"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_TEXT_PARTS, max_size=24).map("".join))
def test_carried_text_is_what_the_cnl_form_reads_back(text):
    """cnl_render.carried_text, the compact reply's reading of a text value, is the CNL round trip's."""
    doc = CnlDocument(
        result=PluginResult(status="success", plugin="p", confidence="high"), units=[unit(textBody=text)]
    )
    assert parse_document(render_document(doc), OP).units[0].textBody == carried_text(text)


def test_untidy_text_reads_as_its_cnl_and_drops_the_shipped_analysis():
    """A compact reply whose text the CNL form would carry otherwise (CRs, outer or trailing whitespace, an
    empty title) gives the CNL form's document; its shipped analysis, made from the text as sent, is not used."""
    untidy = unit(claim="  A claim.\r\nSecond line.\t\n \n", title="", textBody="Body  ")
    doc = CnlDocument(result=PluginResult(status="success", plugin="p", confidence="high"), units=[untidy])
    data = encode_compact(
        CompactReply(
            result=doc.result,
            units=doc.units,
            analyser=ANALYSER,
            analysis=ship_analysis([analyse_unit(untidy)]).analysis,
        )
    )
    read, shipped = read_compact(data, OP)
    assert read == parse_document(render_document(doc), OP)
    assert read.units[0].claim == "A claim.\nSecond line." and read.units[0].title is None and shipped is None
    tidy = encode_compact(
        CompactReply(
            result=doc.result, units=read.units, analyser=ANALYSER, analysis=ship_analysis([]).analysis
        )
    )
    assert read_compact(tidy, OP)[1] is not None  # tidy text: the analysis travels on
