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
