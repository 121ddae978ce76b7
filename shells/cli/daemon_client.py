"""`mrpvm ask` through a running daemon on the same home (daemon_file.py): its warm workers answer, so a
question costs one HTTP exchange instead of starting plugin processes.

`ask_daemon` returns (None, "") when no daemon can take the question (none advertised, it does not answer,
it wants a token the environment does not hold): the caller then runs the turn in-process. A daemon
that answers with an error (an unknown session, a bad pin) is the answer: `DaemonRefused` carries its
message, as the in-process run would have reported it.
"""

from __future__ import annotations

import http.client
import os
import sys
from pathlib import Path
from typing import Any

import msgspec

from .daemon_file import DaemonAddress, read_address

CONNECT_TIMEOUT_S = 0.5  # a daemon that does not accept within this is treated as absent
TURN_TIMEOUT_S = 600.0


class DaemonRefused(Exception):
    """The daemon answered the request with an error (HTTP 4xx/5xx): its message."""


class _Unavailable(Exception):
    """No usable daemon: fall back to in-process."""


class _Conn:
    def __init__(self, address: DaemonAddress, token: str | None):
        self.http = http.client.HTTPConnection(address.host, address.port, timeout=CONNECT_TIMEOUT_S)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        try:
            self.http.connect()
        except OSError as err:
            raise _Unavailable(str(err)) from None
        self.http.sock.settimeout(TURN_TIMEOUT_S)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            self.http.request("POST", path, body=msgspec.json.encode(body), headers=self.headers)
            response = self.http.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as err:
            raise _Unavailable(str(err)) from None
        try:
            decoded = msgspec.json.decode(data) if data else {}
        except msgspec.DecodeError:
            decoded = {}
        if response.status in (401, 403):
            raise _Unavailable("the daemon refused this client's credentials")
        if response.status >= 400:
            body = decoded if isinstance(decoded, dict) else {}
            message = body.get("message")  # the API's structured error (shells/api/errors.py)
            raise DaemonRefused(message or f"the daemon answered HTTP {response.status}")
        if not isinstance(decoded, dict):
            raise DaemonRefused("the daemon's reply is not a JSON object")
        return decoded

    def close(self) -> None:
        self.http.close()


def ask_daemon(
    home: Path,
    question: str,
    *,
    sources: list[tuple[str, str]],
    session_id: str | None,
    turn_fields: dict[str, Any],
    environ: dict[str, str] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """(the turn: the daemon's TurnResponse as a dict, "daemon URL"), or (None, "") when no daemon could
    take it.

    `sources`: (name, text) loaded into the session first (a new session when `session_id` is None);
    `turn_fields`: the chat body's turn fields (pins, kb, max_llm_calls, deliberation_level)."""
    env = os.environ if environ is None else environ
    address = read_address(home)
    if address is None:
        return None, ""
    token = env.get("MRPVM_API_TOKEN") or None
    if address.token and not token:
        return None, ""
    try:
        conn = _Conn(address, token)
    except _Unavailable:
        return None, ""
    done = 0  # requests the daemon carried out: after one, a fallback would repeat them
    try:
        if sources and session_id is None:
            created = conn.post("/sessions", {"kb": turn_fields.get("kb")})
            session_id = str(created["session_id"])
            done += 1
        for name, text in sources:
            loaded = conn.post(f"/sessions/{session_id}/context", {"text": text, "source_name": name})
            done += 1
            for warning in loaded.get("warnings") or []:
                sys.stderr.write(f"mrpvm: warning: {warning}\n")
        body = {"message": question, "session_id": session_id, "stream": False, **turn_fields}
        reply = conn.post("/chat/completions", {k: v for k, v in body.items() if v is not None})
        return reply, f"daemon {address.url}"
    except _Unavailable as err:
        if done:
            raise DaemonRefused(
                f"the daemon stopped answering midway (session {session_id}): {err}"
            ) from None
        return None, ""
    finally:
        conn.close()
