"""`<home>/daemon.json`: where a running `mrpvm serve` on this home answers, so `mrpvm ask` can use it
(like `docker` finds `dockerd`) instead of starting its own plugin workers.

The daemon writes the file once it accepts connections and removes it when it stops; a file left by a
killed daemon is recognised (its pid is gone, or the address does not answer) and ignored. Only a
loopback address is ever advertised: the CLI talks to its own machine's daemon.

Standard library only (json, with each field checked here): `mrpvm ask`'s thin path (fast_ask.py) reads
this file before anything else is imported, and msgspec alone would add a third to its start. Reading
it (`read_address`) loads neither pathlib nor typing either (each ~5 % of that path's own start).
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import NamedTuple

    class _Fields(NamedTuple):
        pid: int
        host: str
        port: int
        token: bool = False  # the daemon requires a bearer token (MRPVM_API_TOKEN)

else:
    from collections import namedtuple

    _Fields = namedtuple("DaemonAddress", "pid host port token", defaults=(False,))

FILE_NAME = "daemon.json"
LOOPBACK = ("127.0.0.1", "::1", "localhost")


class DaemonAddress(_Fields):
    """pid, host, port, token (the daemon requires a bearer token: MRPVM_API_TOKEN)."""

    __slots__ = ()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def daemon_path(home: str | os.PathLike[str]) -> Path:
    from pathlib import Path

    return Path(home) / FILE_NAME


def advertise(home: str | os.PathLike[str], address: DaemonAddress) -> None:
    """Write the file atomically (a reader never sees half of it)."""
    path = daemon_path(home)
    tmp = path.with_name(f".{FILE_NAME}.{os.getpid()}")
    tmp.write_text(json.dumps(address._asdict()))
    os.replace(tmp, path)


def withdraw(home: str | os.PathLike[str], pid: int) -> None:
    """Remove the file if it is still this daemon's (another daemon may have replaced it)."""
    found = read_address(home, check_alive=False)
    if found is not None and found.pid == pid:
        try:
            daemon_path(home).unlink()
        except FileNotFoundError:
            pass


def _decode(data: bytes) -> DaemonAddress | None:
    """The address in the file's JSON, or None when a field is missing or of the wrong type (unknown fields
    are ignored: a newer daemon may add some)."""
    try:
        raw = json.loads(data)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    pid, host, port, token = raw.get("pid"), raw.get("host"), raw.get("port"), raw.get("token", False)
    if not (isinstance(pid, int) and not isinstance(pid, bool) and pid > 0):
        return None
    if not (isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536):
        return None
    if not isinstance(host, str) or not isinstance(token, bool):
        return None
    return DaemonAddress(pid=pid, host=host, port=port, token=token)


def read_address(home: str | os.PathLike[str], *, check_alive: bool = True) -> DaemonAddress | None:
    """The advertised daemon, or None (no file, a damaged one, a non-loopback address, a dead pid)."""
    try:
        with open(os.path.join(home, FILE_NAME), "rb") as f:
            address = _decode(f.read())
    except OSError:
        return None
    if address is None or address.host not in LOOPBACK:
        return None
    if check_alive:
        try:
            os.kill(address.pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, another user's: the HTTP call decides
    return address
