"""The LLM relay: inside an LLM plugin's sandbox, the one door out of its private network.

A sandboxed plugin that declares `usesLLM` gets its own network namespace (nothing but its own loopback),
so it cannot reach the daemon, other local services or the internet. Its `llm.baseUrl` still says
`http://127.0.0.1:PORT/v1`: this relay listens on that address inside the namespace and forwards each
connection to the kernel's LLM endpoint through a Unix socket bound into the sandbox. It is the first
program the sandbox runs:

    python -I -S llm_relay.py HOST PORT SOCKET -- PLUGIN_ARGV...

It binds HOST:PORT (before the plugin runs, so the plugin's first connection is queued, never refused),
forks twice — the relay process ends up a child of the sandbox's pid 1 (pid 4 of the namespace; the
worker's stray sweep spares exactly that pid) rather than of the plugin — and execs the plugin in its
own place (pid 2, stdin/stdout untouched). The relay holds no stdio, so it never delays the kernel seeing
the plugin's EOF, and it dies with the sandbox. Standard library only: it runs with `-I -S`, before and
apart from anything of the project.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from typing import NoReturn

RELAY_NS_PID = 4  # bwrap's init is 1, the plugin 2, the first fork 3 (gone at once), the relay 4
BUFFER = 65536


def _pump(src: socket.socket, dst: socket.socket, done: list[int], lock: threading.Lock) -> None:
    """Copy src → dst until EOF; pass the half-close on; the second direction to end closes both."""
    try:
        while True:
            data = src.recv(BUFFER)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    with lock:
        done[0] += 1
        last = done[0] == 2
    if last:
        src.close()
        dst.close()


def _serve(listener: socket.socket, target: str) -> None:
    threading.stack_size(256 << 10)  # the sandbox's address-space limit covers the relay too
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(target)
        except OSError:
            client.close()
            upstream.close()
            continue
        done, lock = [0], threading.Lock()
        for src, dst in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(src, dst, done, lock), daemon=True).start()


def _detach_stdio() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _fail(code: str, message: str) -> NoReturn:
    """The protocol's one JSON error line on stderr, exit 1."""
    import json

    sys.stderr.write(json.dumps({"code": code, "message": message, "details": {}}) + "\n")
    sys.exit(1)


def main(argv: list[str]) -> None:
    try:
        split = argv.index("--")
        host, port, target = argv[1:split]
        plugin = argv[split + 1 :]
        if not plugin:
            raise ValueError("no plugin command after --")
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, int(port)))
        listener.listen(64)
    except (ValueError, OSError) as err:
        _fail("SANDBOX_RELAY", f"the LLM relay cannot start: {err}")
    child = os.fork()
    if child == 0:
        if os.fork() != 0:
            os._exit(0)
        _detach_stdio()
        try:
            _serve(listener, target)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    listener.close()  # the plugin does not hold the listening socket
    try:
        if os.path.isabs(plugin[0]):
            os.execv(plugin[0], plugin)
        else:
            os.execvp(plugin[0], plugin)
    except OSError as err:
        _fail("SPAWN_FAILED", f"cannot start {plugin[0]}: {err.strerror}")


if __name__ == "__main__":
    main(sys.argv)
