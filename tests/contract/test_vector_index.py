"""One contract for every VectorIndex adapter: Qdrant Edge, qdrant-client (local mode) and the fake."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient

from pipeline.adapters.fakes import InMemoryVectorIndex
from pipeline.adapters.qdrant_edge import EdgeVectorIndex
from pipeline.adapters.qdrant_server import ServerVectorIndex
from pipeline.core.errors import ConfigError, IndexUnavailable
from pipeline.core.ports import IndexPoint, VectorIndex
from pipeline.core.vector_ids import passage_point_id, passage_point_ids, point_id

DIM = 16
COLLECTION = "contract"

# Opens (or reopens) the index under test at one fixed location, with a given dimension.
Opener = Callable[[int], VectorIndex]


def _open_edge(path: Path) -> Opener:
    return lambda dimension: EdgeVectorIndex(path / "edge", dimension)


def _open_local(path: Path) -> Opener:
    return lambda dimension: ServerVectorIndex.local(path / "local", COLLECTION, dimension)


def _open_memory(path: Path) -> Opener:
    # A fake has no location: "reopening" it is not meaningful, so it only serves the first open.
    return lambda dimension: InMemoryVectorIndex(dimension)


ADAPTERS = {"edge": _open_edge, "local": _open_local, "memory": _open_memory}
PERSISTENT = ["edge", "local"]


class Indexes:
    """Opens indexes for one test and closes whatever is still open at the end."""

    def __init__(self, opener: Opener) -> None:
        self._opener = opener
        self._open: list[VectorIndex] = []

    def open(self, dimension: int = DIM) -> VectorIndex:
        index = self._opener(dimension)
        self._open.append(index)
        return index

    def close(self, index: VectorIndex) -> None:
        index.close()
        self._open.remove(index)

    def close_all(self) -> None:
        for index in reversed(self._open):
            index.close()
        self._open.clear()


@pytest.fixture(params=list(ADAPTERS))
def indexes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Indexes]:
    opened = Indexes(ADAPTERS[request.param](tmp_path))
    yield opened
    opened.close_all()


@pytest.fixture(params=PERSISTENT)
def persistent(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Indexes]:
    opened = Indexes(ADAPTERS[request.param](tmp_path))
    yield opened
    opened.close_all()


@pytest.fixture
def index(indexes: Indexes) -> VectorIndex:
    return indexes.open()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240611)


def _point(n: int, vector: np.ndarray, agent: str = "a1", user: str = "u1", **extra: object) -> IndexPoint:
    return IndexPoint(
        id=point_id("episode", n),
        vector=vector.tolist(),
        payload={"agent_id": agent, "user_id": user, "ref_id": n, **extra},
    )


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_search_returns_the_nearest_first_in_decreasing_score(
    index: VectorIndex, rng: np.random.Generator
) -> None:
    vectors = rng.standard_normal((40, DIM)).astype(np.float32)
    index.upsert([_point(n, v) for n, v in enumerate(vectors)])
    query = rng.standard_normal(DIM).astype(np.float32)

    hits = index.search(query.tolist(), agent_id="a1", user_id="u1", limit=5)

    expected_scores = _unit(vectors) @ _unit(query)
    expected = [point_id("episode", int(n)) for n in np.argsort(-expected_scores)[:5]]
    assert [h.id for h in hits] == expected
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert scores == pytest.approx(np.sort(expected_scores)[::-1][:5].tolist(), abs=1e-4)
    assert all(isinstance(h.id, str) for h in hits)


def test_a_stored_vector_finds_itself_with_score_one(index: VectorIndex, rng: np.random.Generator) -> None:
    vectors = rng.standard_normal((10, DIM)).astype(np.float32)
    index.upsert([_point(n, v) for n, v in enumerate(vectors)])

    # Scaled: cosine ignores length, so the scale must not change the answer.
    hits = index.search((3.0 * vectors[7]).tolist(), agent_id="a1", user_id="u1", limit=1)

    assert [h.id for h in hits] == [point_id("episode", 7)]
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert hits[0].payload == {"agent_id": "a1", "user_id": "u1", "ref_id": 7}


def test_search_accepts_a_numpy_vector(index: VectorIndex, rng: np.random.Generator) -> None:
    # Embedder rows are ndarrays; the port says Sequence[float], which an ndarray is not to mypy.
    vector = rng.standard_normal(DIM).astype(np.float32)
    scope = {"agent_id": "a", "user_id": "u"}
    index.upsert([IndexPoint(id=point_id("episode", 1), vector=vector, payload=scope)])  # type: ignore[arg-type]

    hits = index.search(vector, agent_id="a", user_id="u", limit=3)  # type: ignore[arg-type]

    assert [h.id for h in hits] == [point_id("episode", 1)]


def test_limit_caps_the_hits(index: VectorIndex, rng: np.random.Generator) -> None:
    index.upsert([_point(n, v) for n, v in enumerate(rng.standard_normal((12, DIM)))])
    query = rng.standard_normal(DIM).tolist()

    assert len(index.search(query, agent_id="a1", user_id="u1", limit=3)) == 3
    assert len(index.search(query, agent_id="a1", user_id="u1", limit=100)) == 12
    assert index.search(query, agent_id="a1", user_id="u1", limit=0) == []


def test_scope_filter_never_returns_another_scopes_points(
    index: VectorIndex, rng: np.random.Generator
) -> None:
    scopes = [("a1", "u1"), ("a1", "u2"), ("a2", "u1"), ("a2", "u2")]
    vectors = rng.standard_normal((len(scopes) * 10, DIM)).astype(np.float32)
    points = [_point(n, v, *scopes[n % len(scopes)]) for n, v in enumerate(vectors)]
    index.upsert(points)
    # The query is another scope's stored vector: the nearest point overall must not leak through.
    query = vectors[1].tolist()

    for agent, user in scopes:
        hits = index.search(query, agent_id=agent, user_id=user, limit=100)
        assert len(hits) == 10
        assert {(h.payload["agent_id"], h.payload["user_id"]) for h in hits} == {(agent, user)}
        wanted = {p.id for p in points if (p.payload["agent_id"], p.payload["user_id"]) == (agent, user)}
        assert {h.id for h in hits} == wanted

    assert index.search(query, agent_id="a1", user_id="nobody", limit=10) == []


def test_upserting_an_id_twice_keeps_one_point_with_the_newer_payload_and_vector(
    index: VectorIndex, rng: np.random.Generator
) -> None:
    old, new = rng.standard_normal((2, DIM)).astype(np.float32)
    index.upsert([_point(1, old, text="old")])
    index.upsert([_point(1, new, text="new")])

    assert index.count() == 1
    hits = index.search(new.tolist(), agent_id="a1", user_id="u1", limit=10)
    assert len(hits) == 1
    assert hits[0].payload["text"] == "new"
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)


def test_an_upsert_can_move_a_point_to_another_scope(index: VectorIndex, rng: np.random.Generator) -> None:
    vector = rng.standard_normal(DIM).astype(np.float32)
    index.upsert([_point(1, vector, "a1", "u1")])
    index.upsert([_point(1, vector, "a1", "u2")])

    assert index.search(vector.tolist(), agent_id="a1", user_id="u1", limit=5) == []
    assert len(index.search(vector.tolist(), agent_id="a1", user_id="u2", limit=5)) == 1


def test_delete_removes_and_deleting_a_missing_id_is_fine(
    index: VectorIndex, rng: np.random.Generator
) -> None:
    vectors = rng.standard_normal((5, DIM)).astype(np.float32)
    index.upsert([_point(n, v) for n, v in enumerate(vectors)])

    index.delete([point_id("episode", 2), point_id("episode", 999)])
    index.delete([point_id("episode", 2)])
    index.delete([])

    assert index.count() == 4
    assert point_id("episode", 2) not in index.ids()
    hits = index.search(vectors[2].tolist(), agent_id="a1", user_id="u1", limit=10)
    assert point_id("episode", 2) not in {h.id for h in hits}


def _episode_with_passages(
    n: int, vectors: np.ndarray, agent: str = "a1", user: str = "u1", kind: str = "episode"
) -> list[IndexPoint]:
    """A long episode's points as the outbox relay writes them: its main vector, then passages 1.."""
    payload = {"kind": kind, "ref_id": n, "agent_id": agent, "user_id": user}
    main = IndexPoint(id=point_id(kind, n), vector=vectors[0].tolist(), payload=payload)
    return [main] + [
        IndexPoint(id=passage_point_id(n, i), vector=v.tolist(), payload={**payload, "passage": i})
        for i, v in enumerate(vectors[1:], start=1)
    ]


def test_delete_refs_removes_an_episode_and_all_its_passages_and_nothing_else(
    index: VectorIndex, rng: np.random.Generator
) -> None:
    vectors = rng.standard_normal((4, 6, DIM)).astype(np.float32)
    index.upsert(_episode_with_passages(1, vectors[0]))
    index.upsert(_episode_with_passages(2, vectors[1], agent="a2"))  # another scope: gone all the same
    index.upsert(_episode_with_passages(3, vectors[2]))  # kept
    index.upsert(_episode_with_passages(1, vectors[3], kind="semantic")[:1])  # same ref_id, other kind: kept
    assert index.count() == 6 + 6 + 6 + 1

    index.delete_refs("episode", [1, 2, 999])
    index.delete_refs("episode", [1])  # again: nothing left to delete, not an error
    index.delete_refs("episode", [])

    assert index.ids() == {point_id("episode", 3), point_id("semantic", 1)} | set(passage_point_ids(3, 5))
    for v in vectors[0]:
        hits = index.search(v.tolist(), agent_id="a1", user_id="u1", limit=20)
        assert {h.payload["ref_id"] for h in hits if h.payload["kind"] == "episode"} == {3}


def test_passage_points_are_found_with_their_episode_payload(
    index: VectorIndex, rng: np.random.Generator
) -> None:
    vectors = rng.standard_normal((5, DIM)).astype(np.float32)
    index.upsert(_episode_with_passages(7, vectors))

    (hit,) = index.search(vectors[3].tolist(), agent_id="a1", user_id="u1", limit=1)

    assert hit.id == passage_point_id(7, 3)
    assert hit.payload == {"kind": "episode", "ref_id": 7, "agent_id": "a1", "user_id": "u1", "passage": 3}


def test_ids_and_count_agree(index: VectorIndex, rng: np.random.Generator) -> None:
    assert index.ids() == set()
    assert index.count() == 0

    # Just over one scroll page (1024), so paging is exercised; local mode upserts ~1k points/s.
    vectors = rng.standard_normal((1100, DIM)).astype(np.float32)
    index.upsert([_point(n, v, f"a{n % 3}") for n, v in enumerate(vectors)])
    index.upsert([_point(n, vectors[n]) for n in range(10)])  # rewrites, not additions
    index.delete([point_id("episode", n) for n in range(1050, 1100)])

    ids = index.ids()
    assert ids == {point_id("episode", n) for n in range(1050)}
    assert index.count() == len(ids) == 1050


def test_ids_come_back_canonical(index: VectorIndex, rng: np.random.Generator) -> None:
    raw = uuid.uuid4()
    vector = rng.standard_normal(DIM).astype(np.float32)
    index.upsert(
        [IndexPoint(id=str(raw).upper(), vector=vector.tolist(), payload={"agent_id": "a", "user_id": "u"})]
    )

    assert index.ids() == {str(raw)}
    assert [h.id for h in index.search(vector.tolist(), agent_id="a", user_id="u", limit=1)] == [str(raw)]
    index.delete([str(raw).upper()])
    assert index.count() == 0


def test_empty_index_search_returns_nothing(index: VectorIndex, rng: np.random.Generator) -> None:
    assert index.search(rng.standard_normal(DIM).tolist(), agent_id="a1", user_id="u1", limit=5) == []


def test_empty_writes_are_no_ops(index: VectorIndex) -> None:
    index.upsert([])
    index.delete([])
    index.delete_refs("episode", [])
    assert index.count() == 0


def test_payload_round_trips(index: VectorIndex, rng: np.random.Generator) -> None:
    payload = {
        "agent_id": "a1",
        "user_id": "u1",
        "text": "prefers dark mode — ünïcode",
        "importance": 0.75,
        "ref_id": 42,
        "pinned": True,
        "session_id": None,
        "tags": ["ui", "editor"],
        "meta": {"source": "turn", "ids": [1, 2]},
    }
    vector = rng.standard_normal(DIM).astype(np.float32)
    index.upsert([IndexPoint(id=point_id("semantic", 42), vector=vector.tolist(), payload=payload)])

    (hit,) = index.search(vector.tolist(), agent_id="a1", user_id="u1", limit=1)

    assert hit.payload == payload


def test_bad_input_raises_value_error_and_writes_nothing(
    index: VectorIndex, rng: np.random.Generator
) -> None:
    good = rng.standard_normal(DIM).astype(np.float32)
    with pytest.raises(ValueError):
        index.upsert([_point(1, good), _point(2, np.ones(DIM + 1, dtype=np.float32))])
    with pytest.raises(ValueError):
        index.upsert([_point(1, np.full(DIM, np.nan, dtype=np.float32))])
    with pytest.raises(ValueError):
        index.upsert([IndexPoint(id="not-a-uuid", vector=good.tolist(), payload={})])
    with pytest.raises(ValueError):
        index.search(np.ones(DIM - 1).tolist(), agent_id="a1", user_id="u1", limit=1)
    with pytest.raises(ValueError):
        index.delete(["not-a-uuid"])

    assert index.count() == 0


def test_reopen_after_close_finds_the_points_again(persistent: Indexes, rng: np.random.Generator) -> None:
    vectors = rng.standard_normal((20, DIM)).astype(np.float32)
    first = persistent.open()
    first.upsert([_point(n, v) for n, v in enumerate(vectors)])
    first.upsert([_point(3, vectors[3], text="rewritten")])
    first.delete([point_id("episode", 19)])
    persistent.close(first)

    second = persistent.open()

    assert second.count() == 19
    assert second.ids() == {point_id("episode", n) for n in range(19)}
    (hit,) = second.search(vectors[3].tolist(), agent_id="a1", user_id="u1", limit=1)
    assert hit.id == point_id("episode", 3)
    assert hit.payload["text"] == "rewritten"
    # Still writable after the reopen (the scope indexes and the collection are found, not recreated).
    second.upsert([_point(100, vectors[0])])
    assert second.count() == 20


def test_edge_points_survive_a_process_that_dies_without_close(tmp_path: Path) -> None:
    # A real restart: another interpreter writes and exits hard (no close, no atexit), this one reads.
    # The writes after the first land between segment flushes: only the WAL holds them.
    code = f"""
import os
from pathlib import Path
from pipeline.adapters.qdrant_edge import EdgeVectorIndex
from pipeline.core.ports import IndexPoint
from pipeline.core.vector_ids import passage_point_id, passage_point_ids, point_id
index = EdgeVectorIndex(Path({str(tmp_path / "edge")!r}), {DIM})
vector = [1.0] + [0.0] * {DIM - 1}
index.upsert([IndexPoint(point_id("episode", 1), vector, {{"agent_id": "a1", "user_id": "u1", "text": "kept"}})])
index.upsert([IndexPoint(point_id("episode", 2), vector, {{"agent_id": "a1", "user_id": "u1", "text": "gone"}})])
index.upsert([IndexPoint(point_id("episode", 3), vector, {{"agent_id": "a1", "user_id": "u1", "text": "late"}})])
index.delete([point_id("episode", 2)])
os._exit(0)
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)

    index = EdgeVectorIndex(tmp_path / "edge", DIM)
    try:
        hits = index.search([1.0] + [0.0] * (DIM - 1), agent_id="a1", user_id="u1", limit=5)
        found = {h.id: h.payload["text"] for h in hits}
        assert found == {point_id("episode", 1): "kept", point_id("episode", 3): "late"}
    finally:
        index.close()


def test_reopen_with_another_dimension_is_a_config_error(persistent: Indexes) -> None:
    persistent.close(persistent.open(DIM))

    with pytest.raises(ConfigError):
        persistent.open(DIM * 2)


def test_a_folder_held_by_an_open_index_is_unavailable(persistent: Indexes) -> None:
    persistent.open()

    with pytest.raises(IndexUnavailable):
        persistent.open()


def test_an_unreachable_server_is_unavailable() -> None:
    # Port 1 refuses at once; the version check would only warn from a background thread.
    client = QdrantClient(url="http://127.0.0.1:1", timeout=1, check_compatibility=False)
    try:
        with pytest.raises(IndexUnavailable):
            ServerVectorIndex(client, COLLECTION, DIM)
    finally:
        client.close()


def test_the_fake_can_play_an_outage(rng: np.random.Generator) -> None:
    index = InMemoryVectorIndex(DIM)
    index.unavailable = True
    with pytest.raises(IndexUnavailable):
        index.upsert([_point(1, rng.standard_normal(DIM))])
    with pytest.raises(IndexUnavailable):
        index.count()
    index.unavailable = False
    assert index.count() == 0
