"""`mrpvm plugin check`: does a plugin, in any language, keep protocol v1? (SPEC.md §10)

For every op its manifest declares, the op's example request (protocol/examples.py) must give valid CNL
with exit 0 and the manifest's id in `Plugin:` (a solve success with a non-empty `## Answer`); the bare
DS016 `{"prompt","context"}` must work for the main op; every named invalid request that every plugin
must refuse gives exit 2 with the error JSON as the last stderr line, and so does one about an optional
field the manifest `reads` (a field it does not read may be ignored: see check_judge.py); an input over
`maxInputSizeBytes` must be refused by the kernel before the plugin starts; a kb-plugin indexes a small
built-in document and answers realistic retrieves over it (check_scenario.py); and a plugin that declares
`worker` must answer several framed requests on one process, each with its own `Request:` id, survive a
bad request, and exit on EOF (check_worker.py).

Everything runs as the kernel runs it: one-shot probes through the Supervisor (`call_raw(one_shot=True)`),
the worker probe in the same sandbox with the same environment.
"""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile

import msgspec
from mrpvm.kernel.registry import PluginEntry, Registry
from mrpvm.protocol.envelope import ContextItem, Paths, Request, encode_request
from mrpvm.protocol.examples import EXAMPLE_REQUESTS
from mrpvm.protocol.invalid_examples import INVALID_REQUESTS
from mrpvm.protocol.vocab import MAIN_OP

from .check_handoff import check_handoff
from .check_judge import (
    CheckResult,
    effective_reads,
    judge_invalid,
    judge_llm_unreachable,
    judge_valid,
)
from .check_scenario import check_kb_scenario, scenario_applies
from .check_worker import STARTUP_SLACK_S, check_worker

BARE_REQUEST = {
    "prompt": "Verify that constraint X is satisfiable.",
    "context": [
        {"title": "sess-abc123::turn-003::unit-000", "sourceLink": "Current-Turn Context",
         "text": "Role: Constraint\nClaim: Variables are integers."},
        {"title": "src-001::chunk-000::unit-000", "sourceLink": "rules.md",
         "text": "Role: Constraint\nClaim: a + b must equal c."},
    ],
}  # fmt: skip
PARALLEL_PROBES = 2

__all__ = ["BARE_REQUEST", "CheckResult", "Report", "check_plugin", "manifest_failure"]


class Report(msgspec.Struct, kw_only=True):
    plugin: str
    passed: bool
    checks: list[CheckResult]
    target: str = ""
    notes: list[str] = []
    warnings: int = 0


class Fixtures(msgspec.Struct, frozen=True):
    """Where a plugin under check may write (never its own folder) and an LLM endpoint that refuses."""

    artifacts: str
    llm_url: str


def closed_llm_url() -> str:
    """A loopback URL nothing listens on: an LLM plugin under check gets a clean 'connection refused'."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def example_request(op: str, fx: Fixtures, *, with_llm: bool = True) -> Request:
    """The op's example request, its artifacts path moved under `fx.artifacts` and its LLM endpoint to
    `fx.llm_url` (or removed, with no LLM budget, when not `with_llm`)."""
    request = EXAMPLE_REQUESTS[op]
    if request.paths.artifacts is not None:
        request = msgspec.structs.replace(request, paths=Paths(artifacts=fx.artifacts))
    if request.llm is not None:
        if with_llm:
            request = msgspec.structs.replace(
                request, llm=msgspec.structs.replace(request.llm, baseUrl=fx.llm_url)
            )
        else:
            budget = msgspec.structs.replace(request.budget, llmCalls=0)
            request = msgspec.structs.replace(request, llm=None, budget=budget)
    return request


def example_body(
    op: str, fx: Fixtures, request_id: str | int | None = None, *, with_llm: bool = True
) -> bytes:
    """The example request as JSON with `protocolVersion` and `op` spelled out (and `id` for a frame)."""
    data = msgspec.to_builtins(example_request(op, fx, with_llm=with_llm))
    ordered = {
        "protocolVersion": 1,
        "op": op,
        **{k: v for k, v in data.items() if k not in ("protocolVersion", "op")},
    }
    if request_id is not None:
        ordered["id"] = request_id
    return msgspec.json.encode(ordered)


def _compact_body(fx: Fixtures) -> bytes:
    """The normalize example with `payload.replyForm: msgpack`, as an ingest asks a plugin declaring it."""
    data = msgspec.json.decode(example_body("normalizePersistentContext", fx))
    data["payload"] = {**data.get("payload", {}), "replyForm": "msgpack"}
    return msgspec.json.encode(data)


BATCH_OUTCOMES = ("req_check_batch_1", "req_check_batch_2")  # the request ids of the batch probe


def _batch_body(fx: Fixtures) -> bytes:
    """The recordOutcome example as a batch of two outcomes (SPEC "Outcome batches"), as the daemon sends one
    to a planner whose manifest sets `outcomeBatch` > 1: each outcome the example's payload with its own
    requestId, the payload's own fields empty."""
    data = msgspec.json.decode(example_body("recordOutcome", fx))
    single = data.get("payload", {})
    data["payload"] = {"outcomes": [{**single, "requestId": rid} for rid in BATCH_OUTCOMES]}
    return msgspec.json.encode(data)


def _batched(manifest) -> bool:
    """Whether the daemon would send this plugin batches (kernel/engine/outcome_batch.batching's rule)."""
    return (
        getattr(manifest, "outcomeBatch", 1) > 1
        and getattr(manifest, "maxLLMCalls", 0) == 0
        and "recordOutcome" in manifest.ops
    )


def oversize_request(op: str, limit: int, fx: Fixtures) -> bytes:
    """The op's example request padded with one context item so the body exceeds `limit` bytes."""
    request = msgspec.structs.replace(example_request(op, fx))
    base = len(encode_request(request))
    filler = ContextItem(title="padding", sourceLink="padding.md", text="x" * max(1, limit - base + 64))
    request.context = [*request.context, filler]
    return encode_request(request)


# --------------------------------------------------------------------------- one-shot probes


class _Probe(msgspec.Struct):
    name: str
    body: bytes
    op: str
    kind: str  # valid | llm-unreachable | invalid | batch (valid, its observations attributed)
    case: str = ""


def _probes(entry: PluginEntry, fx: Fixtures) -> list[_Probe]:
    ops = list(entry.manifest.ops)
    main_op = MAIN_OP[entry.type]
    probes = []
    for op in ops:
        if EXAMPLE_REQUESTS[op].llm is not None and entry.manifest.usesLLM:
            name = f"{op}: example request (its LLM endpoint refuses connections)"
            probes.append(_Probe(name, example_body(op, fx), op, "llm-unreachable"))
            name = f"{op}: example request without LLM access (llm: null)"
            probes.append(_Probe(name, example_body(op, fx, with_llm=False), op, "valid"))
        else:
            probes.append(_Probe(f"{op}: example request", example_body(op, fx), op, "valid"))
    if getattr(entry.manifest, "replyForm", "cnl") == "msgpack" and "normalizePersistentContext" in ops:
        name = "normalizePersistentContext: example request asking for the compact reply (replyForm: msgpack)"
        probes.append(_Probe(name, _compact_body(fx), "normalizePersistentContext", "valid"))
    if _batched(entry.manifest):
        name = f"recordOutcome: a batch of {len(BATCH_OUTCOMES)} outcomes (outcomeBatch), each observation naming its outcome"
        probes.append(_Probe(name, _batch_body(fx), "recordOutcome", "batch"))
    if main_op in ops:
        bare = msgspec.json.encode(BARE_REQUEST)
        probes.append(
            _Probe(f"{main_op}: bare DS016 request (prompt + context only)", bare, main_op, "valid")
        )
    for name, body in INVALID_REQUESTS.items():
        probes.append(_Probe(f"invalid input: {name}", body, main_op, "invalid", name))
    return probes


async def _run_probe(supervisor, entry: PluginEntry, probe: _Probe, timeout_s: float) -> CheckResult:
    from mrpvm.kernel.supervisor import PluginCallError

    try:
        reply = await supervisor.call_raw(entry.id, probe.body, timeout_s=timeout_s, one_shot=True)
    except PluginCallError as err:
        return CheckResult(
            name=probe.name, passed=False, detail=f"kernel error {err.error.code}: {err.error.message}"
        )
    if probe.kind == "invalid":
        return judge_invalid(reply, probe.case, probe.op, entry.id, effective_reads(entry.manifest))
    if probe.kind == "llm-unreachable":
        passed, detail = judge_llm_unreachable(reply, probe.op, entry.id)
    else:
        outcomes = BATCH_OUTCOMES if probe.kind == "batch" else ()
        passed, detail = judge_valid(reply, probe.op, entry.id, outcomes)
    return CheckResult(name=probe.name, passed=passed, detail=detail)


async def _check_size_limit(supervisor, entry: PluginEntry, timeout_s: float, fx: Fixtures) -> CheckResult:
    from mrpvm.kernel.supervisor import PluginCallError

    limit = entry.manifest.maxInputSizeBytes
    op = MAIN_OP[entry.type] if MAIN_OP[entry.type] in entry.manifest.ops else entry.manifest.ops[0]
    body = oversize_request(op, limit, fx)
    name = f"input over maxInputSizeBytes ({limit}) refused by the kernel"
    try:
        reply = await supervisor.call_raw(entry.id, body, timeout_s=timeout_s, one_shot=True)
    except PluginCallError as err:
        if err.error.code == "INPUT_TOO_LARGE":
            return CheckResult(name=name, passed=True, detail=f"{len(body)} bytes refused before spawning")
        return CheckResult(name=name, passed=False, detail=f"expected INPUT_TOO_LARGE, got {err.error.code}")
    return CheckResult(
        name=name, passed=False, detail=f"{len(body)} bytes reached the plugin (exit {reply.exitCode})"
    )


# --------------------------------------------------------------------------- the whole check


def _worker_argv(supervisor, entry: PluginEntry, fx: Fixtures) -> list[str]:
    """The worker's command as the kernel's pool starts it: in the sandbox (when active), with the check's
    artifacts folder writable and the same memory limit."""
    os.makedirs(fx.artifacts, exist_ok=True)
    return supervisor.sandbox.command(
        list(entry.argv),
        entry.folder,
        llm=bool(entry.manifest.usesLLM),
        writable=[fx.artifacts] if supervisor.sandbox.active else [],
        memory_bytes=supervisor.limits.pluginMemoryMB << 20,
    )


async def check_plugin(
    entry: PluginEntry, *, limits=None, notes: list[str] | None = None, target: str = ""
) -> Report:
    """Run every check against one plugin; never raises for a plugin's misbehaviour."""
    from mrpvm.kernel.supervisor import Supervisor

    timeout_s = entry.manifest.timeoutMs / 1000.0
    checks: list[CheckResult] = []
    mode = "worker + one-shot" if entry.manifest.worker else "one-shot"
    reads = sorted(effective_reads(entry.manifest))
    checks.append(
        CheckResult(
            name="manifest",
            passed=True,
            detail=f"{entry.type}, ops {', '.join(entry.manifest.ops)}, {mode}"
            + f"; reads {', '.join(reads) if reads else 'prompt and context only'}"
            + (" (legacy)" if entry.legacy else ""),
        )
    )
    if entry.type == "kb-plugin" and "onSourceText" in entry.manifest.ops:
        checks.append(_ingest_size_check(entry, limits))
    with tempfile.TemporaryDirectory(prefix="mrpvm-check-") as scratch:
        fx = Fixtures(artifacts=os.path.join(scratch, "artifacts", entry.id), llm_url=closed_llm_url())
        probes = _probes(entry, fx)
        limiter = asyncio.Semaphore(PARALLEL_PROBES)
        async with Supervisor(Registry([entry]), limits=limits) as supervisor:
            folder = supervisor.handoff(entry.id) if entry.type == "kb-plugin" else None
            if folder is not None:  # onSourceText as an ingest sends it: the units in a file
                probes = [p for p in probes if not (p.op == "onSourceText" and p.kind == "valid")]
                checks.extend(
                    await check_handoff(
                        supervisor,
                        entry,
                        folder,
                        example_request("onSourceText", fx),
                        timeout_s + STARTUP_SLACK_S,
                    )
                )

            async def run(probe: _Probe) -> CheckResult:
                async with limiter:
                    return await _run_probe(supervisor, entry, probe, timeout_s + STARTUP_SLACK_S)

            checks.extend(await asyncio.gather(*(run(p) for p in probes)))
            checks.append(await _check_size_limit(supervisor, entry, timeout_s, fx))
            if scenario_applies(list(entry.manifest.ops), entry.type):
                scenario_artifacts = os.path.join(scratch, "artifacts-scenario", entry.id)
                checks.extend(
                    await check_kb_scenario(
                        supervisor, entry, scenario_artifacts, timeout_s + STARTUP_SLACK_S, folder
                    )
                )
            argv = _worker_argv(supervisor, entry, fx) if entry.manifest.worker else []
        if entry.manifest.worker:

            def framed(op: str, request_id: str | int) -> bytes:
                return example_body(op, fx, request_id, with_llm=False)  # framing, not LLM reachability

            def bare(request_id: str | int) -> bytes:
                return msgspec.json.encode({**BARE_REQUEST, "id": request_id})

            checks.extend(await check_worker(entry, argv, (framed, bare), timeout_s))
    return Report(
        plugin=entry.id,
        passed=all(c.passed for c in checks),
        checks=checks,
        target=target or str(entry.manifest_path),
        notes=list(notes or []),
        warnings=sum(c.warning for c in checks),
    )


def _ingest_size_check(entry: PluginEntry, limits) -> CheckResult:
    """Does `maxInputSizeBytes` hold the onSourceText request of the largest source an ingest accepts?
    (A warning, not a failure: smaller sources still reach the index.)"""
    from mrpvm.kernel.config import DEFAULT_MAX_SOURCE_BYTES
    from mrpvm.kernel.registry import size_warning
    from mrpvm.protocol.vocab import ingest_request_bytes

    max_source = getattr(limits, "maxSourceBytes", None) or DEFAULT_MAX_SOURCE_BYTES
    name = "maxInputSizeBytes holds an ingest request (about 6x the source + 64 KB)"
    problem = size_warning(entry, max_source)
    if problem:
        return CheckResult(name=name, passed=True, warning=True, detail=problem.split(": ", 1)[1])
    need = ingest_request_bytes(max_source)
    return CheckResult(
        name=name,
        passed=True,
        detail=f"{entry.manifest.maxInputSizeBytes} ≥ {need}, what a source of engine.limits.maxSourceBytes "
        f"({max_source}) needs",
    )


def manifest_failure(plugin: str, target: str, message: str) -> Report:
    """The report for a folder whose manifest does not load."""
    return Report(
        plugin=plugin,
        passed=False,
        checks=[CheckResult(name="manifest", passed=False, detail=message)],
        target=target,
    )
