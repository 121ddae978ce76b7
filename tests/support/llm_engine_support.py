"""Engine-level LLM tests: a KernelContext over the REAL built-in plugins whose bridge forwards to the
scripted OpenAI-compatible server (tests/support/llm_server.py), plus a role-aware fake model.

Every role gets its own model name (`m-<role>`, set through the bridge's role table), so the body the
test server receives says which role (hence which plugin) called, and the fake model answers in that
plugin's format: seed CNL, a grounded `## Answer`/`## Sources`, a validator verdict, or KB units.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

from llm_server import Action, ScriptedLLM, reply
from mrpvm.kernel.context import KernelContext
from mrpvm.kernel.engine import TurnRequest, TurnResult, run_turn
from mrpvm.kernel.llm import ROLES
from mrpvm.knowledge.context import open_context
from mrpvm.knowledge.ingest import ingest_source
from mrpvm.protocol.envelope import Pins

TESTS = Path(__file__).resolve().parent
PROBE_WRAPPERS = TESTS / "llm_wrappers"
LLM_MARK = "(per the model)"  # in every answer the fake goal model writes

KB_TEXT = """SQLite WAL mode does not work over a network filesystem, because all processes using the database must share memory.

WAL mode allows readers and a writer to run at the same time. A checkpoint moves WAL content back into the database file.
"""
QUESTION = "Does WAL mode work on a network filesystem?"

_EVIDENCE = re.compile(r"^\[([^\]]+)\] \([^)]*\) (.*)$", re.MULTILINE)
_QUESTION = re.compile(r"^Question \([^)]*\): (.*?)\??$", re.MULTILINE)
_TURN = re.compile(r'"""\n(.*?)\n"""', re.DOTALL)
_ANSWER = re.compile(r'Answer to check:\n"""\n(.*?)\n"""', re.DOTALL)


def role_model(role: str) -> str:
    return f"m-{role}"


def dead_url() -> str:
    """A loopback URL nothing listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class FakeModel:
    """Answers by role. Modes: sd valid|junk|junk-then-valid; gs grounded|ungrounded|refuse|copy|restate|
    misquote (cites the first unit, quoting a sentence it does not hold);
    val accept|reject|reject-llm (rejects answers the fake goal model wrote)|junk."""

    def __init__(self, sd: str = "valid", gs: str = "grounded", val: str = "accept"):
        self.sd, self.gs, self.val = sd, gs, val

    def __call__(self, body: dict[str, Any]) -> Action:
        model, messages = body.get("model", ""), body["messages"]
        user = messages[1]["content"] if len(messages) > 1 else ""
        if model in (role_model("seed-fast"), role_model("seed-deep")):
            return reply(self._seeds(user, corrected=len(messages) > 2))
        if model in (role_model("goal-fast"), role_model("goal-deep")):
            return reply(self._answer(user))
        if model == role_model("validation"):
            return reply(self._verdict(messages[-1]["content"]))
        if model == role_model("kb-ingest"):
            return reply(self._units(user))
        return Action("status", status=400, content=f"fake model does not know model {model!r}")

    def _seeds(self, user: str, corrected: bool) -> str:
        if self.sd == "junk" or (self.sd == "junk-then-valid" and not corrected):
            return "Sure! The user asks about WAL mode and network filesystems."
        match = _TURN.search(user)
        turn = match.group(1) if match else user
        questions = [q.strip() + "?" for q in turn.split("?") if q.strip()] or [turn]
        return "\n".join(
            f"## Intent Group {n}\nAct: explain\nIntent: {q}\nOutput: a short answer\n"
            for n, q in enumerate(questions, 1)
        )

    def _answer(self, user: str) -> str:
        evidence = _EVIDENCE.findall(user)
        if self.gs == "ungrounded" or not evidence:
            return f"## Answer\nIt depends {LLM_MARK}.\n"
        if self.gs == "refuse":  # SmolLM2's false refusal
            return "NO-CONTEXT"
        if self.gs == "copy":  # SmolLM2 continuing the evidence list: `(Role; Topic) statement` lines
            lines = [line for line in user.splitlines() if _EVIDENCE.match(line)]
            return "\n".join(line.split("] ", 1)[1] for line in lines)
        if self.gs == "restate":  # the question's own words, citing a given unit
            question = _QUESTION.search(user)
            return (
                f"## Answer\n{question.group(1) if question else ''}\n\n## Sources\nUsed: {evidence[0][0]}\n"
            )
        uid, text = evidence[0]
        if self.gs == "misquote":
            quote = "WAL mode works on every network filesystem"
            return f'## Answer\nThe evidence says "{quote}" {LLM_MARK}.\n\n## Sources\nUsed: {uid}\n'
        return f"## Answer\n{text} {LLM_MARK}\n\n## Sources\nUsed: {uid}\n"

    def _verdict(self, case: str) -> str:
        match = _ANSWER.search(case)
        answer = match.group(1) if match else ""
        if self.val == "junk":
            return "Looks fine to me, mostly."
        reject = self.val == "reject" or (self.val == "reject-llm" and LLM_MARK in answer)
        if reject:
            return "Verdict: rejected\nReason: scripted rejection"
        return "Verdict: accepted\nReason: grounded in the evidence"

    def _units(self, user: str) -> str:
        match = _TURN.search(user)
        text = " ".join((match.group(1) if match else user).split())
        first = text.split(". ")[0].rstrip(".") + "."
        return (
            "## Context Unit summary\nRole: Description\nTopic: the source\nClaim: " + first + "\n\n"
            "## Context Unit 1\nRole: Description\nTopic: first statement\nClaim: " + first + "\n"
        )


class LLMHarness:
    """A home with one config (enabled plugins, stage orders, planners) and an LLM upstream choice.

    `upstream`: a ScriptedLLM, a URL string (e.g. a dead one) or None (no endpoint configured).
    """

    def __init__(
        self,
        tmp: Path,
        *,
        enabled: list[str],
        orders: dict[str, list[str]],
        planners: list[str] = (),
        upstream: ScriptedLLM | str | None = None,
        env: dict[str, str] | None = None,
        extra_env: dict[str, str] | None = None,
        wrappers: list[str] = (),
    ):
        self.home = tmp / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        config = {"plugins": {"stageOrders": orders, "plannerOrder": list(planners)}}
        (self.home / "config.json").write_text(json.dumps(config))
        self.environ = {
            "MRPVM_HOME": str(self.home),
            "MRPVM_ENABLED_PLUGINS": ",".join([*enabled, *planners]),
            "MRPVM_PLUGIN_ALLOWLIST": ",".join(wrappers),
            "MRPVM_WRAPPER_FOLDERS": str(PROBE_WRAPPERS) if wrappers else "",
            "MRPVM_LLM_TIMEOUT_MS": "60000",  # generous: a busy machine must not turn a slow answer into a timeout
            "MRPVM_LLM_MAX_ATTEMPTS": "2",
            "MRPVM_LLM_BACKOFF_MS": "10",
            "MRPVM_SANDBOX_WRITE_PATHS": str(tmp),  # probe plugins report into files here (home hidden)
            **(env or {}),
        }
        url = upstream.base_url if isinstance(upstream, ScriptedLLM) else upstream
        if url:
            self.environ["MRPVM_LLM_BASE_URL"] = url
        self.extra_env = extra_env

    async def open(self, *, kb: bool = True) -> tuple[KernelContext, str | None]:
        """The context (role models m-<role> set) and the id of a KB holding KB_TEXT (sd-symbolic)."""
        ctx = await open_context(self.environ, extra_env=self.extra_env)
        try:
            if ctx.llm is not None:  # None: no LLM configured
                ctx.llm.roles.update({role: role_model(role) for role in ROLES})
            kb_id = None
            if kb:
                record = ctx.store.create_kb("docs")
                await ingest_source(ctx, record, "wal.md", KB_TEXT)
                kb_id = record.id
        except BaseException:
            await ctx.aclose()
            raise
        return ctx, kb_id


async def ask(ctx: KernelContext, kb_id: str | None, message: str = QUESTION, **kwargs: Any) -> TurnResult:
    pins = kwargs.pop("pins", None)
    return await run_turn(ctx, TurnRequest(message=message, kb=kb_id, pins=pins or Pins(), **kwargs))


# --------------------------------------------------------------------------- trace queries


def plugin_nodes(result: TurnResult, plugin: str | None = None, op: str | None = None) -> list[dict]:
    return [
        n
        for n in result.execution_trace["nodes"]
        if n["kind"] == "plugin"
        and (plugin is None or n.get("pluginId") == plugin)
        and (op is None or n.get("op") == op)
    ]


def llm_nodes(result: TurnResult, parent: str | None = None) -> list[dict]:
    """LLM-call nodes (under the plugin node `parent` if given)."""
    parents = {e["dst"]: e["src"] for e in result.execution_trace["edges"] if e["kind"] == "parent"}
    return [
        n
        for n in result.execution_trace["nodes"]
        if n["kind"] == "llm" and (parent is None or parents.get(n["id"]) == parent)
    ]


def calls(result: TurnResult, op: str) -> list[tuple[str, str]]:
    return [(n["pluginId"], n["status"]) for n in plugin_nodes(result, op=op)]


def upstream_models(llm: ScriptedLLM, start: int = 0) -> list[str]:
    return [b["model"] for b in llm.bodies[start:]]
