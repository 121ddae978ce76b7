"""Worker-mode framing: exact bytes, stream reading, incremental decoding in arbitrary pieces, bad headers."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.protocol.framing import MAX_HEADER_BYTES, FrameBuffer, FramingError, encode_frame, read_frame


def test_encode_frame_exact_bytes():
    assert encode_frame(b'{"id":1}') == b'Content-Length: 8\r\n\r\n{"id":1}'
    assert encode_frame(b"") == b"Content-Length: 0\r\n\r\n"


def test_length_counts_bytes_not_characters():
    body = "Zürich → ok".encode()
    assert encode_frame(body).startswith(b"Content-Length: %d\r\n" % len(body))
    assert len(body) != len("Zürich → ok")


def test_read_frame_round_trip_and_clean_eof():
    bodies = [b"first", b"", "ünïcode\r\n\r\nwith blank lines".encode(), b"x" * 70000]
    stream = io.BytesIO(b"".join(encode_frame(b) for b in bodies))
    assert [read_frame(stream) for _ in bodies] == bodies
    assert read_frame(stream) is None
    assert read_frame(io.BytesIO(b"")) is None


def test_read_frame_accepts_extra_headers_case_and_stray_blank_lines():
    raw = (
        b"\r\n"  # a stray blank line between frames is skipped
        b"content-length: 5\r\nContent-Type: application/json\r\n\r\nhello"
        b"Content-Length:3\n\nabc"  # bare LF line endings from a careless peer
    )
    stream = io.BytesIO(raw)
    assert read_frame(stream) == b"hello"
    assert read_frame(stream) == b"abc"
    assert read_frame(stream) is None


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"Content-Length 5\r\n\r\nhello", "malformed header line"),
        (b"Content-Length: five\r\n\r\nhello", "not a number"),
        (b"Content-Type: text/plain\r\n\r\nhello", "without a valid Content-Length"),
        (b"Content-Length: -1\r\n\r\n", "without a valid Content-Length"),
        (b"Content-Length: 5\r\n", "end of stream inside a frame header"),
        (b"Content-Length: 10\r\n\r\nhello", "end of stream inside a frame body (5 of 10 bytes)"),
        (b"X-Pad: " + b"a" * (MAX_HEADER_BYTES + 10) + b"\r\n\r\n", "frame header too long"),
    ],
)
def test_read_frame_malformed(raw, message):
    with pytest.raises(FramingError) as err:
        read_frame(io.BytesIO(raw))
    assert message in str(err.value)


def test_read_frame_oversize_is_refused_before_reading_the_body():
    stream = io.BytesIO(encode_frame(b"y" * 100))
    with pytest.raises(FramingError) as err:
        read_frame(stream, max_body=99)
    assert "exceeds the limit of 99" in str(err.value)
    assert read_frame(io.BytesIO(encode_frame(b"y" * 100)), max_body=100) == b"y" * 100


# --------------------------------------------------------------------------- FrameBuffer


def test_frame_buffer_whole_and_byte_by_byte():
    bodies = [b'{"id":1}', b"", b"## Plugin Result\nStatus: success\n"]
    wire = b"".join(encode_frame(b) for b in bodies)
    assert FrameBuffer().feed(wire) == bodies
    buf = FrameBuffer()
    got: list[bytes] = []
    for i in range(len(wire)):
        got += buf.feed(wire[i : i + 1])
    assert got == bodies
    assert len(buf) == 0


def test_frame_buffer_keeps_a_partial_frame_until_it_completes():
    buf = FrameBuffer()
    assert buf.feed(b"Content-Length: 6\r\n\r\nabc") == []
    assert buf.feed(b"def" + b"Content-Len") == [b"abcdef"]
    assert len(buf) == len(b"Content-Len")
    assert buf.feed(b"gth: 1\r\n\r\nz") == [b"z"]


bodies_st = st.lists(st.binary(max_size=300), max_size=8)


@settings(max_examples=200, deadline=None)
@given(bodies=bodies_st, data=st.data())
def test_frame_buffer_in_random_chunks(bodies, data):
    wire = b"".join(encode_frame(b) for b in bodies)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=20)))
    buf = FrameBuffer()
    got: list[bytes] = []
    start = 0
    for cut in [*cuts, len(wire)]:
        got += buf.feed(wire[start:cut])
        start = cut
    assert got == bodies
    assert len(buf) == 0


@settings(max_examples=100, deadline=None)
@given(bodies=bodies_st)
def test_read_frame_round_trip_property(bodies):
    stream = io.BytesIO(b"".join(encode_frame(b) for b in bodies))
    assert [read_frame(stream) for _ in bodies] == bodies
    assert read_frame(stream) is None


@pytest.mark.parametrize(
    "raw",
    [
        b"Content-Length five\r\n\r\n",
        b"Content-Length: x\r\n\r\n",
        b"Content-Type: a\r\n\r\n",
    ],
)
def test_frame_buffer_malformed_header(raw):
    with pytest.raises(FramingError):
        FrameBuffer().feed(raw)


def test_frame_buffer_without_header_end_gives_up_after_the_header_limit():
    buf = FrameBuffer()
    assert buf.feed(b"garbage without a header end") == []
    with pytest.raises(FramingError) as err:
        buf.feed(b"g" * MAX_HEADER_BYTES)
    assert "no frame header" in str(err.value)


def test_frame_buffer_oversize():
    buf = FrameBuffer(max_body=10)
    assert buf.feed(encode_frame(b"0123456789")) == [b"0123456789"]
    with pytest.raises(FramingError) as err:
        buf.feed(b"Content-Length: 11\r\n\r\n")
    assert "exceeds the limit of 10" in str(err.value)
