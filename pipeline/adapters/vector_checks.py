"""Input checks every VectorIndex adapter applies the same way, so the fake cannot drift from the real ones."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np

from pipeline.core.ports import Vector


def canonical_id(point_id: str) -> str:
    """Qdrant stores ids as UUIDs and hands back the canonical lower-case form; match it on the way in."""
    return str(uuid.UUID(point_id))


def checked_array(vector: Sequence[float] | Vector, dimension: int) -> Vector:
    """A float32 array of shape (dimension,) with finite components, or ValueError."""
    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dimension,):
        raise ValueError(f"expected a vector of shape ({dimension},), got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("vector has NaN or infinite components")
    return array


def as_vector(vector: Sequence[float] | Vector, dimension: int) -> list[float]:
    values: list[float] = checked_array(vector, dimension).tolist()
    return values
