"""`hindsight ingest --wait`: asks for a review once everything is stored, and again when a request claimed
only some of the turns (it can race the scheduler's bookkeeping) and no more got reviewed since."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pipeline.cli import memory

TURNS = [("alpha", "ana", f"t{i}") for i in range(6)]


def _client(reviewed_after_asks: dict[int, int]) -> tuple[httpx.Client, list[dict[str, Any]]]:
    """A server whose reviews finish `reviewed_after_asks[n]` turns once it was asked n times."""
    asks: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/review":
            asks.append(json.loads(request.content))
            return httpx.Response(202, json={"batch_ids": [len(asks)]})
        done = reviewed_after_asks.get(len(asks), 0)
        turns = {"received": 6, "reviewed": done, "indexed": done}
        return httpx.Response(200, json={"turns": turns, "outbox_pending": 0, "outbox_head": 0})

    return httpx.Client(base_url="http://hindsight.test", transport=httpx.MockTransport(handle)), asks


def test_a_review_that_claimed_only_some_turns_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "REASK_S", 0.0)
    client, asks = _client({1: 4, 2: 6})  # the first request reviewed 4 of 6; the second the rest
    memory._wait_reviewed(client, TURNS, timeout=30, quiet=True)
    assert len(asks) == 2
    assert asks[0] == {}  # an operator's request: every scope at once


def test_a_review_that_claimed_everything_is_asked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "REASK_S", 0.0)
    client, asks = _client({1: 6})
    memory._wait_reviewed(client, TURNS, timeout=30, quiet=True)
    assert len(asks) == 1
