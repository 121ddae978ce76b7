"""Run a Python plugin as a DS016 process: one-shot or warm worker, with the protocol's error contract.

A plugin is a set of handler functions, one per op:

    plugin = Plugin("kb-fast", "kb-plugin", {"retrieve": retrieve, "onSourceText": on_source_text})
    if __name__ == "__main__":
        plugin.main()

A handler takes a `Call` and returns a `CnlDocument` (see `reply`). It raises `PluginFailure` for a
processing error (exit 1) or `InvalidInput` for a request it cannot accept (exit 2). The SDK decodes
and validates the request, applies the deadline (exit 3), renders the CNL and keeps stdout clean: while
a handler runs, anything it prints goes to stderr.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mrpvm.protocol.cnl import render_document
from mrpvm.protocol.cnl_compact import COMPACT_FORM, COMPACT_OPS, encode_compact
from mrpvm.protocol.document import CnlDocument, KnowledgeUnit, PluginResult
from mrpvm.protocol.envelope import (
    DecodedRequest,
    LLMAccess,
    RequestError,
    WireRequest,
    context_item_to_unit,
    decode_request,
)
from mrpvm.protocol.errors import encode_error_line
from mrpvm.protocol.framing import FramingError, encode_frame
from mrpvm.protocol.gc_pause import freeze_startup_objects, paused_gc
from mrpvm.protocol.vocab import (
    EXIT_INVALID_INPUT,
    EXIT_OK,
    EXIT_PROCESSING_ERROR,
    EXIT_TIMEOUT,
    OPS_BY_TYPE,
)

from .marks import ON as MARKS
from .marks import mark
from .worker_input import WorkerInput

if TYPE_CHECKING:
    from pathlib import Path  # imported when used: a one-shot plugin should not pay for it at start

# A handler stops this long before the kernel's deadline so its timeout answer arrives first.
DEADLINE_MARGIN_S = 0.02
# Ops that take a whole source: their handler runs, and a reply with this many units or more is
# rendered, with the cyclic GC paused (protocol/gc_pause.py: their objects hold no cycles).
SOURCE_OPS = frozenset({"normalizePersistentContext", "onSourceText"})
BULK_REPLY_UNITS = 256


class PluginFailure(Exception):
    """A processing error with a code the kernel can act on (exit 1 in one-shot mode)."""

    exit_code = EXIT_PROCESSING_ERROR

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code, self.message, self.details = code, message, details or {}


class InvalidInput(PluginFailure):
    """The request is well-formed JSON but this plugin cannot accept it (exit 2)."""

    exit_code = EXIT_INVALID_INPUT


class DeadlineExceeded(BaseException):
    """Raised inside a handler when the request's deadline passes (exit 3).

    A BaseException, so a handler's own `except Exception` cannot swallow the deadline.
    """


class Call:
    """What a handler receives: the op, the envelope, the typed payload and helpers."""

    __slots__ = ("op", "request", "payload", "plugin", "deadline", "llm_calls", "state")

    def __init__(self, plugin: Plugin, decoded: DecodedRequest, deadline: float):
        self.op = decoded.op
        self.request: WireRequest = decoded.envelope
        self.payload: Any = decoded.payload
        self.plugin = plugin
        self.deadline = deadline
        self.llm_calls = 0
        self.state = plugin.state

    @property
    def prompt(self) -> str:
        return self.request.prompt

    @property
    def llm(self) -> LLMAccess | None:
        return self.request.llm

    def time_left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def artifacts(self) -> Path | None:
        """This plugin's private folder for the mounted KB (created on first use), if the kernel gave one."""
        raw = self.request.paths.artifacts
        if not raw:
            return None
        from pathlib import Path

        path = Path(raw)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def context_units(self) -> list[KnowledgeUnit]:
        """The request's context items read back as units (bare DS016 requests carry only these)."""
        return [context_item_to_unit(item, i) for i, item in enumerate(self.request.context)]

    def reply(self, status: str, confidence: str | None = None, **kwargs: Any) -> CnlDocument:
        return reply(self.plugin.id, status, confidence, **kwargs)


def reply(
    plugin_id: str,
    status: str,
    confidence: str | None = None,
    *,
    result: str = "",
    evidence: str = "",
    notes: str = "",
    code: str | None = None,
    llm_calls: int = 0,
    **sections: Any,
) -> CnlDocument:
    """Build an output document: the result block plus sections (intents, units, resolved, plan, answer, sources)."""
    block = PluginResult(
        status=status,
        plugin=plugin_id,
        confidence=confidence,
        result=result,
        evidence=evidence,
        notes=notes,
        code=code,
        llmCalls=llm_calls,
    )
    return CnlDocument(result=block, **sections)


Handler = Callable[[Call], CnlDocument]


def _on_alarm(signum: int, frame: Any) -> None:
    raise DeadlineExceeded()


class Plugin:
    """A plugin id, its type, and one handler per op it implements."""

    def __init__(
        self,
        plugin_id: str,
        plugin_type: str,
        handlers: dict[str, Handler],
        on_worker_start: Callable[[], None] | None = None,
    ):
        unknown = set(handlers) - set(OPS_BY_TYPE[plugin_type])
        if unknown:
            raise ValueError(f"{plugin_id}: ops {sorted(unknown)} do not belong to {plugin_type}")
        self.id = plugin_id
        self.type = plugin_type
        self.handlers = handlers
        self.on_worker_start = on_worker_start
        self.state: dict[str, Any] = {}  # survives between requests in worker mode
        self.compact = False  # the last request asked for the compact reply (protocol/cnl_compact.py)

    # ------------------------------------------------------------------ one request

    def run(
        self, data: bytes, *, use_alarm: bool = False
    ) -> tuple[CnlDocument | None, PluginFailure | None, int]:
        """Handle one request body: (document, failure, exit code). Never raises."""
        try:
            return self._run(data, use_alarm)
        except DeadlineExceeded:  # the alarm fired between the handler's return and the timer reset
            signal.setitimer(signal.ITIMER_REAL, 0)
            return None, PluginFailure("TIMEOUT", f"{self.id} exceeded its deadline"), EXIT_TIMEOUT

    def _run(self, data: bytes, use_alarm: bool) -> tuple[CnlDocument | None, PluginFailure | None, int]:
        self.compact = False
        try:
            decoded = decode_request(data, self.type)
        except RequestError as err:
            return None, InvalidInput(err.code, str(err)), EXIT_INVALID_INPUT
        self.compact = decoded.op in COMPACT_OPS and getattr(decoded.payload, "replyForm", "") == COMPACT_FORM
        handler = self.handlers.get(decoded.op)
        if MARKS:  # bench/cold_ask_timeline.py --workers
            mark(f"> {decoded.op}")
        request_id = decoded.envelope.id
        if handler is None:
            doc = reply(self.id, "unsupported", result=f"{self.id} does not implement {decoded.op}")
            return self._stamp(doc, request_id, 0), None, EXIT_OK
        budget_s = max(0.001, decoded.envelope.budget.deadlineMs / 1000.0)
        deadline = time.monotonic() + budget_s
        call = Call(self, decoded, deadline)
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, budget_s - min(DEADLINE_MARGIN_S, budget_s / 10)))
        try:
            if decoded.op in SOURCE_OPS:
                with paused_gc():
                    doc = handler(call)
            else:
                doc = handler(call)
        except DeadlineExceeded:
            failure = PluginFailure("TIMEOUT", f"{self.id} exceeded its deadline of {budget_s * 1000:.0f} ms")
            return None, failure, EXIT_TIMEOUT
        except PluginFailure as refused:
            return None, refused, refused.exit_code
        except Exception as exc:  # a bug in the plugin: report it, do not die silently
            failure = PluginFailure("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}")
            return None, failure, EXIT_PROCESSING_ERROR
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
        if not isinstance(doc, CnlDocument):
            failure = PluginFailure(
                "INTERNAL_ERROR", f"handler for {decoded.op} returned {type(doc).__name__}"
            )
            return None, failure, EXIT_PROCESSING_ERROR
        return self._stamp(doc, request_id, call.llm_calls), None, EXIT_OK

    def _stamp(self, doc: CnlDocument, request_id: str | int | None, llm_calls: int) -> CnlDocument:
        result = doc.result
        result.plugin = result.plugin or self.id
        if request_id is not None:
            result.request = str(request_id)
        if llm_calls and not result.llmCalls:
            result.llmCalls = llm_calls
        return doc

    def handle(self, data: bytes) -> str:
        """In-process use (tests, benchmarks): the CNL text, or an error document."""
        doc, failure, _ = self.run(data)
        if doc is None:
            assert failure is not None
            doc = reply(self.id, "error", code=failure.code, result=failure.message)
        return render_reply(doc)

    # ------------------------------------------------------------------ process modes

    def main(self) -> None:
        """Entry point: worker mode when MRPVM_WORKER=1 (or --worker), one-shot otherwise."""
        out_fd = os.dup(1)
        os.dup2(2, 1)  # stray prints (even from C code) go to stderr, never into the protocol stream
        sys.stdout = sys.stderr
        signal.signal(signal.SIGALRM, _on_alarm)
        freeze_startup_objects()  # the imports: never walked again by a collection during a call
        worker = os.environ.get("MRPVM_WORKER") == "1" or "--worker" in sys.argv[1:]
        code = self._serve(out_fd) if worker else self._one_shot(out_fd)
        sys.stderr.flush()
        os._exit(code)

    def _one_shot(self, out_fd: int) -> int:
        data = sys.stdin.buffer.read()
        doc, failure, code = self.run(data, use_alarm=True)
        if failure is not None:
            os.write(2, encode_error_line(failure.code, failure.message, failure.details))
            return code
        _write_all(out_fd, self.reply_bytes(doc))  # type: ignore[arg-type]
        return EXIT_OK

    def _serve(self, out_fd: int) -> int:
        mark("started")
        if self.on_worker_start is not None:
            self.on_worker_start()
            freeze_startup_objects()  # and what the start loaded (a model, a lexicon)
        requests = WorkerInput()
        while True:
            try:
                body = requests.next_frame()
            except FramingError as err:
                os.write(2, encode_error_line("FRAMING_ERROR", str(err)))
                return EXIT_INVALID_INPUT
            if body is None:
                return EXIT_OK
            doc, failure, _ = self.run(body, use_alarm=True)
            if failure is not None:
                doc = reply(self.id, "error", code=failure.code, result=failure.message)
                request_id = _peek_id(body)
                if request_id is not None:
                    doc.result.request = str(request_id)
                self.compact = False
            _write_all(out_fd, encode_frame(self.reply_bytes(doc)))  # type: ignore[arg-type]
            if MARKS:
                mark("< replied")
            requests.replied()

    def reply_bytes(self, doc: CnlDocument) -> bytes:
        """What the plugin writes for `doc`: the compact reply when the request asked for it, else CNL."""
        if self.compact:
            return encode_compact(doc)
        return render_reply(doc).encode()


def render_reply(doc: CnlDocument) -> str:
    """The reply's CNL; a large one (a source's KU tree) rendered with the cyclic GC paused."""
    if len(doc.units) < BULK_REPLY_UNITS:
        return render_document(doc)
    with paused_gc():
        return render_document(doc)


def _peek_id(body: bytes) -> str | int | None:
    import msgspec

    class _Id(msgspec.Struct):
        id: str | int | None = None

    try:
        return msgspec.json.decode(body, type=_Id).id
    except msgspec.MsgspecError:
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
