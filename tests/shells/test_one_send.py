"""A response's head goes out with its body in one send (shells/api/server.py `OneSendTransport`), a head
with nothing after it goes out on the loop's next turn, and everything else passes through."""

from __future__ import annotations

import asyncio
from typing import Any

from mrpvm.shells.api.server import OneSendTransport, header_timeout_protocol

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n"


class Recorder:
    def __init__(self) -> None:
        self.sends: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.sends.append(bytes(data))

    def writelines(self, parts: Any) -> None:
        self.sends.append(b"".join(parts))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5)}.get(name, default)


def test_a_head_and_its_body_go_out_in_one_send():
    async def go() -> list[bytes]:
        wire = Recorder()
        transport = OneSendTransport(wire, asyncio.get_running_loop())
        transport.write(HEAD)
        assert wire.sends == []  # held
        transport.write(b"body")
        await asyncio.sleep(0)
        transport.write(HEAD)  # the next response on the keep-alive connection
        transport.write(b"next")
        await asyncio.sleep(0)
        return wire.sends

    assert asyncio.run(go()) == [HEAD + b"body", HEAD + b"next"]


def test_a_lone_head_goes_out_on_the_loops_next_turn_and_the_rest_passes_through():
    async def go() -> None:
        wire = Recorder()
        transport = OneSendTransport(wire, asyncio.get_running_loop())
        transport.write(b"chunk")  # not a head: at once
        assert wire.sends == [b"chunk"]
        transport.write(HEAD)  # a streamed response whose first chunk comes later
        await asyncio.sleep(0)
        assert wire.sends == [b"chunk", HEAD]
        transport.write(b"later")
        assert wire.sends == [b"chunk", HEAD, b"later"]
        transport.write(HEAD)  # an error answer written and the connection closed at once
        transport.close()
        assert wire.sends[-1] == HEAD and wire.closing
        await asyncio.sleep(0)
        assert wire.sends.count(HEAD) == 2  # not sent twice
        assert transport.get_extra_info("peername") == ("127.0.0.1", 5)  # the transport's own

    asyncio.run(go())


def test_the_daemons_protocol_gives_uvicorn_the_one_send_transport():
    class Base(asyncio.Protocol):
        def __init__(self) -> None:
            self.loop = asyncio.get_event_loop()
            self.cycle = None

        def connection_made(self, transport: Any) -> None:
            self.transport = transport

    async def go() -> Any:
        protocol = header_timeout_protocol(5.0, Base)()
        protocol.connection_made(Recorder())
        protocol._disarm_header_timer()
        return protocol.transport

    assert isinstance(asyncio.run(go()), OneSendTransport)
