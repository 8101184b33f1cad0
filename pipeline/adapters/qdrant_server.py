"""VectorIndex on a Qdrant server through qdrant-client (or qdrant-client's local mode, for tests)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from pipeline.adapters.vector_checks import as_vector, canonical_id
from pipeline.core.errors import ConfigError, IndexUnavailable, PermanentError
from pipeline.core.ports import IndexHit, IndexPoint

SCOPE_FIELDS = ("agent_id", "user_id")
# delete_refs filters on it: without an index each call would read every point's payload.
REF_FIELD = "ref_id"
_SCROLL_PAGE = 1024
_CONFLICT = 409


class ServerVectorIndex:
    """A cosine VectorIndex in one collection, created on first use.

    `payload_indexes=False` skips the keyword indexes on agent_id/user_id: local mode ignores them
    and warns on every process that asks for one.
    """

    def __init__(
        self, client: QdrantClient, collection: str, dimension: int, *, payload_indexes: bool = True
    ) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be positive, got {dimension}")
        self.client = client
        self.collection = collection
        self.dimension = dimension
        with _translated(f"open collection {collection}"):
            self._ensure_collection()
            if payload_indexes:
                self._ensure_payload_indexes()

    @classmethod
    def from_url(
        cls, url: str, api_key: str | None, collection: str, dimension: int, *, timeout_s: int = 10
    ) -> ServerVectorIndex:
        client = QdrantClient(url=url, api_key=api_key, timeout=timeout_s)
        return cls._opened(client, collection, dimension, payload_indexes=True)

    @classmethod
    def local(cls, path: Path, collection: str, dimension: int) -> ServerVectorIndex:
        try:
            client = QdrantClient(path=str(path))
        except RuntimeError as exc:  # the folder is locked by another client, in this process or another
            raise IndexUnavailable(f"qdrant local storage {path}: {exc}") from exc
        return cls._opened(client, collection, dimension, payload_indexes=False)

    @classmethod
    def _opened(
        cls, client: QdrantClient, collection: str, dimension: int, *, payload_indexes: bool
    ) -> ServerVectorIndex:
        try:
            return cls(client, collection, dimension, payload_indexes=payload_indexes)
        except BaseException:
            client.close()  # the client is ours: do not leak its connection pool or folder lock
            raise

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        if not points:
            return
        batch = [
            models.PointStruct(
                id=canonical_id(p.id), vector=as_vector(p.vector, self.dimension), payload=dict(p.payload)
            )
            for p in points
        ]
        with _translated("upsert"):
            # wait=True: the outbox marks the row done after this returns, so the write must be applied.
            self.client.upsert(self.collection, points=batch, wait=True)

    def delete(self, point_ids: Sequence[str]) -> None:
        if not point_ids:
            return
        selector = models.PointIdsList(points=[canonical_id(i) for i in point_ids])
        with _translated("delete"):
            self.client.delete(self.collection, points_selector=selector, wait=True)

    def delete_refs(self, kind: str, ref_ids: Sequence[int]) -> None:
        if not ref_ids:
            return
        selector = models.FilterSelector(
            filter=models.Filter(
                must=[
                    models.FieldCondition(key="kind", match=models.MatchValue(value=kind)),
                    models.FieldCondition(
                        key=REF_FIELD, match=models.MatchAny(any=[int(i) for i in ref_ids])
                    ),
                ]
            )
        )
        with _translated("delete by ref"):
            self.client.delete(self.collection, points_selector=selector, wait=True)

    def search(self, vector: Sequence[float], *, agent_id: str, user_id: str, limit: int) -> list[IndexHit]:
        query = as_vector(vector, self.dimension)
        if limit < 1:
            return []
        with _translated("search"):
            response = self.client.query_points(
                self.collection,
                query=query,
                query_filter=_scope_filter(agent_id, user_id),
                limit=limit,
                with_payload=True,
                with_vectors=False,
            )
        return [
            IndexHit(id=str(p.id), score=float(p.score), payload=dict(p.payload or {}))
            for p in response.points
        ]

    def ids(self) -> set[str]:
        found: set[str] = set()
        offset: models.ExtendedPointId | None = None
        with _translated("scroll"):
            while True:
                records, offset = self.client.scroll(
                    self.collection, limit=_SCROLL_PAGE, offset=offset, with_payload=False, with_vectors=False
                )
                found.update(str(r.id) for r in records)
                if offset is None:
                    return found

    def count(self) -> int:
        with _translated("count"):
            return self.client.count(self.collection, exact=True).count

    def close(self) -> None:
        with _translated("close"):
            self.client.close()

    def _ensure_collection(self) -> None:
        if self.client.collection_exists(self.collection):
            self._check_collection()
            return
        try:
            self.client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(size=self.dimension, distance=models.Distance.COSINE),
            )
        except UnexpectedResponse as exc:
            # Another worker created it between our check and our create: theirs is as good as ours.
            if exc.status_code != _CONFLICT:
                raise
            self._check_collection()

    def _check_collection(self) -> None:
        params = self.client.get_collection(self.collection).config.params.vectors
        if not isinstance(params, models.VectorParams):
            raise ConfigError(f"collection {self.collection} has named vectors; expected one unnamed vector")
        if params.size != self.dimension or params.distance != models.Distance.COSINE:
            raise ConfigError(
                f"collection {self.collection} holds {params.distance} vectors of size {params.size}; "
                f"expected Cosine vectors of size {self.dimension}"
            )

    def _ensure_payload_indexes(self) -> None:
        existing = self.client.get_collection(self.collection).payload_schema
        for field in SCOPE_FIELDS:
            if field not in existing:
                self.client.create_payload_index(
                    self.collection, field, field_schema=models.PayloadSchemaType.KEYWORD, wait=True
                )
        if REF_FIELD not in existing:
            self.client.create_payload_index(
                self.collection, REF_FIELD, field_schema=models.PayloadSchemaType.INTEGER, wait=True
            )


def _scope_filter(agent_id: str, user_id: str) -> models.Filter:
    return models.Filter(
        must=[
            models.FieldCondition(key="agent_id", match=models.MatchValue(value=agent_id)),
            models.FieldCondition(key="user_id", match=models.MatchValue(value=user_id)),
        ]
    )


@contextmanager
def _translated(action: str) -> Iterator[None]:
    try:
        yield
    except UnexpectedResponse as exc:
        raise _from_status(action, exc) from exc
    except (ResponseHandlingException, httpx.HTTPError) as exc:
        # ResponseHandlingException wraps transport failures: refused, reset, timed out.
        raise IndexUnavailable(f"qdrant: {action}: {exc}") from exc


def _from_status(action: str, exc: UnexpectedResponse) -> Exception:
    status = exc.status_code
    message = f"qdrant: {action}: HTTP {status} {exc.reason_phrase}"
    if status in (401, 403):
        return ConfigError(f"{message} (check the API key)")
    # Other 4xx are rejections of this very request: retrying it would fail the same way forever.
    if status is not None and 400 <= status < 500 and status not in (408, 429):
        return PermanentError(f"{message}: {exc.content[:200]!r}")
    return IndexUnavailable(message)
