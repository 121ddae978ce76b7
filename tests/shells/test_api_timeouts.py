"""Connection timeouts of a real daemon, over raw sockets: a silent or half-sent request head, an idle
keep-alive connection and a stalled body are closed (or answered 408) instead of held forever.

The daemon runs with sub-second timeouts; the tests wait up to WAIT_S for the closure, so they assert that
it happens, not how fast."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

import pytest
from api_support import Daemon

WAIT_S = 20.0


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    args = ["--header-timeout", "0.5", "--keep-alive-timeout", "0.5", "--body-timeout", "0.5"]
    with Daemon(tmp_path_factory.mktemp("home"), args=args) as d:
        yield d


def connect(daemon: Daemon) -> socket.socket:
    parts = urlsplit(daemon.url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=WAIT_S)
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server closed the connection (EOF or reset) within WAIT_S; False if still open."""
    deadline = time.monotonic() + WAIT_S
    try:
        while time.monotonic() < deadline:
            if sock.recv(65536) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return False


def host(daemon: Daemon) -> bytes:
    return urlsplit(daemon.url).netloc.encode()


def test_a_silent_connection_is_closed(quick):
    socks = [connect(quick) for _ in range(50)]
    try:
        assert all(closed_by_server(s) for s in socks)
    finally:
        for s in socks:
            s.close()


def test_a_half_sent_head_is_closed(quick):
    with connect(quick) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: " + host(quick) + b"\r\nX-Slow: ")
        assert closed_by_server(sock)


def test_a_trickled_head_is_closed_although_bytes_keep_coming(quick):
    """The head's deadline runs from its first byte: a byte every 100 ms does not keep it open."""
    with connect(quick) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\n")
        deadline = time.monotonic() + WAIT_S
        closed = False
        sock.settimeout(0.1)
        while time.monotonic() < deadline and not closed:
            try:
                sock.sendall(b"X")
                closed = sock.recv(1024) == b""
            except TimeoutError:
                continue
            except (ConnectionResetError, BrokenPipeError):
                closed = True
        assert closed


def test_an_idle_keep_alive_connection_is_closed_after_its_answer(quick):
    with connect(quick) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: " + host(quick) + b"\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 200")
        assert closed_by_server(sock)


def test_a_stalled_body_is_answered_408(quick):
    with connect(quick) as sock:
        sock.sendall(
            b"POST /kbs HTTP/1.1\r\nHost: "
            + host(quick)
            + b'\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name": '
        )
        reply = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
            if b"\r\n\r\n" in reply and reply.rstrip().endswith(b"}"):
                break
        assert reply.startswith(b"HTTP/1.1 408"), reply
        body = json.loads(reply.split(b"\r\n\r\n", 1)[1])
        assert body["code"] == "REQUEST_TIMEOUT" and body["details"]["receivedBytes"] == len(b'{"name": ')


def test_the_daemon_still_serves_whole_requests(quick):
    with quick.client() as http:
        assert http.post("/kbs", json={"name": "fine"}).status_code == 201
        # a keep-alive client reuses its connection while it is busy: several requests, one connection
        for _ in range(5):
            assert http.get("/kbs").status_code == 200
    assert "Traceback" not in "".join(quick.log)
