"""A real browser (headless Chromium) against a real token-less daemon: a page of another site cannot
create anything (form posts with text/plain JSON, no-cors fetches, CORS fetches) nor read anything, and a
DNS name rebound to 127.0.0.1 reads nothing. With `--allowed-origin` that same site's JSON fetch works,
which shows the refusals are the daemon's and not the test's.

Chromium is a Debian package (.ci/run installs it); the tests fail, not skip, without it.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import httpx
from api_support import Daemon

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"

PAGE = """<!doctype html><html><body><div id="out">waiting</div>
<form id="form" method="post" action="{daemon}/kbs" enctype="text/plain" target="sink">
<input name='{{"name":"evil-form","x":"' value='"}}'></form>
<iframe name="sink"></iframe>
<script>
const out = document.getElementById("out");
fetch("{daemon}/kbs", {{method: "POST", mode: "no-cors", body: '{{"name":"evil-fetch"}}'}}).catch(() => {{}});
fetch("{daemon}/kbs", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
  body: '{{"name":"evil-text"}}'}}).catch(() => {{}});
fetch("{daemon}/sessions", {{method: "POST", mode: "no-cors"}}).catch(() => {{}});
fetch("{daemon}/kbs", {{method: "POST", headers: {{"Content-Type": "application/json"}},
  body: '{{"name":"evil-cors"}}'}})
  .then(r => r.text()).then(t => {{ out.textContent = "read:" + t; }})
  .catch(e => {{ out.textContent = "blocked:" + e.name; }});
fetch("{daemon}/sessions").then(r => r.text()).then(t => {{ out.dataset.sessions = "read:" + t; }})
  .catch(e => {{ out.dataset.sessions = "blocked"; }});
document.getElementById("form").submit();
</script></body></html>"""


class Site:
    """Another site on loopback serving the attack page (reached as http://localhost:PORT)."""

    def __init__(self) -> None:
        self.daemon_url = ""  # set before the page is browsed
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                page = PAGE.format(daemon=site.daemon_url).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://localhost:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def browse(url: str, *extra: str) -> str:
    """The DOM after the page's scripts ran (virtual time: fetches and the form post complete)."""
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=8000", *extra]
        + ["--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def names(daemon: Daemon) -> set[str]:
    return {kb["name"] for kb in httpx.get(daemon.url + "/kbs").json()["kbs"]}


def session_count(daemon: Daemon) -> int:
    return len(httpx.get(daemon.url + "/sessions").json()["sessions"])


def test_a_page_of_another_site_changes_and_reads_nothing(tmp_path):
    with Daemon(tmp_path / "home") as daemon:
        assert httpx.post(daemon.url + "/sessions", json={}).status_code == 201
        site = Site()
        site.daemon_url = daemon.url
        try:
            dom = browse(site.origin + "/")
        finally:
            site.close()
        assert 'id="out"' in dom and "blocked:TypeError" in dom, dom  # the CORS fetch could not read
        assert 'data-sessions="blocked"' in dom, dom
        assert not names(daemon) & {"evil-form", "evil-fetch", "evil-text", "evil-cors"}
        assert session_count(daemon) == 1


def test_the_same_site_allowed_as_an_origin_gets_its_json_fetch_through(tmp_path):
    site = Site()  # its origin is known once it serves: then the daemon naming it starts
    try:
        with Daemon(tmp_path / "home", args=["--allowed-origin", site.origin]) as daemon:
            site.daemon_url = daemon.url
            dom = browse(site.origin + "/")
            assert "read:" in dom and "evil-cors" in dom, dom  # created and read back through CORS
            assert names(daemon) == {"evil-cors"}  # the form and no-cors posts are still refused (415)
    finally:
        site.close()


def test_a_name_rebound_to_loopback_reads_nothing(tmp_path):
    with Daemon(tmp_path / "home") as daemon:
        httpx.post(daemon.url + "/sessions", json={}).raise_for_status()
        port = urlsplit(daemon.url).port
        rebound = browse(
            f"http://attacker.test:{port}/sessions", "--host-resolver-rules=MAP attacker.test 127.0.0.1"
        )
        assert "FORBIDDEN_HOST" in rebound and "ses_" not in rebound, rebound
        direct = browse(f"http://127.0.0.1:{port}/sessions")
        assert "ses_" in direct  # the same browser at the daemon's own address reads it
