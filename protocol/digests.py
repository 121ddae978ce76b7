"""sha256 and blake2b for plugin processes, without importing hashlib where CPython builds them in.

hashlib loads OpenSSL's libcrypto when it is imported (~2–4 ms of every plugin worker's start), for every
algorithm, also for the two the plugins use, which CPython has as built-in modules (`_blake2`; `_sha2` from
3.12, `_sha256` before) — the standard library's `random` imports its sha512 the same way. The digests are
the same either way (tests/protocol/test_digests.py); without the built-in module, hashlib's is used.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

try:
    from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # pragma: no cover
        from hashlib import sha256  # type: ignore[assignment,no-redef,unused-ignore]

__all__ = ["blake2b", "sha256"]
