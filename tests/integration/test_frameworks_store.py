"""The LangGraph store on the real stack (a real socket, the scheduler, a Celery worker): store semantics as
LangGraph defines them, over the sync and the async path."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from langgraph.store.base import InvalidNamespaceError

from hindsight_frameworks.langgraph_store import HindsightStore
from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration

NS = ("support-bot", "u42", "prefs")


@pytest.fixture
def store(live: Stack) -> Iterator[HindsightStore]:
    live.start_scheduler()
    s = HindsightStore(live.client)
    yield s
    asyncio.run(s.aclose())


def _searchable(store: HindsightStore, ns: tuple[str, ...], query: str, n: int) -> None:
    wait_until(lambda: len(store.search(ns, query=query, limit=50)) >= n, timeout=30, what=f"{n} items found")


def test_put_get_search_delete(store: HindsightStore) -> None:
    store.put(NS, "food", {"text": "The user loves spicy Sichuan food"})
    item = store.get(NS, "food")  # read your own writes: at once
    assert item is not None
    assert item.value == {"text": "The user loves spicy Sichuan food"}
    assert item.namespace == NS
    assert item.key == "food"
    wait_until(lambda: store.client.latest_turns(agent_id="support-bot", user_id="u42")["turns"], timeout=20)
    stored = HindsightStore(store.client).get(NS, "food")  # another store: from the pipeline
    assert stored is not None
    assert stored.value == item.value
    assert stored.created_at == item.created_at
    _searchable(store, ("support-bot", "u42"), "what food does the user like", 1)
    hits = store.search(("support-bot", "u42"), query="what food does the user like")
    assert [h.key for h in hits] == ["food"]
    assert hits[0].score is not None
    store.delete(NS, "food")
    assert store.get(NS, "food") is None
    assert store.search(("support-bot", "u42"), query="spicy Sichuan food") == []


def test_invalid_namespaces_and_ttl_are_refused(store: HindsightStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(("support-bot",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("support-bot", "u42", "a.b"), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph", "u42"), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.get(("support-bot", "u 42"), "k")
    with pytest.raises(InvalidNamespaceError):
        store.search(("support-bot",), query="x")
    with pytest.raises(NotImplementedError, match="ttl"):
        store.put(NS, "k", {"text": "x"}, ttl=5)


def test_limit_offset_and_filter(store: HindsightStore) -> None:
    for i, (kind, city) in enumerate(
        [("hotel", "Lisbon"), ("hotel", "Porto"), ("flight", "Lisbon"), ("hotel", "Faro")]
    ):
        store.put(
            ("support-bot", "u42", "trips"),
            f"t{i}",
            {"text": f"{kind} booked in {city}", "kind": kind, "n": i},
        )
    store.put(
        ("support-bot", "u42", "other"), "x", {"text": "hotel loyalty card number", "kind": "hotel", "n": 9}
    )
    trips = ("support-bot", "u42", "trips")
    wait_until(lambda: len(store.search(trips)) == 4, timeout=20, what="4 items listed")
    listed = store.search(trips)  # no query: most recently updated first
    assert [i.key for i in listed] == ["t3", "t2", "t1", "t0"]
    assert [i.key for i in store.search(trips, limit=2, offset=1)] == ["t2", "t1"]
    assert [i.key for i in store.search(trips, filter={"kind": "hotel"})] == ["t3", "t1", "t0"]
    assert [i.key for i in store.search(trips, filter={"n": {"$gte": 2}})] == ["t3", "t2"]
    assert {i.key for i in store.search(("support-bot", "u42"), filter={"kind": "hotel"})} == {
        "t3",
        "t1",
        "t0",
        "x",
    }
    _searchable(store, trips, "hotel booked", 4)
    ranked = store.search(trips, query="hotel booked in Lisbon", limit=10)
    assert {i.key for i in ranked} == {"t0", "t1", "t2", "t3"}  # the sub-path only: never "x"
    scores = [i.score or 0.0 for i in ranked]
    assert scores == sorted(scores, reverse=True)
    assert [i.key for i in store.search(trips, query="hotel booked in Lisbon", limit=2, offset=1)] == [
        i.key for i in ranked[1:3]
    ]
    hotels = store.search(trips, query="hotel booked in Lisbon", filter={"kind": "hotel"})
    assert {i.key for i in hotels} == {"t0", "t1", "t3"}
    assert store.list_namespaces() == [("support-bot", "u42", "other"), ("support-bot", "u42", "trips")]
    assert store.list_namespaces(suffix=("trips",)) == [("support-bot", "u42", "trips")]
    assert store.list_namespaces(prefix=("support-bot", "*"), max_depth=2) == [("support-bot", "u42")]
    assert store.list_namespaces(prefix=("nobody",)) == []


def test_a_second_put_supersedes_the_first_after_review(store: HindsightStore, live: Stack) -> None:
    store.put(NS, "home", {"text": "The user lives in Porto, near the river"})
    wait_until(
        lambda: HindsightStore(store.client).get(NS, "home"), timeout=20, what="the first version stored"
    )
    store.put(NS, "home", {"text": "The user lives in Lisbon now, in Alfama"})
    newest = {"text": "The user lives in Lisbon now, in Alfama"}
    assert store.get(NS, "home").value == newest  # type: ignore[union-attr]
    other = HindsightStore(store.client)
    wait_until(
        lambda: (other.get(NS, "home") or Item0).value == newest, timeout=20, what="the second version"
    )
    item = other.get(NS, "home")
    assert item is not None
    assert item.created_at < item.updated_at  # created by the first put, updated by the second
    live.full_review("support-bot", "u42")
    # Review's fact chain closed the first version: get and search give the new value, and recall with
    # history ranks the new version above the old one.
    assert other.get(NS, "home").value == newest  # type: ignore[union-attr]
    found = store.search(("support-bot", "u42"), query="where does the user live, Porto?")
    assert [(i.key, i.value) for i in found] == [("home", newest)]
    facts = store.client._get("/v1/facts", {"agent_id": "support-bot", "user_id": "u42", "history": "true"})
    chain = [f for f in facts["facts"] if f["attribute"] == "home"]
    assert len(chain) == 2
    assert [f["valid_to"] is None for f in sorted(chain, key=lambda f: f["valid_from"])] == [False, True]
    history = store.client.recall(
        "where does the user live, Porto?", agent_id="support-bot", user_id="u42", history=True
    )
    texts = [h.text for h in history]
    lisbon = next(i for i, t in enumerate(texts) if "Lisbon" in t)
    porto = next(i for i, t in enumerate(texts) if "Porto" in t)
    assert lisbon < porto
    assert history[porto].superseded


def test_async_path(store: HindsightStore) -> None:
    async def scenario() -> None:
        await store.aput(NS, "tea", {"text": "The user drinks green tea every morning", "kind": "drink"})
        item = await store.aget(NS, "tea")
        assert item is not None
        assert item.value["kind"] == "drink"
        for _ in range(100):
            if await store.asearch(("support-bot", "u42"), query="morning drink"):
                break
            await asyncio.sleep(0.2)
        found = await store.asearch(("support-bot", "u42"), query="morning drink", filter={"kind": "drink"})
        assert [i.key for i in found] == ["tea"]
        assert await store.alist_namespaces() == [NS]
        await store.adelete(NS, "tea")
        assert await store.aget(NS, "tea") is None
        assert await store.asearch(NS, query="green tea") == []

    asyncio.run(scenario())


class _Item0:
    value: dict[str, str] = {}  # noqa: RUF012


Item0 = _Item0()
