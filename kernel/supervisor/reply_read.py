"""A plugin's reply bytes to a parsed document: compact (MessagePack) or CNL, the GC paused for a large tree."""

from __future__ import annotations

from mrpvm.protocol.cnl import CnlError, parse_document
from mrpvm.protocol.cnl_compact import ShippedAnalysis, is_compact, read_compact
from mrpvm.protocol.document import CnlDocument
from mrpvm.protocol.gc_pause import paused_gc

from .errors import INVALID_CNL, PROTOCOL_ERROR, ProcessFailure

# A reply this large (a source's KU tree, ~850 bytes a unit) is parsed with the cyclic GC paused.
BULK_REPLY_BYTES = 256 * 1024


def read_reply(data: bytes, op: str, compact: bool) -> tuple[CnlDocument, ShippedAnalysis | None, str]:
    """(document, analysis shipped with a compact reply, the CNL text: "" for a compact reply).

    Raises ProcessFailure (PROTOCOL_ERROR: not UTF-8; INVALID_CNL with each issue's line and rule)."""
    try:
        if compact and is_compact(data):
            document, shipped = read_compact(data, op)
            return document, shipped, ""
        text = data.decode()
        if len(data) < BULK_REPLY_BYTES:
            return parse_document(text, op), None, text
        with paused_gc():  # a source's KU tree: its objects hold no cycles (protocol/gc_pause.py)
            return parse_document(text, op), None, text
    except UnicodeDecodeError as err:
        raise ProcessFailure(PROTOCOL_ERROR, f"output is not UTF-8: {err}") from err
    except CnlError as err:
        issues = [{"line": i.line, "rule": i.rule, "message": i.message} for i in err.issues]
        raise ProcessFailure(INVALID_CNL, str(err), details={"issues": issues}) from err
