"""The web app's static routes over plain HTTP (a real `mrpvm serve`): types, caching, CSP, confinement.

The page and its files are served on the API's own origin with no CDN: every script and style the page
names and every module the app imports resolves here, with the right content type. The browser side is
tests/test_web_browser.py.
"""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from api_support import Daemon
from mrpvm.shells.api.web_routes import WEB_ROOT

APP = WEB_ROOT / "app"
VENDOR = WEB_ROOT / "vendor"
IMPORT = re.compile(r"""(?:^|\n)\s*import\s[^'"]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'""")
MAX_LINES = 800  # the layout cap of Python modules, for the app's own JS and CSS too


class PageParts(HTMLParser):
    """What index.html loads: script and stylesheet URLs, and anything inline that a CSP would block."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.inline: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        for name, _ in attrs:
            if name.startswith("on") or name == "style":
                self.inline.append(f"<{tag} {name}=...>")
        if tag == "script":
            self._in_script = True
            if named.get("src"):
                self.scripts.append(str(named["src"]))
            else:
                self.inline.append("<script> without src")
        if tag == "link" and named.get("rel") in ("stylesheet", "icon"):
            self.styles.append(str(named["href"]))
        if tag == "style":
            self.inline.append("<style>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append("inline script text")


def test_the_page_is_served_at_the_root_with_a_strict_policy(http):
    reply = http.get("/", params={"kb": "docs"})  # deep-link query strings serve the same page
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/html; charset=utf-8"
    assert reply.headers["cache-control"] == "no-cache"
    csp = dict(part.strip().split(" ", 1) for part in reply.headers["content-security-policy"].split(";"))
    assert csp["default-src"] == "'none'"
    assert csp["script-src"] == "'self'" and csp["connect-src"] == "'self'" and csp["style-src"] == "'self'"
    assert csp["frame-ancestors"] == "'none'" and csp["require-trusted-types-for"] == "'script'"
    assert "unsafe" not in reply.headers["content-security-policy"]
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["x-frame-options"] == "DENY"
    assert reply.headers["referrer-policy"] == "no-referrer"
    parts = PageParts()
    parts.feed(reply.text)
    assert parts.inline == []
    assert "/app/main.js" in parts.scripts and any(s.startswith("/vendor/elkjs-") for s in parts.scripts)
    assert all(not s.startswith(("http:", "https:", "//")) for s in parts.scripts + parts.styles)
    head = http.head("/")
    assert head.status_code == 200 and head.content == b""


def _app_imports() -> dict[str, set[str]]:
    out = {}
    for path in sorted(APP.glob("*.js")):
        found = {a or b for a, b in IMPORT.findall(path.read_text(encoding="utf-8"))}
        out[path.name] = found
    return out


def test_every_file_the_page_loads_resolves_with_its_content_type(http):
    parts = PageParts()
    parts.feed(http.get("/").text)
    modules = _app_imports()
    assert "main.js" in modules and "./graph_panel.js" in modules["main.js"]
    urls = set(parts.scripts + parts.styles)
    for name, imported in modules.items():
        for spec in imported:
            assert spec.startswith(("./", "/vendor/")), f"{name} imports {spec}: only local files"
            urls.add("/app/" + spec[2:] if spec.startswith("./") else spec)
    reached, todo = set(), ["main.js"]  # every app module is reachable from the entry (none left over)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += [spec[2:] for spec in modules[name] if spec.startswith("./")]
    assert reached == set(modules)
    urls.add("/vendor/elkjs-0.12.1/elk-worker.min.js")  # started by graph_layout.js as a Web Worker
    types = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
    for url in sorted(urls):
        reply = http.get(url)
        assert reply.status_code == 200, url
        assert reply.headers["content-type"].startswith(types[Path(url).suffix]), url
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.content, url


def test_app_files_revalidate_and_vendor_files_are_immutable(http):
    app = http.get("/app/main.js")
    assert app.headers["cache-control"] == "no-cache" and app.headers["etag"]
    again = http.get("/app/main.js", headers={"If-None-Match": app.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    since = http.get("/app/main.js", headers={"If-Modified-Since": app.headers["last-modified"]})
    assert since.status_code == 304
    changed = http.get("/app/main.js", headers={"If-None-Match": '"not-it"'})
    assert changed.status_code == 200 and changed.content == app.content
    vendor = http.get("/vendor/markdown-it-15.0.3/markdown-it.esm.min.mjs")
    assert vendor.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert vendor.headers["content-type"] == "text/javascript; charset=utf-8"
    assert http.get("/vendor/elkjs-0.12.1/LICENSE.md").headers["content-type"].startswith("text/plain")


@pytest.mark.parametrize(
    "path",
    [
        "/app/%2e%2e/web_routes.py",
        "/app/..%2fweb_routes.py",
        "/app/%2e%2e/%2e%2e/app.py",
        "/vendor/elkjs-0.12.1/%2e%2e/%2e%2e/web_routes.py",
        "/app/.hidden.js",
        "/app/nope.js",
        "/app/",
        "/app/main.py",
        "/vendor/README.exe",
        "/app/%5c..%5cweb_routes.py",
    ],
)
def test_nothing_outside_the_web_folders_is_served(http, path):
    reply = http.get(path)
    assert reply.status_code == 404
    assert reply.json()["code"] == "NOT_FOUND"
    assert b"import" not in reply.content


def test_with_a_token_the_page_loads_but_the_api_still_needs_it(tmp_path):
    with Daemon(tmp_path / "home", token="s3cret") as daemon:
        for path in ("/", "/app/main.js", "/app/style.css", "/vendor/elkjs-0.12.1/elk-api.js"):
            assert httpx.get(daemon.url + path).status_code == 200, path
        for path in ("/sessions", "/kbs", "/plugins", "/apps", "/vendors/x.js", "/appx/main.js"):
            reply = httpx.get(daemon.url + path)
            assert reply.status_code == 401, path
        assert httpx.get(daemon.url + "/sessions", headers=daemon.headers()).status_code == 200
        docs = httpx.get(daemon.url + "/openapi.json", headers=daemon.headers()).json()
        assert docs["paths"]["/"]["get"]["security"] == []
        assert docs["paths"]["/app/{path}"]["get"]["parameters"][0]["name"] == "path"


def test_vendored_files_are_the_published_ones_with_their_licenses():
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    folders = sorted(p for p in VENDOR.iterdir() if p.is_dir())
    assert [f.name for f in folders] == ["elkjs-0.12.1", "markdown-it-15.0.3"]
    for folder in folders:
        name, _, version = folder.name.rpartition("-")
        assert f"{name}@{version}" in readme
        assert any(p.name.startswith("LICENSE") for p in folder.iterdir()), folder
        scripts = sorted(folder.glob("*.*js"))
        assert scripts, folder
        for path in scripts:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert f"`{folder.name}/{path.name}` `{digest}`" in readme, f"{path} changed or is not listed"


def test_the_app_code_builds_no_html_from_strings_and_evaluates_nothing():
    """Output escaping by construction: only markdown.js writes HTML (through its Trusted Types policy)."""
    for path in [*APP.glob("*.js")]:
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + 1
        assert lines <= MAX_LINES, f"{path.name}: {lines} lines"
        assert not re.search(r"\beval\(|new Function\(|document\.write|insertAdjacentHTML|outerHTML", text), (
            path
        )
        if path.name != "markdown.js":
            assert "innerHTML" not in text, path.name
    for path in APP.glob("*.css"):
        assert path.read_text(encoding="utf-8").count("\n") <= MAX_LINES, path.name
