"""Session working memory through the Python client and HTTP (a real socket), its TTL, recall beside it, and confirmed
slots becoming facts after the session ends, reviewed by the real worker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pipeline.adapters.postgres.repository import Repository
from pipeline.client import MemoryClient
from pipeline.ingest.working_memory import slot_turn_id
from tests.helpers import wait_until
from tests.integration.harness import Stack, make_settings

pytestmark = pytest.mark.integration


@pytest.fixture
def stack(live: Stack) -> Stack:
    """HTTP through a real server socket: `stack.api` is an httpx client to uvicorn on a free port."""
    return live


SCOPE = {"agent_id": "travel-bot", "user_id": "u42"}
WM = "/v1/sessions/{}/working-memory"


def test_client_and_http_share_one_state_with_merge_remove_and_replace(stack: Stack) -> None:
    client = stack.client
    assert client.get_working_memory("travel-bot", "u42", "s1").expires_in_s is None  # nothing stored

    state = client.set_working_memory(
        "travel-bot",
        "u42",
        "s1",
        task="book a flight",
        slots={"home_city": "Berlin"},
        pending_questions=["date?"],
    )
    assert state.slots == {"home_city": "Berlin"}
    assert 0 < (state.expires_in_s or 0) <= stack.settings.working_memory.ttl_s

    # HTTP sees what the client wrote and merges into it.
    response = stack.api.patch(WM.format("s1"), json={**SCOPE, "slots": {"seat": "aisle", "home_city": None}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["slots"] == {"seat": "aisle"}  # home_city removed by null, seat added
    assert body["task"] == "book a flight"
    assert body["pending_questions"] == ["date?"]

    got = stack.api.get(WM.format("s1"), params=SCOPE).json()
    assert got == body | {"expires_in_s": got["expires_in_s"]}
    assert client.get_working_memory("travel-bot", "u42", "s1").slots == {"seat": "aisle"}

    replaced = client.set_working_memory("travel-bot", "u42", "s1", task="rebook", replace=True)
    assert (replaced.task, replaced.slots, replaced.pending_questions) == ("rebook", {}, ())
    # Another session and another user have their own state.
    assert client.get_working_memory("travel-bot", "u43", "s1").task is None
    assert stack.api.delete(WM.format("s1"), params=SCOPE).json()["deleted"] is True
    assert client.get_working_memory("travel-bot", "u42", "s1").task is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"slots": {"bad name!": "x"}}, "slots: name 'bad name!'"),
        ({"slots": {"city": ""}}, "slots.city: expected a non-empty string"),
        ({"task": "x" * 2001}, "task: longer than 2000 characters"),
        ({"pending_questions": ["q"] * 51}, "pending_questions: at most 50"),
        ({"slots": {"city": 3}}, "slots.city"),
    ],
)
def test_bad_changes_get_a_422_naming_the_field(stack: Stack, body: dict[str, object], message: str) -> None:
    response = stack.api.patch(WM.format("s1"), json={**SCOPE, **body})
    assert response.status_code == 422
    assert message in response.json()["detail"]


def test_working_memory_expires_after_its_ttl_which_each_change_restarts(
    stack: Stack, tmp_path: Path
) -> None:
    client = MemoryClient(make_settings(tmp_path, working_memory={"ttl_s": 2}))
    try:
        client.set_working_memory("travel-bot", "u42", "s-ttl", slots={"seat": "aisle"})
        time.sleep(1.2)
        client.set_working_memory("travel-bot", "u42", "s-ttl", task="a change restarts the TTL")
        time.sleep(1.2)  # 2.4 s after the first change, 1.2 s after the last
        assert client.get_working_memory("travel-bot", "u42", "s-ttl").slots == {"seat": "aisle"}
        wait_until(
            lambda: client.get_working_memory("travel-bot", "u42", "s-ttl").expires_in_s is None,
            timeout=5,
            what="the working memory to expire",
        )
        assert client.get_working_memory("travel-bot", "u42", "s-ttl").slots == {}
    finally:
        client.close()


def test_recall_with_a_session_returns_its_working_memory_beside_the_results(stack: Stack) -> None:
    stack.client.set_working_memory(
        "travel-bot", "u42", "s1", task="plan a trip", slots={"budget": "800 EUR"}
    )
    response = stack.api.get("/v1/recall", params={"q": "trip", **SCOPE, "session_id": "s1"})
    assert response.status_code == 200, response.text
    assert response.json()["working_memory"]["slots"] == {"budget": "800 EUR"}
    assert "working_memory" not in stack.api.get("/v1/recall", params={"q": "trip", **SCOPE}).json()


def test_confirmed_slots_become_user_facts_when_the_session_ends(stack: Stack, repo: Repository) -> None:
    stack.start_scheduler()
    client = stack.client
    client.write_memory("travel-bot", "u42", "s1", "user", "I'd like to fly somewhere warm in March.")
    client.set_working_memory(
        "travel-bot", "u42", "s1", task="book a flight", slots={"home_city": "Berlin", "seat": "aisle"}
    )
    assert client.end_session("travel-bot", "u42", "s1") == 2
    assert client.get_working_memory("travel-bot", "u42", "s1").expires_in_s is None  # handed over

    def facts() -> dict[str, dict[str, object]]:
        return {f["attribute"]: f for f in repo.facts("travel-bot", "u42")}

    wait_until(lambda: {"home_city", "seat"} <= facts().keys(), timeout=90, what="slot facts")
    home = facts()["home_city"]
    assert (home["entity"], home["value"], home["source"], home["confidence"]) == (
        "user",
        "Berlin",
        "user",
        1.0,
    )
    assert home["turn_ids"] == [slot_turn_id("travel-bot", "u42", "s1", "home_city", "Berlin")]

    # A later session confirms a new value through HTTP: it supersedes the old one in the fact chain.
    stack.client.set_working_memory("travel-bot", "u42", "s2", slots={"home_city": "Lisbon"})
    response = stack.api.post("/v1/sessions/end", json={**SCOPE, "session_id": "s2"})
    assert response.status_code == 202
    assert response.json()["slots_handed_over"] == 1
    wait_until(lambda: facts()["home_city"]["value"] == "Lisbon", timeout=90, what="the newer slot to win")
    history = [f for f in repo.facts("travel-bot", "u42", attribute="home_city", history=True)]
    assert [f["value"] for f in history] == ["Berlin", "Lisbon"]
    assert history[0]["valid_to"] == history[1]["valid_from"]
