"""The web app's static files, served by the daemon on the API's own origin (no CDN, no build step).

- `GET /` is the page (`web/index.html`); `GET /app/<file>` the app's modules and styles (`web/app/`);
  `GET /vendor/<lib>-<version>/<file>` the pinned third-party browser files (`web/vendor/`, see its
  README). All three are open without the bearer token: they are the same public files for everyone and
  the page must load before it can ask for the token; every API route the page calls still needs it.
- Only files with a known suffix inside those folders are served, with an explicit content type (a
  module script must be `text/javascript`), never a dot-file, never a path that leaves the folder.
- Caching: the page and the app files are `no-cache` (revalidated by ETag / Last-Modified, a 304 when
  unchanged, so an upgraded daemon is seen at once); vendor files live under a versioned folder and are
  `immutable` for a year.
- Every response carries a strict Content-Security-Policy: scripts only from this origin (no inline
  script, no eval), styles only from files, connections only to this origin, Trusted Types required for
  every HTML sink (the app's one policy hands markdown-it's output to `innerHTML`), no framing; plus
  nosniff, no referrer, same-origin opener and resource policies.
"""

from __future__ import annotations

import os
from email.utils import parsedate_to_datetime
from pathlib import Path

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from .errors import ApiError
from .routing import RouteSpec

WEB_ROOT = Path(__file__).resolve().parent / "web"
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".json": "application/json",
    ".md": "text/plain; charset=utf-8",
    "": "text/plain; charset=utf-8",  # LICENSE files
}
TRUSTED_TYPE_POLICIES = "mrpvm-markdown mrpvm-worker"
CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "worker-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        f"trusted-types {TRUSTED_TYPE_POLICIES}",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}
REVALIDATE = "no-cache"
IMMUTABLE = "public, max-age=31536000, immutable"


def resolve(folder: Path, relative: str) -> Path:
    """The file `relative` names inside `folder`, or 404 (outside the folder, a dot-file, an unknown type)."""
    parts = [p for p in relative.split("/") if p]
    missing = ApiError(404, "NOT_FOUND", f"no such file: {relative}", {"path": relative})
    if not parts or any(p.startswith(".") or p == ".." or "\\" in p for p in parts):
        raise missing
    base = folder.resolve()
    path = base.joinpath(*parts).resolve()
    if not path.is_relative_to(base) or path.suffix.lower() not in MEDIA_TYPES or not path.is_file():
        raise missing
    return path


def _not_modified(response: Response, request: Request) -> bool:
    given = Headers(scope=request.scope)
    etag = response.headers.get("etag")
    if_none_match = given.get("if-none-match")
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        return etag is not None and (etag in tags or "*" in tags)
    since, modified = given.get("if-modified-since"), response.headers.get("last-modified")
    if since and modified:
        try:
            return parsedate_to_datetime(modified) <= parsedate_to_datetime(since)
        except (TypeError, ValueError):
            return False
    return False


def serve(request: Request, path: Path, cache: str) -> Response:
    headers = {**SECURITY_HEADERS, "Cache-Control": cache}
    response = FileResponse(
        path, media_type=MEDIA_TYPES[path.suffix.lower()], headers=headers, stat_result=os.stat(path)
    )
    if _not_modified(response, request):
        kept = {
            k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-type")
        }
        return Response(status_code=304, headers=kept)
    return response


async def page(request: Request) -> Response:
    return serve(request, WEB_ROOT / "index.html", REVALIDATE)


async def app_file(request: Request) -> Response:
    return serve(request, resolve(WEB_ROOT / "app", request.path_params["path"]), REVALIDATE)


async def vendor_file(request: Request) -> Response:
    return serve(request, resolve(WEB_ROOT / "vendor", request.path_params["path"]), IMMUTABLE)


ROUTES = [
    RouteSpec(
        "/", "GET", page, "The web app (HTML; ?kb=, ?session=, &turn= deep links)", tag="web", open=True
    ),
    RouteSpec("/app/{path:path}", "GET", app_file, "The web app's modules and styles", tag="web", open=True),
    RouteSpec(
        "/vendor/{path:path}",
        "GET",
        vendor_file,
        "Pinned third-party browser files (elkjs, markdown-it), immutable",
        tag="web",
        open=True,
    ),
]
