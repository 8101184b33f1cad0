"""The ports the use cases depend on. Adapters live in pipeline/adapters/."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pipeline.core.models import FactCandidate, InjectionVerdict, QualityScore
from pipeline.core.recall_rows import MemoryKey, RecallEpisode, SemanticRow
from pipeline.core.review_records import BatchEpisode, BatchInfo, ReviewInputs, ReviewWrite
from pipeline.core.vectors import Vector as Vector  # the array type every port speaks


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

    Every point's payload names the row it stands for (`kind`, `ref_id`); a long episode has several points
    (its main vector and its passages, payload `passage`: 1, 2, ...). Every write is idempotent: upserting
    the same id twice or deleting a missing id is not an error.
    """

    def upsert(self, points: Sequence[IndexPoint]) -> None: ...

    def delete(self, point_ids: Sequence[str]) -> None: ...

    def delete_refs(self, kind: str, ref_ids: Sequence[int]) -> None:
        """Delete every point whose payload has this `kind` and one of `ref_ids` (an episode's main point and
        all its passages), whatever their ids: no passage outlives its episode in the index."""
        ...

    def search(
        self, vector: Sequence[float], *, agent_id: str, user_id: str, limit: int
    ) -> list[IndexHit]: ...

    def ids(self) -> set[str]:
        """Every point id in the index (for reconcile and tests; O(n))."""
        ...

    def count(self) -> int: ...

    def close(self) -> None: ...


class Embedder(Protocol):
    """Text to L2-normalised float32 vectors, shape (len(texts), dimension). A text longer than the model's
    window (MiniLM: 256 word pieces) is embedded by its start only: review embeds a long turn's rest as
    passages (pipeline/review/passages.py)."""

    dimension: int

    def embed(self, texts: Sequence[str]) -> Vector: ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Vector:
    """Search queries in the form the model was trained to read them: an embedder with an `embed_queries`
    method (multilingual-e5-small puts "query: " before a query and "passage: " before what `embed`
    stores) is asked through it; for every other model a query is embedded like any text."""
    method = getattr(embedder, "embed_queries", None)
    return method(texts) if method is not None else embedder.embed(texts)


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


class ReviewStore(Protocol):
    """What the review use case asks of the store: start a batch, read what it needs, write the outcome.

    `complete_review` applies everything in one transaction and is idempotent on the batch: a delivery that
    lost the race to another one gets (False, {}) and changes nothing.
    """

    def start_batch(self, batch_id: int, now: datetime) -> BatchInfo | None:
        """Mark a batch running (attempts + 1). None when it is already done or does not exist."""
        ...

    def review_inputs(
        self,
        batch: BatchInfo,
        *,
        memory_limit: int,
        cluster_limit: int,
        tool_call_limit: int = ...,
        statement_limit: int = ...,
    ) -> ReviewInputs: ...

    def complete_review(
        self,
        batch: BatchInfo,
        write: ReviewWrite,
        *,
        now: datetime,
        started_at: datetime,
        counts: dict[str, int],
        timings_ms: dict[str, float],
        worker: str,
    ) -> tuple[bool, dict[str, int]]: ...


# What the indexer does with one pass of the outbox: apply(upserts, deletes, gone_episodes) upserts the
# points, deletes these point ids, and deletes every point of these episodes (VectorIndex.delete_refs).
IndexChanges = Callable[[list[IndexPoint], list[str], list[int]], None]


class OutboxStore(Protocol):
    """The durable queue of index changes the indexer relays into the VectorIndex."""

    def process_outbox(self, limit: int, apply: IndexChanges, embedder: Embedder | None = None) -> int:
        """Hand up to `limit` queued points' current state to `apply(upserts, deletes, gone_episodes)`, then
        drop the rows (kept for a retry if `apply` raises). Returns how many rows were taken. `embedder`
        embeds the turns recallable before their review that have no vector yet."""
        ...


# -- recall and ingest side: what recall (pipeline/recall/hybrid.py) and ending a session
# (pipeline/ingest/session_end.py) ask of the store, the lexicon and the stream ------------------------


class RecallReader(Protocol):
    """Recall's reads from the store (RecallStore): hydrating candidates, their vectors, facts a query names."""

    def episodes(
        self, ids: Sequence[int], *, agent_id: str, user_id: str, as_of: datetime | None, history: bool
    ) -> dict[int, RecallEpisode]:
        """Recallable episodes among `ids`, in the scope and already said at `as_of`; superseded ones only
        with `history` (flagged)."""
        ...

    def embeddings(self, ids: Sequence[int], *, agent_id: str, user_id: str) -> dict[int, Vector]:
        """The stored embeddings of these episodes of the scope (those that have one)."""
        ...

    def semantic_by_id(
        self, ids: Sequence[int], *, agent_id: str, user_id: str, as_of: datetime | None = None
    ) -> dict[int, SemanticRow]:
        """Semantic memories valid at `as_of` (default: the open versions), with their members' turn ids."""
        ...


class LexicalSearch(Protocol):
    """BM25 over a scope's memories with the session order of its turns (Lexicon): derived state that may
    lag the store, so recall re-checks every hit against it."""

    @property
    def keep_vectors(self) -> bool:
        """Whether `vectors` holds the recallable documents' embeddings."""
        ...

    def search(self, agent_id: str, user_id: str, query: str, limit: int) -> list[tuple[str, int, float]]:
        """(kind, id, share): the best matches, best first, each scored by its BM25 score over the most any
        document could score for this query (`BM25.ceiling`), in [0, 1]."""
        ...

    def vectors(self, agent_id: str, user_id: str, keys: Iterable[MemoryKey]) -> dict[MemoryKey, Vector]:
        """The held embeddings of these documents, for those that have one."""
        ...


class ColdMemory(Protocol):
    """A memory in cold storage (not in the vector index) with its stored vector. Read-only: the store's own
    row type is one."""

    @property
    def kind(self) -> str: ...  # EPISODE | SEMANTIC

    @property
    def id(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def vector(self) -> Vector: ...

    @property
    def base_weight(self) -> float: ...

    @property
    def valid_from(self) -> datetime: ...

    @property
    def valid_to(self) -> datetime | None: ...

    @property
    def turn_ids(self) -> tuple[str, ...]: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def source(self) -> str: ...


class ColdStorage(Protocol):
    """What recall with `include_cold` scans (the Repository)."""

    def cold_memories(self, agent_id: str, user_id: str, *, limit: int) -> Sequence[ColdMemory]:
        """Cold episodes and cold open semantic memories of one scope (up to `limit` of each)."""
        ...


class EventSink(Protocol):
    """Where validated stream entries go (TurnStream): all of one call in one round trip, in order."""

    def add_many(self, entries: Sequence[Mapping[str, str]]) -> list[str]: ...
