"""protocol/digests.py: the built-in sha256 and blake2b give hashlib's digests, one-shot and incremental."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st
from mrpvm.protocol.digests import blake2b, sha256


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300), st.integers(min_value=1, max_value=64), st.integers(min_value=0, max_value=300)
)
def test_the_digests_are_hashlibs(data, size, cut):
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert blake2b(data, digest_size=size).digest() == hashlib.blake2b(data, digest_size=size).digest()
    parts = blake2b(digest_size=16)
    parts.update(data[:cut])
    parts.update(data[cut:])
    assert parts.hexdigest() == hashlib.blake2b(data, digest_size=16).hexdigest()
