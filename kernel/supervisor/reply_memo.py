"""Replies of a pure plugin kept by the content of their request (a manifest's `pure`, protocol/SPEC.md §7).

A plugin that declares `pure` promises that, in worker mode, its main op's reply depends only on the
request's prompt, context, payload and paths — not on the per-call ids, the deadline, the clock, the LLM or
state a call leaves behind (a memo of its own, such as kept sentence vectors, does not count: it changes how
fast, not what). For such a plugin the kernel answers an identical request from the reply it kept instead of
a call: the second time a daemon is asked the same question over the same evidence, the solve is a lookup.
What the request carries decides the key, so a changed KB (other evidence), another intent or another
guidance unit is another key; nothing needs invalidating. `paths` enter the key as names, not content, on
purpose: by the `pure` promise the artifacts folder may hold only the plugin's own speed memo (gs-symbolic
keeps sentence vectors there on every solve), so its files change without changing a reply; a key over
their state misses on every call (tried in session 27: the daemon's gs CPU a turn rose ~8x). Only successful
parses of a reply whose status is not `error` are kept, in a bounded LRU (entries and bytes).

Identical requests in flight at once are one call: the first caller to miss `lead`s, the others `join` it and
get its reply once it is kept (counted as hits). A busy daemon sees this whenever sessions ask the same question
together: a first solve over new evidence (300-700 ms when the worker must encode its sentences) ran once per
caller, both on the CPU and in every caller's latency (session 28: 2-4 concurrent misses of each new key). A
leader whose reply is not kept (an error, a failure, a timeout) hands its joiners nothing: each then calls.

    >>> memo = ReplyMemo(max_entries=2)
    >>> memo.put(b"k1", b"reply one"); memo.put(b"k2", b"reply two"); memo.put(b"k3", b"reply three")
    >>> memo.get(b"k1") is None, memo.get(b"k3")
    (True, b'reply three')
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict

import msgspec
from mrpvm.protocol.envelope import Budget, Request, encode_request

MAX_ENTRIES = 1024
MAX_BYTES = 16 * 1024 * 1024
_NO_BUDGET = Budget()


def memo_key(request: Request) -> bytes:
    """A digest of what a pure plugin's reply depends on: the request without its ids, budget and LLM access."""
    bare = msgspec.structs.replace(
        request, budget=_NO_BUDGET, llm=None, requestId="", frameId="", sessionId="", id=None
    )
    return hashlib.blake2b(encode_request(bare), digest_size=20).digest()


class ReplyMemo:
    """A bounded LRU of raw replies (the bytes the worker wrote) by `memo_key`."""

    __slots__ = ("_items", "_bytes", "_flights", "max_entries", "max_bytes", "hits", "misses")

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES):
        self._items: OrderedDict[bytes, bytes] = OrderedDict()
        self._flights: dict[bytes, asyncio.Future[bytes | None]] = {}  # key -> the call computing it
        self._bytes = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> bytes | None:
        data = self._items.get(key)
        if data is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return data

    def put(self, key: bytes, data: bytes) -> None:
        if len(data) > self.max_bytes // 8:
            return  # one reply never crowds out the rest
        old = self._items.pop(key, None)
        if old is not None:
            self._bytes -= len(old)
        self._items[key] = data
        self._bytes += len(data)
        while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
            _, dropped = self._items.popitem(last=False)
            self._bytes -= len(dropped)

    async def join(self, key: bytes, timeout_s: float) -> bytes | None:
        """The reply of the identical call in flight, once it is kept; None when there is none, it kept
        nothing, or `timeout_s` passed first (the caller then calls itself)."""
        flight = self._flights.get(key)
        if flight is None:
            return None
        try:
            data = await asyncio.wait_for(asyncio.shield(flight), max(0.0, timeout_s))
        except TimeoutError:
            return None
        if data is not None:
            self.misses -= 1  # `get` counted this caller's miss: its reply came from the memo after all
            self.hits += 1
        return data

    def lead(self, key: bytes) -> bool:
        """This caller computes `key`'s reply (identical callers `join` it) unless one already does; a
        leader must `land` once its call ends, whatever the outcome."""
        if key in self._flights:
            return False
        self._flights[key] = asyncio.get_running_loop().create_future()
        return True

    def land(self, key: bytes) -> None:
        """The leader's call ended: its joiners get the reply kept for `key` (None: nothing was kept)."""
        flight = self._flights.pop(key, None)
        if flight is not None and not flight.done():
            flight.set_result(self._items.get(key))

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0
