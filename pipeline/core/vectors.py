"""Embedding vectors: the array type the ports speak and the float32 codec PostgreSQL stores them in. Pure numpy."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def to_blob(vector: Vector) -> bytes:
    """float32 little-endian bytes, as stored in PostgreSQL."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> Vector:
    return np.frombuffer(blob, dtype="<f4")
