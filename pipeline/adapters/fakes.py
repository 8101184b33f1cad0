"""In-process stand-ins for the vector index and the embedder, for fast deterministic tests."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from pipeline.adapters.vector_checks import canonical_id, checked_array
from pipeline.core.errors import IndexUnavailable
from pipeline.core.ports import IndexHit, IndexPoint, Vector

_WORD = re.compile(r"\w+")


class InMemoryVectorIndex:
    """The VectorIndex contract with exact cosine search over a dict.

    Set `unavailable = True` to make every call raise IndexUnavailable, as an unreachable Qdrant would.
    """

    def __init__(self, dimension: int) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be positive, got {dimension}")
        self.dimension = dimension
        self.unavailable = False
        # Unit vectors, so a dot product is the cosine; a zero vector stays zero and scores 0 like Qdrant.
        self._vectors: dict[str, Vector] = {}
        self._payloads: dict[str, dict[str, Any]] = {}

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        # Validate the whole batch first so a bad point leaves nothing half-written, as on the server.
        batch = [(canonical_id(p.id), _unit(p.vector, self.dimension), p.payload) for p in points]
        self._check_available()
        for point_id, vector, payload in batch:
            self._vectors[point_id] = vector
            self._payloads[point_id] = copy.deepcopy(payload)

    def delete(self, point_ids: Sequence[str]) -> None:
        ids = [canonical_id(i) for i in point_ids]
        self._check_available()
        for point_id in ids:
            self._vectors.pop(point_id, None)
            self._payloads.pop(point_id, None)

    def delete_refs(self, kind: str, ref_ids: Sequence[int]) -> None:
        refs = {int(i) for i in ref_ids}
        self._check_available()
        for point_id, payload in list(self._payloads.items()):
            if payload.get("kind") == kind and payload.get("ref_id") in refs:
                del self._vectors[point_id], self._payloads[point_id]

    def search(self, vector: Sequence[float], *, agent_id: str, user_id: str, limit: int) -> list[IndexHit]:
        query = _unit(vector, self.dimension)
        self._check_available()
        candidates = [
            point_id
            for point_id, payload in self._payloads.items()
            if payload.get("agent_id") == agent_id and payload.get("user_id") == user_id
        ]
        if limit < 1 or not candidates:
            return []
        scores = np.stack([self._vectors[i] for i in candidates]) @ query
        # Ties break on id so that results do not depend on insertion order.
        ranked = sorted(zip(candidates, scores.tolist(), strict=True), key=lambda hit: (-hit[1], hit[0]))
        return [
            IndexHit(id=point_id, score=float(score), payload=copy.deepcopy(self._payloads[point_id]))
            for point_id, score in ranked[:limit]
        ]

    def ids(self) -> set[str]:
        self._check_available()
        return set(self._vectors)

    def count(self) -> int:
        self._check_available()
        return len(self._vectors)

    def close(self) -> None:
        """Nothing to release; the contents stay, as they would on disk."""

    def _check_available(self) -> None:
        if self.unavailable:
            raise IndexUnavailable("in-memory index marked unavailable")


class HashingEmbedder:
    """A deterministic bag-of-words embedder: no model, no download, same vectors in every process.

    Each lower-cased word and each character trigram of a padded word (`#cat#` gives `#ca`, `cat`,
    `at#`) is hashed with blake2b into one of `dimension` buckets with a +/-1 sign. Shared words
    carry most of the similarity; trigrams, weighted lower, let `hike` and `hiking` overlap a little.
    The signs make bucket collisions cancel out on average, so unrelated texts score near 0 instead
    of drifting positive.
    """

    WORD_WEIGHT = 1.0
    TRIGRAM_WEIGHT = 0.35

    def __init__(self, dimension: int = 384) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be positive, got {dimension}")
        self.dimension = dimension

    def embed(self, texts: Sequence[str]) -> Vector:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                bucket, sign = _bucket(feature, self.dimension)
                out[row, bucket] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # A text with no word characters has no features: leave it the zero vector rather than divide by 0.
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _features(text: str) -> list[tuple[str, float]]:
    features: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        features.append((f"w:{word}", HashingEmbedder.WORD_WEIGHT))
        padded = f"#{word}#"
        features.extend(
            (f"t:{padded[i : i + 3]}", HashingEmbedder.TRIGRAM_WEIGHT) for i in range(len(padded) - 2)
        )
    return features


@lru_cache(maxsize=65536)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    # blake2b rather than hash(): str hashes are salted per process, and vectors must be reproducible.
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return (digest >> 1) % dimension, 1.0 if digest & 1 else -1.0


def _unit(vector: Sequence[float] | Vector, dimension: int) -> Vector:
    array = checked_array(vector, dimension)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array.copy()
