"""Who may talk to the daemon: the Host check (DNS rebinding), the cross-origin checks on state-changing
requests (CSRF), the JSON content type, and CORS for configured origins only.

Rules (API.md "Host and origin checks"):
- **Host**: every request's `Host` must name the address the connection arrived on — its IP, plus
  `127.0.0.1`, `localhost` and `[::1]` when that address is loopback — with the port the daemon serves
  when the header carries one; or an entry of the allowed-host list (`name` for any port, `name:port`
  for that port). Anything else (a DNS-rebound `attacker.example`, a missing or malformed Host) is
  `421 FORBIDDEN_HOST`. An IP-literal Host cannot be rebound, so a wildcard bind (`0.0.0.0`) accepts the
  address each connection was made to.
- **Origin** (POST, PUT, PATCH, DELETE): an `Origin` header must be the daemon's own origin (the scheme
  served and the request's Host) or an allowed origin; `Origin: null` and any other origin are
  `403 FORBIDDEN_ORIGIN`, and so is `Sec-Fetch-Site: cross-site` unless the Origin is an allowed one.
  Clients that send no Origin (curl, the OpenAI SDK) are not affected.
- **Content type** (same methods): a body must be `application/json` (parameters such as charset
  allowed); a body sent as a form, as text/plain or with no Content-Type is `415
  UNSUPPORTED_MEDIA_TYPE` — no HTML form and no "simple" cross-site fetch can send JSON.
- **CORS**: no CORS header unless the request's Origin is an allowed origin; then the response names that
  origin (never `*`) and preflights (`OPTIONS` with `Access-Control-Request-Method`) are answered. A
  preflight from any other origin is `403 FORBIDDEN_ORIGIN`.
GET and HEAD stay open to any origin (a browser page of another origin cannot read the answer without
CORS headers), but they are Host-checked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from mrpvm.kernel.errors import ConfigError
from starlette.types import Scope

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
JSON_MEDIA_TYPE = "application/json"
# Routes whose body is not JSON. Their types are not CORS-safelisted either: a page of another site cannot
# send them without a preflight, which is refused.
OTHER_MEDIA_TYPES = {"/kbs/import": frozenset({"application/zip"})}
DEFAULT_PORTS = {"http": 80, "https": 443}
CORS_METHODS = b"GET, HEAD, POST, PUT, PATCH, DELETE"
CORS_HEADERS = frozenset({"authorization", "content-type", "cache-control", "x-mrpvm-cache", "x-request-id"})
CORS_EXPOSED = b"X-Request-Id, Server-Timing"
CORS_MAX_AGE = b"600"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request the policy turns away: the HTTP status, a stable code, a message, details."""

    status: int
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


def parse_authority(value: str) -> tuple[str, int | None] | None:
    """`host[:port]` of a Host header or an origin: (lower-cased host without IPv6 brackets or a final
    dot, port or None); None when malformed."""
    value = value.strip().lower()
    if not value or any(c in value for c in "/@?#\\ \t,"):
        return None
    port_text: str | None = None
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[1:end], value[end + 1 :]
        if end < 0 or not host or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    elif ":" in value:
        host, _, port_text = value.rpartition(":")
        if ":" in host:  # an IPv6 address needs its brackets
            return None
    else:
        host = value
    host = host[:-1] if host.endswith(".") else host
    if not host:
        return None
    if port_text is None:
        return host, None
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        return None
    return host, int(port_text)


def parse_origin(value: str) -> tuple[str, str, int] | None:
    """`scheme://host[:port]` as (scheme, host, port with the scheme's default filled in); None when
    malformed or opaque (`null`)."""
    scheme, sep, rest = value.strip().lower().partition("://")
    if not sep or scheme not in DEFAULT_PORTS:
        return None
    authority = parse_authority(rest[:-1] if rest.endswith("/") else rest)
    if authority is None:
        return None
    host, port = authority
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]


@lru_cache(maxsize=512)  # a daemon sees few distinct addresses; parsing one costs microseconds
def _ip_name(address: str) -> tuple[str, bool] | None:
    """(canonical text, is loopback) of an IP address (IPv4-mapped IPv6 as IPv4); None if not an IP."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip), ip.is_loopback


def _headers(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", []) if k == name]


class OriginPolicy:
    """The Host, Origin, content-type and CORS rules above, for one daemon's configuration."""

    def __init__(self, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()):
        self.hosts: list[tuple[str, int | None]] = []
        for entry in allowed_hosts:
            parsed = parse_authority(entry)
            if parsed is None or entry.strip() == "*":
                raise ConfigError(
                    f"allowed host {entry!r} is not a host name or address with an optional :port"
                )
            self.hosts.append(parsed)
        self.origins: set[tuple[str, str, int]] = set()
        for entry in allowed_origins:
            origin = parse_origin(entry)
            if origin is None:
                raise ConfigError(
                    f"allowed origin {entry!r} is not scheme://host[:port] (http or https; no path, no '*')"
                )
            self.origins.add(origin)

    # ------------------------------------------------------------------ Host

    def _served(self, scope: Scope) -> tuple[set[str], int | None]:
        server = scope.get("server") or (None, None)
        names: set[str] = set()
        ip = _ip_name(str(server[0])) if server[0] else None
        if ip is None:  # a Unix socket or an in-process transport: loopback names only
            names |= LOOPBACK_NAMES
            if server[0]:
                names.add(str(server[0]).lower())
        else:
            names.add(ip[0])
            if ip[1]:
                names |= LOOPBACK_NAMES
        return names, server[1] if isinstance(server[1], int) else None

    def host_refusal(self, scope: Scope) -> Refusal | None:
        values = _headers(scope, b"host")
        if len(values) != 1:
            return Refusal(
                421, "FORBIDDEN_HOST", "the request needs exactly one Host header naming this daemon"
            )
        parsed = parse_authority(values[0])
        if parsed is not None:
            host, port = parsed
            named = _ip_name(host)
            host = named[0] if named is not None else host
            names, served_port = self._served(scope)
            if host in names and (port is None or served_port is None or port == served_port):
                return None
            default = DEFAULT_PORTS.get(str(scope.get("scheme", "http")), 80)
            for name, allowed_port in self.hosts:
                if name == host and (allowed_port is None or allowed_port == (port or default)):
                    return None
        return Refusal(
            421,
            "FORBIDDEN_HOST",
            f"Host {values[0]!r} does not name this daemon (a DNS-rebinding guard); "
            "use its address or add the name with --allowed-host",
            {"host": values[0]},
        )

    # ------------------------------------------------------------------ Origin and Sec-Fetch-Site

    def allowed_origin(self, scope: Scope) -> str | None:
        """The request's Origin when it is one of the configured allowed origins (CORS applies)."""
        values = _headers(scope, b"origin")
        if len(values) == 1 and self.origins:
            parsed = parse_origin(values[0])
            if parsed is not None and parsed in self.origins:
                return values[0]
        return None

    def _same_origin(self, scope: Scope, origin: str) -> bool:
        parsed = parse_origin(origin)
        host = _headers(scope, b"host")
        authority = parse_authority(host[0]) if len(host) == 1 else None
        if parsed is None or authority is None:
            return False
        scheme = str(scope.get("scheme", "http"))
        port = authority[1] if authority[1] is not None else DEFAULT_PORTS.get(scheme, 80)
        return parsed == (scheme, authority[0], port)

    def origin_refusal(self, scope: Scope) -> Refusal | None:
        if self.allowed_origin(scope) is not None:
            return None
        origins = _headers(scope, b"origin")
        if len(origins) > 1 or (origins and not self._same_origin(scope, origins[0])):
            shown = origins[0] if len(origins) == 1 else origins
            return Refusal(
                403,
                "FORBIDDEN_ORIGIN",
                f"cross-origin {scope.get('method')} from {shown!r} refused; "
                "add the origin with --allowed-origin to let its pages call the daemon",
                {"origin": shown},
            )
        site = [v.strip().lower() for v in _headers(scope, b"sec-fetch-site")]
        if "cross-site" in site:
            return Refusal(
                403,
                "FORBIDDEN_ORIGIN",
                f"cross-site {scope.get('method')} refused (Sec-Fetch-Site: cross-site)",
                {"secFetchSite": "cross-site"},
            )
        return None

    @staticmethod
    def content_type_refusal(scope: Scope) -> Refusal | None:
        types = _headers(scope, b"content-type")
        if types:
            media = types[0].split(";", 1)[0].strip().lower()
            accepted = OTHER_MEDIA_TYPES.get(str(scope.get("path", "")), frozenset()) | {JSON_MEDIA_TYPE}
            if len(types) == 1 and media in accepted:
                return None
            given: str | None = types[0] if len(types) == 1 else ", ".join(types)
        else:
            lengths = _headers(scope, b"content-length")
            chunked = bool(_headers(scope, b"transfer-encoding"))
            if not chunked and (not lengths or lengths[0].strip() == "0"):
                return None  # no body at all: nothing to type
            given = None
        return Refusal(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            f"a {scope.get('method')} body must be sent as Content-Type: application/json"
            + (f" (got {given!r})" if given else " (no Content-Type given)"),
            {"contentType": given, "expected": JSON_MEDIA_TYPE},
        )

    # ------------------------------------------------------------------ the whole check, CORS

    def refusal(self, scope: Scope) -> Refusal | None:
        """Why this request may not reach a route, or None (the preflight is `preflight`'s)."""
        refused = self.host_refusal(scope)
        if refused is None and str(scope.get("method", "")).upper() in STATE_CHANGING:
            refused = self.origin_refusal(scope) or self.content_type_refusal(scope)
        return refused

    def is_preflight(self, scope: Scope) -> bool:
        return (
            scope.get("method") == "OPTIONS"
            and bool(_headers(scope, b"origin"))
            and bool(_headers(scope, b"access-control-request-method"))
        )

    def preflight(self, scope: Scope) -> tuple[int, list[tuple[bytes, bytes]]] | Refusal:
        """The answer to a CORS preflight: 204 with the CORS headers for an allowed origin, else a refusal."""
        refused = self.host_refusal(scope)
        if refused is not None:
            return refused
        origin = self.allowed_origin(scope)
        if origin is None:
            shown = _headers(scope, b"origin")[0]
            return Refusal(
                403,
                "FORBIDDEN_ORIGIN",
                f"origin {shown!r} may not call this daemon from a browser (no CORS for it); "
                "add it with --allowed-origin",
                {"origin": shown},
            )
        asked = {
            h.strip().lower()
            for value in _headers(scope, b"access-control-request-headers")
            for h in value.split(",")
            if h.strip()
        }
        headers = self.cors_headers(origin) + [
            (b"access-control-allow-methods", CORS_METHODS),
            (b"access-control-allow-headers", ", ".join(sorted(asked & CORS_HEADERS)).encode()),
            (b"access-control-max-age", CORS_MAX_AGE),
            (b"content-length", b"0"),
        ]
        return 204, headers

    @staticmethod
    def cors_headers(origin: str | None) -> list[tuple[bytes, bytes]]:
        """The CORS response headers for an allowed origin (none for any other request)."""
        if origin is None:
            return []
        return [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"vary", b"Origin"),
            (b"access-control-expose-headers", CORS_EXPOSED),
        ]
