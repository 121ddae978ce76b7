"""`<home>/daemon.json`: where a running `mrpvm serve` on this home answers, so `mrpvm ask` can use it
(like `docker` finds `dockerd`) instead of starting its own plugin workers.

The daemon writes the file once it accepts connections and removes it when it stops; a file left by a
killed daemon is recognised (its pid is gone, or the address does not answer) and ignored. Only a
loopback address is ever advertised: the CLI talks to its own machine's daemon.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

FILE_NAME = "daemon.json"


class DaemonAddress(msgspec.Struct, kw_only=True, frozen=True):
    pid: int
    host: str
    port: int
    token: bool = False  # the daemon requires a bearer token (MRPVM_API_TOKEN)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def daemon_path(home: Path) -> Path:
    return home / FILE_NAME


def advertise(home: Path, address: DaemonAddress) -> None:
    """Write the file atomically (a reader never sees half of it)."""
    path = daemon_path(home)
    tmp = path.with_name(f".{FILE_NAME}.{os.getpid()}")
    tmp.write_bytes(msgspec.json.encode(address))
    os.replace(tmp, path)


def withdraw(home: Path, pid: int) -> None:
    """Remove the file if it is still this daemon's (another daemon may have replaced it)."""
    found = read_address(home, check_alive=False)
    if found is not None and found.pid == pid:
        try:
            daemon_path(home).unlink()
        except FileNotFoundError:
            pass


def read_address(home: Path, *, check_alive: bool = True) -> DaemonAddress | None:
    """The advertised daemon, or None (no file, a damaged one, a non-loopback address, a dead pid)."""
    try:
        address = msgspec.json.decode(daemon_path(home).read_bytes(), type=DaemonAddress)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if address.host not in ("127.0.0.1", "::1", "localhost"):
        return None
    if check_alive:
        try:
            os.kill(address.pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, another user's: the HTTP call decides
    return address
