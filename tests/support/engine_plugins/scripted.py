"""A scripted test plugin of any type: `python scripted.py <plugin-id> <plugin-type>`.

Its behaviour comes from the JSON file named by MRPVM_TEST_SCRIPT, read on every request:

    {"<plugin-id>": {"<op>": rule | [rule, ...]}}

The first rule whose `when` matches answers (a plugin/op with no rule answers `unsupported`). A rule:
  when        {"promptContains": s, "promptLacks": s, "mode": "turn"|"decompose", "phase": p, "event": e,
               "evidenceAtLeast": n, "answerContains": s}
  status      result status (default success); confidence (default high); result; llmCalls
  answer      answer text; "{prompt}" is replaced by the prompt
  sources     list of ids, or "evidence" (the ids of the evidence it received)
  intents     [{"act", "intent", "output"}]   (detectSeeds; "{prompt}" in an intent is replaced too)
  units       [unit objects]                   (detectSeeds: current-turn KUs)
  select      "all" | n | [ids]: which received units a retrieve selects (all, the first n, or these in
              this order); sufficient: bool (default true); termWeights: the TermWeights text it reports
  guidanceIds ids a retrieve marks as guidance (they must be among the selected units' ids)
  plan        a Plan object (buildPlan)
  observations [Observation objects] (recordOutcome)
  observationsEach [Observation objects] (recordOutcome): these for every outcome of the call (a batch's
              `payload.outcomes`, else the one), each naming its outcome in a batch; the i-th outcome's
              Success is i/10 when `successStep` is true; `omitOutcome`: true leaves the names out
  sleepMs     sleep before answering; track: true counts concurrent requests in MRPVM_TEST_COUNTER
  waitMax     n: before answering, wait until n tracked requests have run at once (a barrier: the test
              states an order of events instead of hoping a sleep is long enough on a busy machine)
  waitCall    {"plugin", "op"}: before answering, wait until that call is in MRPVM_TEST_LOG
  fail        {"code", "message"}: raise a processing error; badCnl: true returns CNL that fails validation
Every request is appended as one JSON line to MRPVM_TEST_LOG (plugin, op, prompt, payload summary and the
number of context items).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path

import msgspec
from mrpvm.plugins.sdk import Call, Plugin, PluginFailure
from mrpvm.protocol.document import IntentGroup, KnowledgeUnit, Observation, Plan, ResolvedIntent
from mrpvm.protocol.vocab import OPS_BY_TYPE

PLUGIN_ID, PLUGIN_TYPE = sys.argv[1], sys.argv[2]


def _script() -> dict:
    path = os.environ.get("MRPVM_TEST_SCRIPT")
    if not path:
        return {}
    with open(path) as fh:
        return json.load(fh)


def _log(call: Call) -> None:
    path = os.environ.get("MRPVM_TEST_LOG")
    if not path:
        return
    p = call.payload
    entry = {"plugin": PLUGIN_ID, "op": call.op, "prompt": call.prompt, "frameId": call.request.frameId}
    for name in ("mode", "phase", "event", "scope"):
        if hasattr(p, name):
            entry[name] = getattr(p, name)
    for name in ("guidance", "evidence", "units"):
        if hasattr(p, name):
            entry[name] = [u.id for u in getattr(p, name)]
    if call.op == "recordOutcome":
        entry["outcomes"] = [o.requestId for o in p.outcomes] or [p.requestId]
    if getattr(p, "descriptors", None):
        entry["descriptors"] = [d.id for d in p.descriptors]
    if getattr(p, "parentIntent", None) is not None:
        entry["parentIntent"] = p.parentIntent.intent
    if hasattr(p, "intents"):
        entry["intents"] = [i.intent for i in p.intents]
    entry["context"] = len(call.request.context)
    entry["budget"] = msgspec.to_builtins(call.request.budget)
    entry["artifacts"] = call.request.paths.artifacts
    line = json.dumps(entry) + "\n"
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(line)


def _matches(rule: dict, call: Call) -> bool:
    when = rule.get("when", {})
    prompt = call.prompt
    if "promptContains" in when and when["promptContains"] not in prompt:
        return False
    if "promptLacks" in when and when["promptLacks"] in prompt:
        return False
    for name in ("mode", "phase", "event"):
        if name in when and getattr(call.payload, name, None) != when[name]:
            return False
    if "evidenceAtLeast" in when and len(getattr(call.payload, "evidence", [])) < when["evidenceAtLeast"]:
        return False
    return "answerContains" not in when or when["answerContains"] in getattr(call.payload, "answer", "")


BARRIER_LIMIT_S = 60.0  # a hang guard only: a barrier that is never reached lets the test's assertion fail


def _wait_until(reached) -> None:
    deadline = time.monotonic() + BARRIER_LIMIT_S
    while not reached() and time.monotonic() < deadline:
        time.sleep(0.01)


def _max_tracked() -> int:
    path = os.environ["MRPVM_TEST_COUNTER"]
    raw = Path(path).read_text().strip() if os.path.exists(path) else ""
    return json.loads(raw).get("max", 0) if raw else 0


def _logged(plugin: str, op: str) -> bool:
    path = os.environ.get("MRPVM_TEST_LOG", "")
    if not path or not os.path.exists(path):
        return False
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return any(r["plugin"] == plugin and r["op"] == op for r in rows)


def _counter(delta: int) -> None:
    path = os.environ["MRPVM_TEST_COUNTER"]
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        raw = fh.read().strip()
        state = json.loads(raw) if raw else {"active": 0, "max": 0, "total": 0}
        state["active"] += delta
        state["max"] = max(state["max"], state["active"])
        state["total"] += 1 if delta > 0 else 0
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(state))


def _each_outcome(rule: dict, payload) -> list[Observation]:
    out: list[Observation] = []
    batch = bool(payload.outcomes)
    for n, outcome in enumerate(payload.outcomes or [payload], 1):
        for o in rule["observationsEach"]:
            seen = msgspec.convert(o, Observation)
            named = outcome.requestId if batch and not rule.get("omitOutcome") else ""
            success = n / 10 if rule.get("successStep") else seen.success
            out.append(msgspec.structs.replace(seen, index=len(out) + 1, outcome=named, success=success))
    return out


def handle(call: Call):
    _log(call)
    rules = _script().get(PLUGIN_ID, {}).get(call.op)
    if isinstance(rules, dict):
        rules = [rules]
    rule = next((r for r in rules or [] if _matches(r, call)), None)
    if rule is None:
        return call.reply("unsupported", result=f"no script for {call.op}")
    if rule.get("stderr"):  # log lines (the kernel keeps them in the plugin's log)
        sys.stderr.write(rule["stderr"])
        sys.stderr.flush()
    if rule.get("track"):
        _counter(+1)
    try:
        if rule.get("waitMax"):
            _wait_until(lambda: _max_tracked() >= rule["waitMax"])
        if rule.get("waitCall"):
            _wait_until(lambda: _logged(rule["waitCall"]["plugin"], rule["waitCall"]["op"]))
        if rule.get("sleepMs"):
            time.sleep(rule["sleepMs"] / 1000.0)
    finally:
        if rule.get("track"):
            _counter(-1)
    if "fail" in rule:
        raise PluginFailure(
            rule["fail"].get("code", "SCRIPTED"), rule["fail"].get("message", "scripted failure")
        )
    status = rule.get("status", "success")
    confidence = rule.get("confidence", "high") if status == "success" else rule.get("confidence")
    sections: dict = {}
    payload = call.payload
    if rule.get("badCnl"):
        sections["intents"] = [IntentGroup(act="dance", intent="not an act", output="x")]
    if "intents" in rule:
        sections["intents"] = [
            IntentGroup(index=n, **{**i, "intent": i["intent"].replace("{prompt}", call.prompt)})
            for n, i in enumerate(rule["intents"], 1)
        ]
    if "units" in rule:
        sections["units"] = [msgspec.convert(u, KnowledgeUnit) for u in rule["units"]]
    if call.op == "retrieve" and status in ("success", "insufficient"):
        pool = list(payload.units)
        select = rule.get("select", "all")
        if isinstance(select, list):
            by_id = {u.id: u for u in pool}
            chosen = [by_id[i] for i in select if i in by_id]
        else:
            chosen = pool if select == "all" else pool[: int(select)]
        guidance = [g for g in rule.get("guidanceIds", []) if any(u.id == g for u in chosen)]
        sufficient = rule.get("sufficient", status == "success")
        sections["resolved"] = [
            ResolvedIntent(
                index=1,
                sufficient=sufficient,
                selected=[u.id for u in chosen if u.id not in guidance],
                guidance=guidance,
                totalKUsConsidered=len(pool),
                termWeights=rule.get("termWeights", ""),
            )
        ]
        sections["units"] = chosen
    if "observations" in rule:
        sections["observations"] = [msgspec.convert(o, Observation) for o in rule["observations"]]
    if "observationsEach" in rule:
        sections["observations"] = _each_outcome(rule, payload)
    if "plan" in rule:
        sections["plan"] = msgspec.convert(rule["plan"], Plan)
    if "answer" in rule:
        sections["answer"] = rule["answer"].replace("{prompt}", call.prompt)
    if "sources" in rule:
        src = rule["sources"]
        sections["sources"] = [u.id for u in payload.evidence] if src == "evidence" else list(src)
    return call.reply(
        status, confidence, result=rule.get("result", ""), llm_calls=rule.get("llmCalls", 0), **sections
    )


plugin = Plugin(PLUGIN_ID, PLUGIN_TYPE, {op: handle for op in OPS_BY_TYPE[PLUGIN_TYPE]})

if __name__ == "__main__":
    plugin.main()
