"""`mrpvm ask` through a running daemon on the same home (daemon_file.py): its warm workers answer, so a
question costs one HTTP exchange instead of starting plugin processes.

`ask_daemon` returns (None, "") when no daemon can take the question (none advertised, it does not answer,
it wants a token the environment does not hold): the caller then runs the turn in-process. A daemon
that answers with an error (an unknown session, a bad pin) is the answer: `DaemonRefused` carries its
message, as the in-process run would have reported it.
"""

from __future__ import annotations

import json
import os
import socket
import sys

from .daemon_file import DaemonAddress, read_address

TYPE_CHECKING = False  # typing and pathlib are not loaded on this path (daemon_file.py)
if TYPE_CHECKING:
    from typing import Any

CONNECT_TIMEOUT_S = 0.5  # a daemon that does not accept within this is treated as absent
TURN_TIMEOUT_S = 600.0
MAX_LINE = 65536  # bytes of a status or header line


class DaemonRefused(Exception):
    """The daemon answered the request with an error (HTTP 4xx/5xx): its message."""


class _Unavailable(Exception):
    """No usable daemon: fall back to in-process."""


class _Conn:
    """One keep-alive HTTP/1.1 connection to the daemon: JSON POSTs, JSON replies. A few lines over a socket
    rather than http.client, whose imports (email, ssl) cost `mrpvm ask`'s thin path more than its turn."""

    def __init__(self, address: DaemonAddress, token: str | None):
        if token and ("\r" in token or "\n" in token):
            raise _Unavailable("MRPVM_API_TOKEN holds a line break")
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        host = address.url.removeprefix("http://")
        self.head = f"Host: {host}\r\nContent-Type: application/json\r\nAccept: application/json\r\n{auth}"
        # the host as bytes (getaddrinfo takes them; typeshed says str): a str loads the idna codec and
        # unicodedata to look up a loopback name
        target = (address.host.encode("ascii"), address.port)
        try:
            self.sock = socket.create_connection(target, timeout=CONNECT_TIMEOUT_S)  # type: ignore[arg-type]
        except OSError as err:
            raise _Unavailable(str(err)) from None
        self.sock.settimeout(TURN_TIMEOUT_S)
        self.reader = self.sock.makefile("rb")

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        payload = json.dumps(body).encode()
        request = f"POST {path} HTTP/1.1\r\n{self.head}Content-Length: {len(payload)}\r\n\r\n"
        try:
            self.sock.sendall(request.encode("latin-1") + payload)
            status, data = self._response()
        except (OSError, ValueError) as err:
            raise _Unavailable(str(err) or type(err).__name__) from None
        try:
            decoded = json.loads(data) if data else {}
        except ValueError:
            decoded = {}
        if status in (401, 403):
            raise _Unavailable("the daemon refused this client's credentials")
        if status >= 400:
            body = decoded if isinstance(decoded, dict) else {}
            message = body.get("message")  # the API's structured error (shells/api/errors.py)
            raise DaemonRefused(message or f"the daemon answered HTTP {status}")
        if not isinstance(decoded, dict):
            raise DaemonRefused("the daemon's reply is not a JSON object")
        return decoded

    def _line(self) -> bytes:
        line = self.reader.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise ValueError("an over-long header line")
        return line

    def _response(self) -> tuple[int, bytes]:
        """(status, body) of one response; ValueError when it is not HTTP/1.x."""
        version, _, rest = self._line().partition(b" ")
        if not version.startswith(b"HTTP/1."):
            raise ValueError("the peer does not speak HTTP/1.1")
        status = int(rest.split(b" ", 1)[0])
        headers: dict[str, str] = {}
        while (line := self._line()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return status, self._chunked()
        if "content-length" in headers:
            size = int(headers["content-length"])
            data = self.reader.read(size)
            if len(data) != size:
                raise ValueError("the reply was cut short")
            return status, data
        return status, self.reader.read()  # delimited by the connection's end

    def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while size := int(self._line().split(b";", 1)[0].strip() or b"0", 16):
            parts.append(self.reader.read(size))
            self._line()
        while self._line() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(parts)

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def ask_daemon(
    home: str | os.PathLike[str],
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
        body = {"message": question, "session_id": session_id, "stream": False, **turn_fields}
        body = {k: v for k, v in body.items() if v is not None}
        if sources:  # one request: the daemon loads them first (shells/api turns.load_sources)
            texts = [{"source_name": name, "text": text} for name, text in sources]
            reply = conn.post("/chat/completions", {**body, "sources": texts})
            done += 1
            if isinstance(reply.get("context_warnings"), list):
                _warn(reply["context_warnings"])
                return reply, f"daemon {address.url}"
            # a daemon that predates `sources` answered without them: the requests it knows
            session_id = _load_sources(conn, sources, session_id, turn_fields)
            body["session_id"] = session_id
        reply = conn.post("/chat/completions", body)
        return reply, f"daemon {address.url}"
    except _Unavailable as err:
        if done:
            raise DaemonRefused(
                f"the daemon stopped answering midway (session {session_id}): {err}"
            ) from None
        return None, ""
    finally:
        conn.close()


def _load_sources(
    conn: _Conn, sources: list[tuple[str, str]], session_id: str | None, turn_fields: dict[str, Any]
) -> str:
    """The session (a new one when `session_id` is None) with `sources` loaded, request by request."""
    if session_id is None:
        session_id = str(conn.post("/sessions", {"kb": turn_fields.get("kb")})["session_id"])
    for name, text in sources:
        loaded = conn.post(f"/sessions/{session_id}/context", {"text": text, "source_name": name})
        _warn(loaded.get("warnings") or [])
    return session_id


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        sys.stderr.write(f"mrpvm: warning: {warning}\n")
