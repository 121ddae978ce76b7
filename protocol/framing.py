"""Worker-mode framing: `Content-Length: N\\r\\n\\r\\n` followed by N bytes, in both directions (LSP style)."""

from __future__ import annotations

from typing import BinaryIO

HEADER = b"Content-Length: "
MAX_HEADER_BYTES = 1024


class FramingError(ValueError):
    """A frame header that cannot be read; the stream cannot be resynchronised."""


def encode_frame(body: bytes) -> bytes:
    return b"%s%d\r\n\r\n%s" % (HEADER, len(body), body)


def parse_header_block(block: bytes) -> int:
    """Read the body length from a header block (the bytes before the blank line)."""
    length = None
    for line in block.split(b"\r\n"):
        if not line:
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            raise FramingError(f"malformed header line {line[:60]!r}")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"Content-Length is not a number: {value[:30]!r}") from None
    if length is None or length < 0:
        raise FramingError("frame without a valid Content-Length header")
    return length


def read_frame(stream: BinaryIO, max_body: int | None = None) -> bytes | None:
    """Read one frame from a blocking binary stream; None at a clean EOF between frames."""
    block = b""
    while True:
        line = stream.readline(MAX_HEADER_BYTES)
        if not line:
            if block:
                raise FramingError("end of stream inside a frame header")
            return None
        if line in (b"\r\n", b"\n"):
            if block:
                break
            continue
        block += line.rstrip(b"\r\n") + b"\r\n"
        if len(block) > MAX_HEADER_BYTES:
            raise FramingError("frame header too long")
    length = parse_header_block(block)
    if max_body is not None and length > max_body:
        raise FramingError(f"frame of {length} bytes exceeds the limit of {max_body}")
    body = stream.read(length)
    if len(body) != length:
        raise FramingError(f"end of stream inside a frame body ({len(body)} of {length} bytes)")
    return body


class FrameBuffer:
    """Incremental frame decoder for bytes arriving in arbitrary pieces (the kernel side)."""

    __slots__ = ("_buf", "_need", "max_body")

    def __init__(self, max_body: int | None = None):
        self._buf = bytearray()
        self._need: int | None = None
        self.max_body = max_body

    def __len__(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes]:
        """Add bytes; return the complete frame bodies now available."""
        self._buf += data
        frames: list[bytes] = []
        while True:
            if self._need is None:
                end = self._buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(self._buf) > MAX_HEADER_BYTES:
                        raise FramingError(f"no frame header in {bytes(self._buf[:60])!r}")
                    return frames
                self._need = parse_header_block(bytes(self._buf[:end]))
                if self.max_body is not None and self._need > self.max_body:
                    raise FramingError(f"frame of {self._need} bytes exceeds the limit of {self.max_body}")
                del self._buf[: end + 4]
            if len(self._buf) < self._need:
                return frames
            frames.append(bytes(self._buf[: self._need]))
            del self._buf[: self._need]
            self._need = None
