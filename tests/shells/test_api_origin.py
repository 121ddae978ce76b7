"""Host and Origin checks of a real daemon: DNS rebinding, cross-site form posts, CORS only for allowed
origins, same-origin pages and non-browser clients unaffected (shells/api/origin.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import urlsplit

import httpx
import openai
import pytest
from api_support import Daemon

JSON = {"Content-Type": "application/json"}


def check(reply: httpx.Response, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert body["code"] == code and body["requestId"] == reply.headers["x-request-id"], body
    assert not any(h.startswith("access-control-") for h in reply.headers), reply.headers
    return body


def kb_names(http: httpx.Client) -> set[str]:
    return {kb["name"] for kb in http.get("/kbs").json()["kbs"]}


def authority(daemon: Daemon) -> str:
    return urlsplit(daemon.url).netloc  # 127.0.0.1:PORT


def port(daemon: Daemon) -> int:
    return urlsplit(daemon.url).port or 0


def test_a_foreign_host_is_refused_on_every_route(http, daemon):
    created = http.post("/sessions", json={})
    assert created.status_code == 201
    for host in ("attacker.example", f"attacker.example:{port(daemon)}", "localhost.attacker.example", ""):
        for method, path in (("GET", "/sessions"), ("GET", "/health"), ("GET", "/kbs"), ("POST", "/kbs")):
            reply = http.request(method, path, headers={"Host": host, **JSON}, content=b'{"name": "x"}')
            body = check(reply, 421, "FORBIDDEN_HOST")
            assert "ses_" not in reply.text  # nothing of the data leaks
            assert body["details"].get("host", "") == host
    assert "x" not in kb_names(http)


def test_the_served_names_are_accepted_with_the_served_port(http, daemon):
    for host in (
        authority(daemon),
        f"localhost:{port(daemon)}",
        f"[::1]:{port(daemon)}",
        "127.0.0.1",
        "LOCALHOST",
    ):
        assert http.get("/health", headers={"Host": host}).status_code == 200, host
    for host in (f"127.0.0.1:{port(daemon) + 1}", f"localhost:{port(daemon) + 1}", "127.0.0.2", "[::2]"):
        check(http.get("/health", headers={"Host": host}), 421, "FORBIDDEN_HOST")


def test_a_cross_site_text_plain_post_changes_nothing(http, daemon):
    """What an HTML form on another site can send: text/plain (or no type) with the other site's Origin."""
    before_sessions = len(http.get("/sessions").json()["sessions"])
    attempts = [
        {"Origin": "http://attacker.example", "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"},
        {"Origin": "http://attacker.example", "Content-Type": "text/plain"},
        {"Origin": "null", "Content-Type": "application/x-www-form-urlencoded"},
        {
            "Origin": f"http://localhost:{port(daemon) + 1}",
            **JSON,
        },  # another local port: same-site, not same-origin
        {"Origin": "http://attacker.example", **JSON},
        {"Sec-Fetch-Site": "cross-site", **JSON},
    ]
    for headers in attempts:
        for path in ("/kbs", "/sessions"):
            reply = http.post(path, headers=headers, content=b'{"name": "csrf"}')
            check(reply, 403, "FORBIDDEN_ORIGIN")
    for kind in ("text/plain", "text/plain;charset=UTF-8", "multipart/form-data; boundary=x", None):
        headers = {"Content-Type": kind} if kind else {}
        body = check(
            http.post("/kbs", headers=headers, content=b'{"name": "csrf"}'), 415, "UNSUPPORTED_MEDIA_TYPE"
        )
        assert body["details"]["expected"] == "application/json"
    check(http.put("/settings/llm-roles", content=b'{"defaultModel": "m"}'), 415, "UNSUPPORTED_MEDIA_TYPE")
    check(
        http.delete("/sessions/whatever", headers={"Origin": "http://attacker.example"}),
        403,
        "FORBIDDEN_ORIGIN",
    )
    assert "csrf" not in kb_names(http)
    assert len(http.get("/sessions").json()["sessions"]) == before_sessions


def test_a_same_origin_page_posts_json(http, daemon):
    """The web UI served by the daemon: Origin is the daemon's own origin, Sec-Fetch-Site same-origin."""
    for host in (authority(daemon), f"localhost:{port(daemon)}"):
        page = {"Host": host, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}
        name = f"ui-{host.split(':')[0]}"
        reply = http.post(
            "/kbs", headers={**page, "Content-Type": "application/json; charset=utf-8"}, json={"name": name}
        )
        assert reply.status_code == 201, reply.text
        assert "access-control-allow-origin" not in reply.headers  # same origin: no CORS needed or sent
        session = http.post("/sessions", headers=page, json={"kb": name}).json()["session_id"]
        assert http.delete(f"/sessions/{session}", headers=page).status_code == 200
    # an empty body needs no content type (DELETE, or POST /sessions with every field defaulted)
    assert http.post("/sessions", headers={"Origin": f"http://{authority(daemon)}"}).status_code == 201


def test_clients_without_origin_keep_working(daemon):
    """curl-like and OpenAI-SDK clients send no Origin: JSON posts pass, GETs are open."""
    with openai.OpenAI(base_url=daemon.url + "/v1", api_key="unused", max_retries=0) as client:
        reply = client.chat.completions.create(
            model="mrp-vm", messages=[{"role": "user", "content": "What eats fish?"}]
        )
        assert reply.choices[0].message.content
        assert any(m.id == "mrp-vm" for m in client.models.list().data)
    reply = httpx.post(daemon.url + "/kbs", json={"name": "from-a-script"})
    assert reply.status_code == 201
    assert httpx.get(daemon.url + "/kbs", headers={"Origin": "http://attacker.example"}).status_code == 200


def test_no_cors_headers_and_preflights_refused_by_default(http):
    plain = http.get("/kbs", headers={"Origin": "http://attacker.example"})
    assert plain.status_code == 200
    assert not any(h.startswith("access-control-") for h in plain.headers)
    preflight = http.options(
        "/kbs",
        headers={"Origin": "http://attacker.example", "Access-Control-Request-Method": "POST"},
    )
    check(preflight, 403, "FORBIDDEN_ORIGIN")


@pytest.fixture(scope="module")
def configured(tmp_path_factory):
    args = [
        "--allowed-origin",
        "https://app.example",
        "--allowed-origin",
        "http://tools.example:3000",
        "--allowed-host",
        "mrpvm.internal",
        "--allowed-host",
        "tunnel.example:9000",
    ]
    with Daemon(tmp_path_factory.mktemp("home"), token="s3cret", args=args) as d:
        yield d


def test_configured_origins_get_cors_and_nothing_else_does(configured):
    with configured.client() as http:
        preflight = http.options(
            "/kbs",
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, authorization, x-evil",
            },
        )  # no token: a preflight never carries one
        assert preflight.status_code == 204, preflight.text
        assert preflight.headers["access-control-allow-origin"] == "https://app.example"
        assert set(preflight.headers["access-control-allow-headers"].split(", ")) == {
            "authorization",
            "content-type",
        }
        assert "POST" in preflight.headers["access-control-allow-methods"]
        posted = http.post(
            "/kbs",
            headers={"Origin": "https://app.example", "Sec-Fetch-Site": "cross-site"},
            json={"name": "app"},
        )
        assert posted.status_code == 201, posted.text
        assert posted.headers["access-control-allow-origin"] == "https://app.example"
        assert (
            posted.headers["vary"] == "Origin"
            and "X-Request-Id" in posted.headers["access-control-expose-headers"]
        )
        ported = http.get("/kbs", headers={"Origin": "http://tools.example:3000"})
        assert ported.headers["access-control-allow-origin"] == "http://tools.example:3000"
        for other in (
            "http://app.example",
            "https://app.example:8443",
            "http://tools.example",
            "https://evil.example",
        ):
            check(http.post("/kbs", headers={"Origin": other}, json={"name": "no"}), 403, "FORBIDDEN_ORIGIN")
            reply = http.get("/kbs", headers={"Origin": other})
            assert reply.status_code == 200 and "access-control-allow-origin" not in reply.headers
        assert http.get("/kbs").json()["kbs"][0]["name"] == "app"


def test_configured_hosts_are_accepted(configured):
    with configured.client() as http:
        for host in ("mrpvm.internal", "mrpvm.internal:1234", "tunnel.example:9000"):
            assert http.get("/kbs", headers={"Host": host}).status_code == 200, host
        for host in ("tunnel.example", "tunnel.example:9001", "sub.mrpvm.internal"):
            check(http.get("/kbs", headers={"Host": host}), 421, "FORBIDDEN_HOST")
        # the host check runs before the token: a rebinding page learns nothing, with or without it
        check(httpx.get(configured.url + "/kbs", headers={"Host": "attacker.example"}), 421, "FORBIDDEN_HOST")
        assert httpx.get(configured.url + "/kbs").status_code == 401


def run_serve(home, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {"MRPVM_HOME": str(home), "PATH": "/usr/bin:/bin", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mrpvm.shells.cli.main", "serve", "--port", "0", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )


def test_a_non_loopback_bind_needs_a_token(tmp_path):
    for host in ("0.0.0.0", "::"):
        done = run_serve(tmp_path, "--host", host)
        assert done.returncode == 2, done.stderr
        assert "not a loopback address" in done.stderr and "token" in done.stderr
    bad = run_serve(tmp_path, "--allowed-origin", "*")
    assert bad.returncode != 0 and "allowed origin" in bad.stderr
    bad = run_serve(tmp_path, env={"MRPVM_API_ALLOWED_HOSTS": "a b"})
    assert bad.returncode != 0 and "allowed host" in bad.stderr


def test_binding_rules():
    from mrpvm.shells.api import ApiSettings
    from mrpvm.shells.api.server import binding_refusal, is_loopback

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.3.4.5", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "", "10.1.2.3", "no-such-host.invalid"))
    assert (
        binding_refusal("0.0.0.0", ApiSettings())
        and binding_refusal("0.0.0.0", ApiSettings(token="t")) is None
    )
    assert binding_refusal("localhost", ApiSettings()) is None


def test_parsing_hosts_and_origins():
    from mrpvm.shells.api.origin import parse_authority, parse_origin

    assert parse_authority("LocalHost.:8787") == ("localhost", 8787)
    assert parse_authority("[::1]:80") == ("::1", 80) and parse_authority("[::1]") == ("::1", None)
    for bad in (
        "",
        "::1",
        "a:b",
        "a:0",
        "a:65536",
        "a:８０",
        "a/b",
        "user@a",
        "[::1",
        "[::1]x",
        "a b",
        "a,b",
    ):
        assert parse_authority(bad) is None, bad
    assert parse_origin("http://a.example") == ("http", "a.example", 80)
    assert parse_origin("HTTPS://A.example:443/") == ("https", "a.example", 443)
    for bad in ("null", "*", "a.example", "ftp://a.example", "http://a.example/path", "http://"):
        assert parse_origin(bad) is None, bad
    json.dumps([parse_authority("x" * 10000)])  # long input: no error
