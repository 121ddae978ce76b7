"""Sentence vectors without numpy: a kept row as a tuple of floats, and the dot product of two.

A worker that compares kept vectors and never encodes (gs-symbolic's cosines: a question against a few
dozen sentences, word against word) does a few hundred dot products of DIMENSIONS floats a call; numpy's
import cost such a process ~60-70 ms of CPU, more than the rest of its call. It reads its rows through
`encoder.kept_vectors` instead, and numpy is imported only where a text must be encoded (the model runs
on it).

`dot` is exact to ~1e-15: a.b = (|a|^2 + |b|^2 - |a - b|^2) / 2, the norms in float64 by math.hypot and
math.dist (C loops, accurate to about one rounding each), each vector's squared norm computed once
(`Vector.square`). numpy's float32 product of the same rows is within ~1e-7 of it. Summing the products in
Python (`math.fsum(map(operator.mul, a, b))`, exact) costs ~5x as much a pair.
"""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

from .forward import DIMENSIONS

_ROW = struct.Struct(f"={DIMENSIONS}f")  # kept.py's row: DIMENSIONS float32 in the machine's byte order


class Vector(NamedTuple):
    """A sentence vector's components (as float32 gave them) and its squared length."""

    values: tuple[float, ...]
    square: float


def from_row(row: bytes) -> Vector:
    values = _ROW.unpack(row)
    return Vector(values, math.hypot(*values) ** 2)


def dot(a: Vector, b: Vector) -> float:
    """a.b (the cosine of two unit vectors)."""
    return (a.square + b.square - math.dist(a.values, b.values) ** 2) / 2
