"""The ports the use cases depend on. Adapters live in pipeline/adapters/."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from pipeline.core.models import FactCandidate, QualityScore

if TYPE_CHECKING:
    from pipeline.adapters.postgres.review_writes import BatchEpisode
    from pipeline.review.injection import InjectionVerdict

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class IndexPoint:
    """A point to write to the vector index. `id` is a deterministic UUID string (see `point_id`)."""

    id: str
    vector: Sequence[float] | Vector
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IndexHit:
    id: str
    score: float  # cosine similarity in [-1, 1]
    payload: dict[str, Any]


class VectorIndex(Protocol):
    """A cosine-similarity index of memory points with a payload; filters on agent_id and user_id.

    Every write is idempotent: upserting the same id twice or deleting a missing id is not an error.
    """

    def upsert(self, points: Sequence[IndexPoint]) -> None: ...

    def delete(self, point_ids: Sequence[str]) -> None: ...

    def search(
        self, vector: Sequence[float], *, agent_id: str, user_id: str, limit: int
    ) -> list[IndexHit]: ...

    def ids(self) -> set[str]:
        """Every point id in the index (for reconcile and tests; O(n))."""
        ...

    def count(self) -> int: ...

    def close(self) -> None: ...


class Embedder(Protocol):
    """Text to L2-normalised float32 vectors, shape (len(texts), dimension)."""

    dimension: int

    def embed(self, texts: Sequence[str]) -> Vector: ...


class WarmEmbedder(Embedder, Protocol):
    """An embedder with a model to load; roles call warm_up before taking work, so a broken install
    fails the process at start and the first request is not the slow one."""

    def warm_up(self) -> None: ...


class ReviewLLM(Protocol):
    """What a review asks of the optional LLM. Both return None on any failure, and the rules decide then."""

    def judge(self, content: str, role: str, rule: QualityScore, stats: dict[str, int]) -> float | None:
        """A keep score in [0, 1] for a turn the rules scored in the uncertain band."""
        ...

    def injection(
        self, content: str, role: str, verdict: InjectionVerdict, stats: dict[str, int]
    ) -> float | None:
        """Probability in [0, 1] that a turn the detector found uncertain is a prompt injection."""
        ...

    def facts(self, episode: BatchEpisode, stats: dict[str, int]) -> list[FactCandidate] | None: ...

    def summarise(self, texts: list[str], stats: dict[str, int]) -> str | None:
        """One statement for a cluster's texts (most central first): key facts, no repetition, <= 50 words."""
        ...
