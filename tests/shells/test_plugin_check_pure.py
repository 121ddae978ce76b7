"""`mrpvm plugin check` holds a `pure` plugin to its promise (protocol/SPEC.md, Pure solvers): the same request
under another id is answered the same, its `Request:` line aside; a reply that changes fails with the fix."""

from __future__ import annotations

import anyio
from mrpvm.shells.plugin_tools.check_worker import _same_reply_twice


class ScriptedSession:
    """A worker session whose replies come from `answer(call number, request body)`."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = 0

    async def ask(self, body: bytes, timeout_s: float) -> bytes:
        self.calls += 1
        return self.answer(self.calls, body)


def framed(op: str, request_id: str | int) -> bytes:
    return f'{{"id": "{request_id}", "op": "{op}"}}'.encode()


def reply(request_id: str, answer: str) -> bytes:
    return f"## Plugin Result\nStatus: success\nRequest: {request_id}\n\n## Answer\n{answer}\n".encode()


def check(answer):
    session = ScriptedSession(answer)
    result = anyio.run(_same_reply_twice, session, "pure", "solve", framed, 5.0)
    return result, session.calls


def test_the_same_answer_under_another_request_id_passes():
    result, calls = check(lambda n, body: reply(f"check-pure-{n}", "The ferry leaves at noon."))
    assert result.passed and calls == 2 and "answered the same twice" in result.detail


def test_an_answer_that_changes_between_identical_requests_fails_with_the_fix():
    result, calls = check(lambda n, body: reply(f"check-pure-{n}", f"Asked {n} times so far."))
    assert not result.passed and calls == 2
    assert "differs" in result.detail and "fix: drop `pure`" in result.detail
