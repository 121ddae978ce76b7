"""How `mrpvm plugin check` judges one reply: what is required, what is only advice, and what to change.

Every failing detail ends with `fix: ...`, the change that makes the check pass. What every plugin must do
is what DS016 and SPEC.md require of all: refuse a request that is not JSON, lacks `prompt`/`context` or
types them wrongly, names an unknown op or another protocol version (exit 2, the error JSON as the last
stderr line); answer every valid request of a declared op with valid CNL. Fields a plugin may ignore
(`payload`, `budget`, `llm`, `paths`, ids) are held to that only when the manifest's `reads` lists them;
otherwise a wrong type there may be ignored, and anything else is a warning.
"""

from __future__ import annotations

import json

import msgspec
from mrpvm.kernel.engine.outcome_batch import attribute
from mrpvm.kernel.errors import ValidationFailed
from mrpvm.kernel.store_learning import MAX_OBSERVATIONS
from mrpvm.protocol.cnl import CnlError, parse_document
from mrpvm.protocol.cnl_compact import decode_compact, is_compact
from mrpvm.protocol.document import CnlDocument
from mrpvm.protocol.examples import EXAMPLE_REQUESTS
from mrpvm.protocol.invalid_examples import INVALID_REQUEST_FIELD, INVALID_REQUEST_FIX
from mrpvm.protocol.vocab import EXIT_INVALID_INPUT, EXIT_OK, EXIT_PROCESSING_ERROR

REFUSE = (
    'then write nothing to stdout, one line of JSON {"code":"SCHEMA_VIOLATION","message":"..."} as the last '
    "line of stderr, and exit 2"
)


class CheckResult(msgspec.Struct, kw_only=True):
    """One check. `warning`: the plugin passed, but not in the best way (the detail says why)."""

    name: str
    passed: bool
    detail: str = ""
    warning: bool = False


def preview(data: bytes | str, limit: int = 120) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def stderr_hint(stderr: bytes) -> str:
    return f"; stderr: {preview(stderr.strip().splitlines()[-1])}" if stderr.strip() else ""


def effective_reads(manifest) -> set[str]:
    """The optional fields a plugin is held to: its `reads`, plus `llm` when it declares `usesLLM`."""
    reads = set(manifest.reads)
    if manifest.usesLLM:
        reads.add("llm")
    return reads


def judge_answer(
    stdout: bytes, op: str, plugin_id: str, request_id: str | None = None
) -> tuple[CnlDocument | None, str]:
    """Parse an answer (CNL, or the compact MessagePack reply of SPEC "Compact reply"); returns (document,
    "") or (None, what is wrong and what to change)."""
    if is_compact(stdout):
        try:
            return _judged(decode_compact(stdout, op), op, plugin_id, request_id)
        except CnlError as err:
            issues = "; ".join(str(issue) for issue in err.issues[:2])
            return None, (
                f"invalid compact reply for {op}: {issues} — fix: answer with the compact form only when "
                "payload.replyForm asks for it, as one MessagePack map of SPEC.md's Compact reply"
            )
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None, "output is not UTF-8 — fix: write stdout as UTF-8"
    try:
        doc = parse_document(text, op)  # the validation the kernel's supervisor applies in a turn
    except CnlError as err:
        issues = "; ".join(str(issue) for issue in err.issues[:2])
        return None, (
            f"invalid CNL for {op}: {issues} (output starts {preview(text, 60)}) — fix: "
            f"{cnl_fix(text, err)} (protocol/SPEC.md §8 shows a valid {op} answer)"
        )
    return _judged(doc, op, plugin_id, request_id)


def _judged(
    doc: CnlDocument, op: str, plugin_id: str, request_id: str | None
) -> tuple[CnlDocument | None, str]:
    """What the kernel checks of a parsed answer beyond its form: the plugin id, partial, the request id."""
    if doc.result.plugin != plugin_id:
        return None, (
            f"result block says Plugin: {doc.result.plugin!r}, expected the manifest id {plugin_id!r} — "
            f"fix: write `Plugin: {plugin_id}`"
        )
    if doc.result.status == "partial" and op != "onSourceText":
        return None, (
            f"Status: partial answers {op}, but only an onSourceText upsert may be indexed in part — fix: answer "
            "success (or the op's other statuses, SPEC.md §6)"
        )
    if request_id is not None and doc.result.request != request_id:
        got = "no Request field" if doc.result.request is None else f"Request: {doc.result.request!r}"
        return None, (
            f"answer to request {request_id!r} carries {got} — fix: copy each request's `id` into "
            "`Request:` of its answer's result block"
        )
    return doc, ""


# The exact change for a CNL rule whose fix is known (protocol/cnl.py names the rules).
CNL_RULE_FIXES = {
    "procedure-role": "write a `Role: Procedure` unit's steps in `Procedure:` (not `Claim:`), and use "
    "`Procedure:` only with that role",
    "claim-or-procedure": "give every Context Unit exactly one of `Claim:` or `Procedure:`",
    "triple-all-or-none": "write Subject, Relation and Object together, or none of them",
    "confidence-needs-triple": "drop a unit's `Confidence:` unless it has Subject, Relation and Object",
    "duplicate-field": "write each field once per section",
    "observation-range": "score an attempt's Success and Sufficiency in [0, 1], LatencyMs and LLMCalls >= 0, "
    "Alpha in (0, 1]",
    "observation-task": "leave Task out for the plugin's overall record, else write an act or act/answer type "
    "(protocol/vocab.py: ACTS, ANSWER_TYPES), e.g. `Task: describe/number`",
}


def cnl_fix(text: str, err: CnlError) -> str:
    """The change that makes this output valid: a precise one when known, else SPEC.md §6."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    rules = [issue.rule for issue in err.issues]
    if first and not first.startswith("## ") and "content-outside-section" in rules:
        return (
            f"stdout must hold only the CNL document, starting with '## Plugin Result'; the first line "
            f"{preview(first, 50)} looks like a log line: write logs to stderr"
        )
    for rule in rules:
        if rule in CNL_RULE_FIXES:
            return CNL_RULE_FIXES[rule]
    return "follow SPEC.md §6"


def describe(doc: CnlDocument) -> str:
    result = doc.result
    conf = f", Confidence: {result.confidence}" if result.confidence else ""
    return f"Status: {result.status}{conf}"


def judge_valid(reply, op: str, plugin_id: str, outcomes: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Judge the answer to a valid request; `outcomes`: the request ids of a recordOutcome batch, whose
    observations must each name one of them."""
    if reply.timedOut:
        return False, (
            f"no answer in time (killed after {reply.durationMs:.0f} ms) — fix: answer within the manifest's "
            "timeoutMs (or raise it); read stdin to EOF before working"
        )
    if reply.exitCode != EXIT_OK:
        return False, (
            f"exit {reply.exitCode}, expected 0{stderr_hint(reply.stderr)} — fix: this request is valid "
            f"(SPEC.md §8's {op} example); answer it with CNL and exit 0 (an op you do not implement: "
            "Status: unsupported)"
        )
    doc, problem = judge_answer(reply.stdout, op, plugin_id)
    if doc is None:
        return False, problem
    if doc.observations:
        problem = observations_problem(doc, op, outcomes)
        if problem:
            return False, problem
        return True, f"{describe(doc)}, {len(doc.observations)} observations; {reply.durationMs:.0f} ms"
    return True, f"{describe(doc)}; {reply.durationMs:.0f} ms"


def observations_problem(doc: CnlDocument, op: str, outcomes: tuple[str, ...] = ()) -> str:
    """What the kernel would refuse to store of a recordOutcome's observations ("" when nothing): more
    than MAX_OBSERVATIONS, a plugin the example outcome does not name (SPEC.md §6 planner learning), or in
    a batch of `outcomes` an observation naming none of them (rule observation-outcome)."""
    if outcomes:
        try:
            attribute(doc.observations, list(outcomes))
        except ValidationFailed as err:
            return (
                f"{err.message} — fix: in a batch's reply give each `## Observation` the line "
                "`Outcome: <requestId>` of the `payload.outcomes` item it scores"
            )
    if len(doc.observations) > MAX_OBSERVATIONS:
        return (
            f"{len(doc.observations)} observations for one outcome; the kernel stores at most {MAX_OBSERVATIONS} "
            "— fix: one observation per attempt and record (overall, act, act/answer type)"
        )
    payload = EXAMPLE_REQUESTS[op].payload
    named = {a.pluginId for a in getattr(payload, "attempts", [])}
    strangers = sorted({o.plugin for o in doc.observations} - named)
    if strangers:
        return (
            f"observations of {', '.join(strangers[:3])}, which the outcome does not name; the kernel would "
            "store none of them — fix: observe only the plugins of `payload.attempts`"
        )
    return ""


def error_record(stderr: bytes) -> tuple[dict | None, str]:
    """The last non-empty stderr line as the error JSON {code, message[, details]}: (record, "") or
    (None, problem). Lines before it are logs (the kernel writes them to the plugin's log)."""
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return None, "stderr is empty; expected the error JSON {code, message} as its last line"
    last = lines[-1]
    try:
        record = json.loads(last)
    except ValueError:
        return None, f"the last stderr line is not JSON: {preview(last)} ({len(lines)} line(s) on stderr)"
    if not isinstance(record, dict):
        return None, f"the last stderr line is JSON but not an object: {preview(last)}"
    missing = [k for k in ("code", "message") if not isinstance(record.get(k), str) or not record.get(k)]
    if missing:
        return None, f"the error JSON lacks string field(s) {', '.join(missing)}: {preview(last)}"
    if "details" in record and not isinstance(record["details"], dict):
        return None, "the error JSON's `details` must be an object"
    return record, ""


def _refused(reply) -> tuple[bool, str]:
    """(refused as the protocol says, what happened)."""
    if reply.timedOut:
        return False, f"no answer in time (killed after {reply.durationMs:.0f} ms)"
    if reply.exitCode != EXIT_INVALID_INPUT:
        said = (
            f"; stdout: {preview(reply.stdout, 60)}"
            if reply.exitCode == EXIT_OK and reply.stdout.strip()
            else ""
        )
        return False, f"exit {reply.exitCode}, expected 2 for invalid input{said}{stderr_hint(reply.stderr)}"
    record, problem = error_record(reply.stderr)
    if record is None:
        return False, f"exit 2 but {problem}"
    if reply.stdout.strip():
        return False, f"exit 2 but stdout is not empty: {preview(reply.stdout, 60)}"
    return True, f"exit 2, code {record['code']}"


def judge_invalid(reply, case: str, op: str, plugin_id: str, reads: set[str]) -> CheckResult:
    """An invalid request: required cases must be refused; a field the plugin does not read may be
    ignored (a valid answer), and any other outcome is a warning."""
    name = f"invalid input: {case}"
    field = INVALID_REQUEST_FIELD[case]
    refused, what = _refused(reply)
    if refused:
        return CheckResult(name=name, passed=True, detail=what)
    fix = f" — fix: {INVALID_REQUEST_FIX[case]}; {REFUSE}"
    if field is None:
        return CheckResult(name=name, passed=False, detail=what + fix)
    if field in reads:
        why = f" (the manifest's `reads` lists `{field}`, so a wrong type there must be refused)"
        return CheckResult(name=name, passed=False, detail=what + why + fix)
    if not reply.timedOut and reply.exitCode == EXIT_OK:
        doc, _ = judge_answer(reply.stdout, op, plugin_id)
        if doc is not None:
            return CheckResult(
                name=name,
                passed=True,
                detail=f"ignored (`{field}` is not in the manifest's reads): {describe(doc)}",
            )
    advice = (
        f" — `{field}` is not in the manifest's reads, so the plugin may ignore it, but it neither ignored "
        f"it (valid CNL, exit 0) nor refused it (exit 2); if the plugin uses `{field}`, add it to `reads` "
        f"and {INVALID_REQUEST_FIX[case]}"
    )
    return CheckResult(name=name, passed=True, warning=True, detail=what + advice)


def judge_llm_unreachable(reply, op: str, plugin_id: str) -> tuple[bool, str]:
    """The example's LLM endpoint is closed: valid CNL, or a processing error reported in the protocol's shape."""
    if reply.exitCode != EXIT_PROCESSING_ERROR or reply.timedOut:
        return judge_valid(reply, op, plugin_id)
    record, problem = error_record(reply.stderr)
    if record is None:
        return False, f"exit 1 but {problem} — fix: end stderr with the error JSON {{code, message}}"
    return True, f"exit 1, code {record['code']}: the unreachable LLM endpoint reported as a processing error"
