"""This machine's identity among the nodes sharing one store (README "Running on several machines").

A kb-plugin's index lives in the node's own artifact folder, so the store records acknowledgements per
(source, plugin, node). The node id is MRPVM_NODE_ID when set, else a stable default kept in
`<home>/node-id` (created once: the host name and random hex). Processes sharing one home (one machine,
one artifact folder) are one node; a home copied to another machine with its database but without its
artifacts must not claim the indexes, so a copied `node-id` file is the user's explicit choice.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from collections.abc import Mapping
from pathlib import Path

from .errors import BadInput

NODE_VARIABLE = "MRPVM_NODE_ID"
STALE_VARIABLE = (
    "MRPVM_NODE_STALE_HOURS"  # a node not seen for this long is forgotten (kernel/store_nodes.py)
)
DEFAULT_STALE_HOURS = 168.0
NODE_FILE = "node-id"
LOCAL_NODE = "local"  # a store opened without a home (tests, tools): one node
_VALID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def valid_node_id(value: str) -> str:
    value = value.strip()
    if not _VALID.fullmatch(value):
        raise BadInput(
            "BAD_NODE_ID",
            f"a node id is 1-64 letters, digits, '.', '_' or '-' starting with a letter or digit (got {value!r})",
            {"node": value},
        )
    return value


def node_id_for(home: Path, environ: Mapping[str, str] | None = None) -> str:
    """MRPVM_NODE_ID, else `<home>/node-id` (written once, atomically, on first use)."""
    env = os.environ if environ is None else environ
    if env.get(NODE_VARIABLE, "").strip():
        return valid_node_id(env[NODE_VARIABLE])
    path = Path(home) / NODE_FILE
    try:
        return valid_node_id(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        pass
    host = re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname()).strip("-.")[:40] or "node"
    candidate = f"{host}-{secrets.token_hex(4)}"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{NODE_FILE}.{os.getpid()}.{secrets.token_hex(2)}")
    tmp.write_text(candidate + "\n", encoding="utf-8")
    try:
        os.link(tmp, path)  # first writer wins: processes starting together agree on one id
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return valid_node_id(path.read_text(encoding="utf-8"))


def node_stale_after_s(environ: Mapping[str, str] | None = None) -> float:
    """MRPVM_NODE_STALE_HOURS (a positive number of hours, default a week) in seconds."""
    env = os.environ if environ is None else environ
    raw = env.get(STALE_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_STALE_HOURS * 3600.0
    try:
        hours = float(raw)
    except ValueError:
        hours = -1.0
    if not (0.0 < hours <= 10 * 365 * 24):  # NaN fails too
        raise BadInput(
            "BAD_NODE_STALE_HOURS",
            f"{STALE_VARIABLE} is a number of hours in (0, 87600] (got {raw!r})",
            {"value": raw},
        )
    return hours * 3600.0
