"""No input makes the daemon answer 500: NUL bytes in URLs, archives whose JSON nests without end, bodies
announced too large, names that are too long or hold control characters."""

from __future__ import annotations

import io
import socket
import threading
import zipfile

import pytest
from api_support import Daemon
from mrpvm.kernel.errors import ArchiveError
from mrpvm.kernel.names import KB_NAME_MAX
from mrpvm.knowledge.archive import MANIFEST, read_archive
from mrpvm.shells.api.middleware import DRAIN_CAP
from test_api_errors import check, still_serving

DEEP = b"[" * 200_000 + b"]" * 200_000


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("path", ["/app/index.html%00.js", "/vendor/%00", "/kbs/a%00b", "/kbs?x=%00"])
def test_a_nul_byte_in_the_url_is_400(http, path: str) -> None:
    body = check(http.get(path), 400, "BAD_REQUEST")
    assert "NUL" in body["message"]


def test_an_archive_nested_without_end_is_400(http) -> None:
    reply = http.post(
        "/kbs/import?name=deep", content=_zip({MANIFEST: DEEP}), headers={"Content-Type": "application/zip"}
    )
    body = check(reply, 400, "BAD_ARCHIVE")
    assert "nested too deeply" in body["message"]
    with pytest.raises(ArchiveError, match="nested too deeply"):  # `mrpvm kb import` reads it the same way
        read_archive(_zip({MANIFEST: DEEP}))
    still_serving(http)


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("k" * (KB_NAME_MAX + 1), f"at most {KB_NAME_MAX}"),
        ("x" * 500_000, f"at most {KB_NAME_MAX}"),
        ("a\x00b", "U+0000"),
        ("line\nbreak", "U+000A"),
        ("evil\u202etxt", "U+202E"),
        ("..", "dots alone"),
    ],
)
def test_a_bad_kb_name_is_400_saying_why(http, name: str, said: str) -> None:
    body = check(http.post("/kbs", json={"name": name}), 400, "INVALID_NAME")
    assert said in body["message"]


def test_a_fine_name_still_works(http) -> None:
    assert http.post("/kbs", json={"name": "Ops notes 👩\u200d💻"}).status_code == 201


def _raw_post(daemon: Daemon, length: int | None, expect: bool, send_bytes: int) -> tuple[bytes, int]:
    """POST with a Content-Length of `length` (None: chunked); send up to `send_bytes` of body while
    reading the answer. Returns (the status line, the bytes the socket accepted)."""
    host, port = daemon.url.split("//", 1)[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=60)
    head = f"POST /kbs HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    head += f"{framing}\r\n" + ("Expect: 100-continue\r\n" if expect else "") + "\r\n"
    for name, value in daemon.headers().items():
        head = head.replace("\r\n\r\n", f"\r\n{name}: {value}\r\n\r\n")
    sock.sendall(head.encode())
    sent = 0

    def pump() -> None:
        nonlocal sent
        chunk = b"x" * 65536 if length is not None else b"10000\r\n" + b"x" * 65536 + b"\r\n"
        try:
            while sent < send_bytes:
                sent += sock.send(chunk)
        except OSError:
            pass

    writer = threading.Thread(target=pump, daemon=True)
    if send_bytes:
        writer.start()
    answer = b""
    while b"\r\n" not in answer:
        data = sock.recv(4096)
        if not data:
            break
        answer += data
    sock.close()
    if send_bytes:
        writer.join(30)
    return answer.split(b"\r\n", 1)[0], sent


def test_a_body_announced_too_large_is_refused_before_it_is_read(daemon: Daemon) -> None:
    status, _ = _raw_post(daemon, 100 << 20, expect=True, send_bytes=0)
    assert b" 413 " in status, status  # answered without one byte of the body
    status, sent = _raw_post(daemon, 100 << 20, expect=False, send_bytes=100 << 20)
    assert b" 413 " in status, status
    assert sent < DRAIN_CAP + (16 << 20), sent  # the drain cap plus socket buffers, never the 100 MB


def test_a_chunked_body_is_cut_at_the_limit(daemon: Daemon) -> None:
    """No Content-Length: the daemon counts, answers 413 past the limit and closes the connection."""
    _, sent = _raw_post(daemon, None, expect=False, send_bytes=100 << 20)
    assert sent < DRAIN_CAP + (16 << 20), sent
