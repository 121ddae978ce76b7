"""legacy-shout: a legacy-style DS016 wrapper (name only, no type) in plain Python stdlib.

stdin: one JSON request {"prompt", "context"} (plus optional envelope fields); stdout: a CNL result
block whose Result (and Answer) is the prompt upper-cased. Invalid input: exit 2 and one line of JSON on stderr.
"""

import json
import sys

PLUGIN = "legacy-shout"
OPS = (
    "detectSeeds",
    "normalizePersistentContext",
    "buildPlan",
    "recordOutcome",
    "retrieve",
    "onSourceText",
    "onSessionEvent",
    "solve",
    "validate",
)


class InvalidInput(Exception):
    def __init__(self, code, message, at=None):
        super().__init__(message)
        self.code, self.details = code, ({"at": at} if at else {})


def expect(ok, at, what):
    if not ok:
        raise InvalidInput("SCHEMA_VIOLATION", f"request: expected {what} at {at}", at)


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def validate(req):
    """Check the request against the protocol v1 envelope; return the op."""
    expect(isinstance(req, dict), "$", "an object")
    expect(isinstance(req.get("prompt"), str), "$.prompt", "a string (required)")
    expect(isinstance(req.get("context"), list), "$.context", "an array (required)")
    for i, item in enumerate(req["context"]):
        expect(isinstance(item, dict), f"$.context[{i}]", "an object")
        for key in ("title", "sourceLink", "text"):
            expect(key not in item or isinstance(item[key], str), f"$.context[{i}].{key}", "a string")
    expect(req.get("protocolVersion", 1) == 1 and is_int(req.get("protocolVersion", 1)), "$.protocolVersion", "1")
    op = req.get("op")
    expect(op is None or op in OPS, "$.op", "a protocol v1 op")
    payload = req.get("payload")
    expect(payload is None or isinstance(payload, dict), "$.payload", "an object")
    if (op or "solve") == "solve" and payload:
        for key in ("intent", "resolved"):
            expect(payload.get(key) is None or isinstance(payload[key], dict), f"$.payload.{key}", "an object")
        for key in ("evidence", "guidance"):
            value = payload.get(key, [])
            expect(isinstance(value, list) and all(isinstance(u, dict) for u in value), f"$.payload.{key}", "units")
    budget = req.get("budget", {})
    expect(isinstance(budget, dict), "$.budget", "an object")
    for key in ("llmCalls", "deadlineMs"):
        expect(key not in budget or is_int(budget[key]), f"$.budget.{key}", "an integer")
    for key in ("requestId", "frameId", "sessionId"):
        expect(key not in req or isinstance(req[key], str), f"$.{key}", "a string")
    return op or "solve"


def field(name, value):
    """A CNL field; extra lines become indented continuation lines."""
    first, *rest = (value.strip() or "-").split("\n")
    return "\n".join([f"{name}: {first}", *(f"  {line}" for line in rest)])


def answer(req, op):
    lines = ["## Plugin Result"]
    if op != "solve":
        lines += ["Status: unsupported", f"Plugin: {PLUGIN}", f"Result: {PLUGIN} does not implement {op}"]
    elif not req["prompt"].strip():
        lines += ["Status: insufficient", f"Plugin: {PLUGIN}", "Result: the prompt is empty"]
    else:
        shouted = "\n".join(line.strip() for line in req["prompt"].upper().splitlines() if line.strip())
        lines += [
            "Status: success",
            f"Plugin: {PLUGIN}",
            "Confidence: high",
            field("Result", shouted),
            f"Evidence: upper-cased a prompt of {len(req['prompt'])} characters",
        ]
    if req.get("id") is not None:
        lines.append(f"Request: {req['id']}")
    if op == "solve" and req["prompt"].strip():  # a solve success carries its answer (SPEC.md §6.1)
        lines += ["", "## Answer", shouted]
    return "\n".join(lines) + "\n"


def main():
    try:
        try:
            req = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise InvalidInput("INVALID_JSON", f"request is not valid JSON: {err}") from None
        op = validate(req)
        sys.stdout.write(answer(req, op))
        return 0
    except InvalidInput as err:
        sys.stderr.write(json.dumps({"code": err.code, "message": str(err), "details": err.details}) + "\n")
        return 2
    except Exception as err:  # a bug here is a processing error, reported in the protocol's shape
        sys.stderr.write(json.dumps({"code": "INTERNAL_ERROR", "message": f"{type(err).__name__}: {err}"}) + "\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
