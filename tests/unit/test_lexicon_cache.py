"""The per-scope BM25 cache: fields, previous-turn context, context-only documents, top-ups."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from pipeline.adapters.lexicon_cache import Lexicon
from pipeline.adapters.postgres.recall_sql import LexicalDoc
from pipeline.core.errors import StoreUnavailable

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Store:
    """Stands in for RecallStore.lexical_docs: returns the docs changed after `since`, in id order."""

    def __init__(self) -> None:
        self.docs: list[LexicalDoc] = []
        self.calls: list[tuple[str, str, datetime]] = []
        self.arrivals: list[datetime | None] = []

    def add(
        self,
        id_: int,
        text: str,
        *,
        session: str = "s1",
        speaker: str | None = None,
        kept: bool = True,
        vector: list[float] | None = None,
    ) -> None:
        ts = T0 + timedelta(seconds=id_ * 10)
        blob = None if vector is None else np.asarray(vector, dtype="<f4").tobytes()
        self.docs.append(LexicalDoc("episode", id_, session, text, speaker, kept, ts, blob))

    def restore(self, id_: int, at: datetime) -> None:
        """As a re-heat or restore does: the doc is recallable again, and read again as restored since `at`."""
        doc = next(d for d in self.docs if d.id == id_)
        self.docs.append(replace(doc, recallable=True, changed_at=at, restored=True))

    def arrive(self, id_: int, text: str, at: datetime, *, session: str = "s1") -> None:
        """A turn recallable before its review, read by its arrival time (and without a vector yet)."""
        self.docs.append(LexicalDoc("episode", id_, session, text, None, True, at, None, arrived=True))

    def lexical_docs(
        self,
        agent_id: str,
        user_id: str,
        *,
        since: datetime,
        arrived: datetime | None = None,
        vectors: bool = False,
    ) -> list[LexicalDoc]:
        self.calls.append((agent_id, user_id, since))
        self.arrivals.append(arrived)
        mark = since if arrived is None else arrived
        docs = [
            d
            for d in self.docs
            if d.changed_at > (mark if d.arrived else since) and agent_id == "a" and user_id == "u"
        ]
        # Like the SQL: embeddings only when asked for, and only of recallable documents.
        return [replace(d, embedding=d.embedding if vectors and d.recallable else None) for d in docs]


def _lexicon(store: Store, **kw: Any) -> Lexicon:
    return Lexicon(store, **kw)  # type: ignore[arg-type]


def test_speaker_names_and_previous_turn_context_are_searchable() -> None:
    store = Store()
    store.add(1, "What did you adopt at the shelter?", speaker="Melanie", kept=False)  # cold: context only
    store.add(2, "A puppy named Oscar!", speaker="Caroline")
    store.add(3, "The shelter was busy today.", session="s2", speaker="Melanie")
    lex = _lexicon(store, context_weight=0.5)
    assert [(k, i) for k, i, _ in lex.search("a", "u", "Caroline", 5)] == [("episode", 2)]
    # The cold question is never a result, but its words lead to the reply that followed it.
    hits = lex.search("a", "u", "what did Caroline adopt", 5)
    assert hits[0][1] == 2
    assert 1 not in {i for _, i, _ in hits}
    # Own words outweigh another session's context: s2's turn 3 says "shelter" itself.
    assert lex.search("a", "u", "shelter", 5)[0][1] == 3
    assert lex.search("a", "other", "shelter", 5) == []  # another scope has its own (empty) index


def test_top_ups_read_only_what_changed_and_run_behind_recall() -> None:
    store = Store()
    store.add(1, "I play the cello")
    lex = _lexicon(store, refresh_s=0.05)
    assert [i for _, i, _ in lex.search("a", "u", "cello", 5)] == [1]
    store.add(2, "The cello lesson moved to Friday")
    assert [i for _, i, _ in lex.search("a", "u", "friday", 5)] == []  # within refresh_s: the cached index
    time.sleep(0.1)
    lex.search("a", "u", "friday", 5)  # stale: starts a top-up in the background
    deadline = time.monotonic() + 5
    while not lex.search("a", "u", "friday", 5) and time.monotonic() < deadline:
        time.sleep(0.05)
    # 2 says it; 1, indexed by an earlier read, gets it as its next turn's context, at a lower score.
    assert [i for _, i, _ in lex.search("a", "u", "friday", 5)] == [2, 1]
    assert store.calls[0][2] < T0  # the first read takes everything
    assert store.calls[-1][2] > T0  # later ones only what changed since (with a short overlap)
    assert sorted(i for _, i, _ in lex.search("a", "u", "cello", 5)) == [1, 2]  # nothing added twice


class _FailingMidStream(Store):
    """Like RecallStore's streamed read, the connection fails after `fail_after` rows, once."""

    fail_after: int | None = 2

    def lexical_docs(
        self,
        agent_id: str,
        user_id: str,
        *,
        since: datetime,
        arrived: datetime | None = None,
        vectors: bool = False,
    ) -> Iterator[LexicalDoc]:
        docs = super().lexical_docs(agent_id, user_id, since=since, arrived=arrived, vectors=vectors)
        for i, doc in enumerate(docs):
            if i == self.fail_after:
                self.fail_after = None
                raise StoreUnavailable("connection lost mid-read")
            yield doc


def test_a_read_that_fails_half_way_is_read_again_from_where_it_began() -> None:
    store = _FailingMidStream()
    # Reviewed out of turn order: the rows the failed read did not reach are older than one it did.
    store.add(1, "the cello lesson", session="s1")
    store.add(2, "a garden party", session="s2")
    store.docs.append(
        replace(
            store.docs[0],
            id=3,
            session_id="s3",
            text="cello strings snapped",
            changed_at=T0 - timedelta(hours=1),
        )
    )
    lex = _lexicon(store)
    with pytest.raises(StoreUnavailable):
        lex.search("a", "u", "cello", 5)
    assert sorted(i for _, i, _ in lex.search("a", "u", "cello", 5)) == [1, 3]
    assert store.calls[-1][2] < T0 - timedelta(hours=1)  # read again from the start, not from row 2's time
    assert [i for _, i, _ in lex.search("a", "u", "garden", 5)] == [2]  # nothing indexed twice


def test_the_next_turn_is_context_of_the_one_before_it() -> None:
    store = Store()
    store.add(1, "Guess what I adopted last week?", speaker="Caroline")
    store.add(2, "A puppy from the shelter!", speaker="Caroline", kept=False)  # cold: context only
    store.add(3, "I adopted nothing, only bought a puppy toy", session="s2")
    without = _lexicon(store, next_weight=0.0)
    assert [i for _, i, _ in without.search("a", "u", "shelter", 5)] == []
    lex = _lexicon(store, next_weight=0.5)
    assert [i for _, i, _ in lex.search("a", "u", "shelter", 5)] == [1]
    # The reply's words count less than a turn's own: s2's turn 3 says "puppy" itself.
    assert lex.search("a", "u", "puppy", 5)[0][1] == 3


def test_a_participant_named_in_someone_elses_turn_is_an_address_not_the_topic() -> None:
    store = Store()
    store.add(1, "I've been running farther to de-stress.", speaker="Melanie")
    store.add(2, "Awesome, Melanie! Mental health's a priority, take care of yourself.", speaker="Caroline")
    store.add(3, "Thanks, Caroline! Pottery helps me relax too.", speaker="Melanie")
    hits = [i for _, i, _ in _lexicon(store).search("a", "u", "Melanie", 5)]
    assert 2 not in hits  # Caroline only addressed her
    assert set(hits) == {1, 3}
    counted = [i for _, i, _ in _lexicon(store, address_weight=1.0).search("a", "u", "Melanie", 5)]
    assert 2 in counted  # the knob restores the plain count


def test_held_vectors_are_the_recallable_turns_embeddings_and_their_sessions_are_known() -> None:
    store = Store()
    store.add(1, "What got you into running?", vector=[1.0, 0.0])
    store.add(2, "Hmm", kept=False, vector=[0.0, 1.0])  # cold: no vector held
    for i in range(3, 1100):  # past the first allocation: the matrix grows and keeps what it held
        store.add(i, f"turn {i}", session="s2", vector=[0.6, 0.8])
    lex = _lexicon(store)
    e = "episode"
    got = lex.vectors("a", "u", [(e, 1), (e, 2), (e, 1099), (e, 5000)])
    assert set(got) == {(e, 1), (e, 1099)}
    assert got[(e, 1)].dtype == np.float32
    assert got[(e, 1)].tolist() == [1.0, 0.0]
    assert np.allclose(got[(e, 1099)], [0.6, 0.8], atol=1e-3)  # float16 held
    assert _lexicon(store, vectors=False).vectors("a", "u", [(e, 1)]) == {}


def test_a_memory_back_from_cold_storage_is_indexed_again_by_the_next_top_up() -> None:
    store = Store()
    store.add(1, "Our cat is called Miso", kept=False, vector=[1.0, 0.0])  # cold when the lexicon is built
    store.add(2, "She is twelve", vector=[0.0, 1.0])
    store.add(3, "The vet visit is on Monday", session="s2")
    lex = _lexicon(store, refresh_s=0.05, vectors=True)
    assert [i for _, i, _ in lex.search("a", "u", "miso", 5)] == [2]  # 1 is only 2's context
    store.restore(1, T0 + timedelta(hours=1))
    time.sleep(0.1)
    lex.search("a", "u", "miso", 5)  # stale: starts a top-up in the background
    deadline = time.monotonic() + 5
    while 1 not in {i for _, i, _ in lex.search("a", "u", "miso", 5)} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lex.search("a", "u", "miso", 5)[0][1] == 1
    # Its own vector is held.
    assert set(lex.vectors("a", "u", [("episode", 1)])) == {("episode", 1)}


def _scoped_store(scopes: int, turns: int) -> Store:
    """`Store` for several scopes: user ids u0, u1, ... each with `turns` turns."""

    class Scoped(Store):
        def lexical_docs(
            self,
            agent_id: str,
            user_id: str,
            *,
            since: datetime,
            arrived: datetime | None = None,
            vectors: bool = False,
        ) -> list[LexicalDoc]:
            self.calls.append((agent_id, user_id, since))
            return [d for d in self.docs if d.changed_at > since and d.session_id == user_id]

    store = Scoped()
    for s in range(scopes):
        for i in range(turns):
            store.add(
                s * turns + i,
                f"turn {i} of user {s} about hiking, cello lessons and the dog",
                session=f"u{s}",
            )
    return store


def test_scopes_beyond_the_memory_budget_are_dropped_least_recently_used_first() -> None:
    store = _scoped_store(scopes=4, turns=50)
    lex = _lexicon(store, max_bytes=1 << 40)
    for s in range(4):
        lex.search("a", f"u{s}", "cello", 5)
    one_scope = sum(scope.nbytes for scope in lex._scopes.values()) // 4
    assert one_scope > 0
    # Room for two scopes: asking u0 again keeps it, the next new scope drops the least recently used.
    lex = _lexicon(store, max_bytes=int(2.5 * one_scope))
    for s in (0, 1, 0, 2):
        lex.search("a", f"u{s}", "cello", 5)
    assert set(lex._scopes) == {("a", "u0"), ("a", "u2")}
    reads = len(store.calls)
    assert lex.search("a", "u1", "cello", 5)  # rebuilt from the store, and still answers
    assert len(store.calls) == reads + 1
    # A single scope above the budget is still served.
    tiny = _lexicon(store, max_bytes=1)
    assert tiny.search("a", "u3", "cello", 5)
    assert set(tiny._scopes) == {("a", "u3")}


def test_the_memory_estimate_is_within_a_factor_of_what_python_holds() -> None:
    import tracemalloc

    store = Store()
    words = [
        "hiking",
        "cello",
        "dog",
        "Lisbon",
        "sister",
        "birthday",
        "marathon",
        "painting",
        "shelter",
        "puppy",
        "recipe",
        "garden",
    ]
    for i in range(2000):
        text = (
            " ".join(words[(i * k) % len(words)] for k in range(1, 9)) + f" number {i} said on day {i % 31}"
        )
        store.add(i, text, session=f"s{i // 20}", vector=[float(i % 7)] * 384)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        lex = _lexicon(store)
        lex.search("a", "u", "cello", 5)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    estimate = next(iter(lex._scopes.values())).nbytes
    assert 0.5 * held <= estimate <= 2.0 * held, (estimate, held)


def test_a_turn_read_on_arrival_is_found_at_once_and_gets_its_vector_from_its_review() -> None:
    store = Store()
    store.add(1, "I play the cello", vector=[1.0, 0.0])
    lex = _lexicon(store, refresh_s=0.01)
    lex.search("a", "u", "cello", 5)
    # Arrives (database clock) long before any review; the reviewed mark stays where it was.
    store.arrive(2, "The cello lesson moved to Friday", T0 + timedelta(hours=1))
    time.sleep(0.05)
    lex.search("a", "u", "friday", 5)  # starts the top-up
    deadline = time.monotonic() + 5
    while not lex.search("a", "u", "friday", 5) and time.monotonic() < deadline:
        time.sleep(0.02)
    # 2 says it; 1 has it as its next turn's context (linked in arrival order).
    assert [i for _, i, _ in lex.search("a", "u", "friday", 5)] == [2, 1]
    assert lex.vectors("a", "u", [("episode", 2)]) == {}  # not embedded when it was read
    reads = len(store.arrivals)
    time.sleep(0.05)
    lex.search("a", "u", "friday", 5)  # the next top-up reads from the arrival on
    deadline = time.monotonic() + 5
    while len(store.arrivals) == reads and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.arrivals[-1] is not None
    assert store.arrivals[-1] > T0 + timedelta(minutes=55)
    assert store.calls[-1][2] < T0 + timedelta(minutes=1)  # an arrival does not move the reviewed mark
    # Its review (reviewed_at later still) brings the embedding: held now, not indexed twice.
    store.add(2, "The cello lesson moved to Friday", vector=[0.0, 1.0])
    store.docs[-1] = replace(store.docs[-1], changed_at=T0 + timedelta(hours=2))
    time.sleep(0.05)
    lex.search("a", "u", "friday", 5)
    deadline = time.monotonic() + 5
    while not lex.vectors("a", "u", [("episode", 2)]) and time.monotonic() < deadline:
        time.sleep(0.02)
        lex.search("a", "u", "friday", 5)
    assert lex.vectors("a", "u", [("episode", 2)])[("episode", 2)].tolist() == [0.0, 1.0]
    assert [i for _, i, _ in lex.search("a", "u", "friday", 5)] == [2, 1]
