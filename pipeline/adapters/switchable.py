"""The API process's vector index and embedder, behind one indirection each, so that a model change can swap
both at the moment the store switches (model_change): recall, the indexer thread and the routes hold these
objects and never see the swap half-done."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from pipeline.core.ports import IndexHit, IndexPoint, Vector, VectorIndex, WarmEmbedder, embed_queries


class SwitchableIndex:
    def __init__(self, inner: VectorIndex, collection: str) -> None:
        self.inner = inner
        self.collection = collection
        self._lock = threading.Lock()

    def swap(self, inner: VectorIndex, collection: str) -> VectorIndex:
        """Point at `inner` from now on; returns the index it replaced (the caller closes it)."""
        with self._lock:
            old, self.inner, self.collection = self.inner, inner, collection
        return old

    @property
    def dimension(self) -> int:
        return int(getattr(self.inner, "dimension", 0))

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        self.inner.upsert(points)

    def delete(self, point_ids: Sequence[str]) -> None:
        self.inner.delete(point_ids)

    def delete_refs(self, kind: str, ref_ids: Sequence[int]) -> None:
        self.inner.delete_refs(kind, ref_ids)

    def search(self, vector: Sequence[float], *, agent_id: str, user_id: str, limit: int) -> list[IndexHit]:
        return self.inner.search(vector, agent_id=agent_id, user_id=user_id, limit=limit)

    def ids(self) -> set[str]:
        return self.inner.ids()

    def count(self) -> int:
        return self.inner.count()

    def close(self) -> None:
        self.inner.close()


class SwitchableEmbedder:
    def __init__(self, inner: WarmEmbedder) -> None:
        self.inner = inner

    def swap(self, inner: WarmEmbedder) -> None:
        self.inner = inner

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @dimension.setter
    def dimension(self, value: int) -> None:
        self.inner.dimension = value

    def warm_up(self) -> None:
        self.inner.warm_up()

    def embed(self, texts: Sequence[str]) -> Vector:
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return embed_queries(self.inner, texts)
