"""A turn id reused for another turn in a later request (issue 44, failure 8).

Before: POST of `dup3` with new text got a 202, and the scheduler's ON CONFLICT DO NOTHING dropped the text
with no dead letter and no log. Now the door answers 409 naming the id (whether the first turn is still in
the stream or already stored), a retry of the same turn stays a 202, and a conflicting turn that reaches
the stream around the door goes to the dead-letter stream with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from pipeline.adapters.postgres.repository import Repository
from pipeline.adapters.turn_id_ledger import TurnIdLedger
from pipeline.api.app import create_app
from pipeline.core.ports import WarmEmbedder
from tests.helpers import wait_until
from tests.integration.harness import Stack, api_deps, make_settings

pytestmark = pytest.mark.integration


def _turn(turn_id: str, content: str, **extra: Any) -> dict[str, Any]:
    return {
        "turn_id": turn_id,
        "agent_id": "agent-a",
        "user_id": "ana",
        "session_id": "s1",
        "role": "user",
        "content": content,
        **extra,
    }


def _stored(stack: Stack, turn_id: str) -> list[str]:
    with stack.repo.engine.connect() as conn:
        rows = conn.execute(text("SELECT content FROM episodes WHERE turn_id = :t"), {"t": turn_id})
        return [r.content for r in rows]


def test_a_reused_turn_id_in_a_later_request_is_a_409_while_the_first_is_still_queued(stack: Stack) -> None:
    # No scheduler yet: the first turn is only in the stream, not in PostgreSQL.
    assert stack.api.post("/v1/turns", json=[_turn("dup3", "I live in Porto.")]).status_code == 202
    refused = stack.api.post("/v1/turns", json=[_turn("other", "fine"), _turn("dup3", "I moved to Faro.")])
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"].startswith("item 1: turn_id 'dup3': already used")
    # A retry of the same turn (a client stamps a new ts on each attempt) is still accepted.
    retry = _turn("dup3", "I live in Porto.", ts="2026-01-02T10:00:00+00:00")
    assert stack.api.post("/v1/turns", json=[retry]).status_code == 202
    # The refused request recorded nothing: its other turn may come again with any text.
    assert stack.api.post("/v1/turns", json=[_turn("other", "something else")]).status_code == 202

    stack.start_scheduler()
    wait_until(lambda: _stored(stack, "other"), timeout=30, what="the queued turns stored")
    wait_until(lambda: stack.stream.stats("scheduler")["pending"] == 0, timeout=10, what="all entries acked")
    assert _stored(stack, "dup3") == ["I live in Porto."]
    assert _stored(stack, "other") == ["something else"]
    assert stack.stream.client.xlen(stack.settings.stream_dead) == 0  # retries are not conflicts


def test_a_reused_turn_id_of_a_stored_turn_is_a_409_after_the_ledger_forgot_it(stack: Stack) -> None:
    stack.start_scheduler()
    assert stack.api.post("/v1/turns", json=[_turn("dup3", "I live in Porto.")]).status_code == 202
    wait_until(lambda: _stored(stack, "dup3"), timeout=30, what="dup3 stored")
    # The door's Redis record has expired (or the turn predates it): PostgreSQL still knows the id.
    ledger = TurnIdLedger(
        stack.stream.client, f"{stack.settings.stream_turns}:turn-ids", ttl_s=stack.settings.turn_id_ledger_s
    )
    ledger.forget([("agent-a", "ana", "dup3")])

    refused = stack.api.post("/v1/turns", json=[_turn("dup3", "I moved to Faro.")])
    assert refused.status_code == 409, refused.text
    assert "'dup3'" in refused.json()["detail"]
    assert stack.api.post("/v1/turns", json=[_turn("dup3", "I live in Porto.")]).status_code == 202
    # Another scope may use the same id for its own turn.
    assert stack.api.post("/v1/turns", json=[{**_turn("dup3", "x"), "user_id": "bo"}]).status_code == 202


def test_a_conflicting_turn_that_reaches_the_stream_goes_to_the_dead_letters_with_its_reason(
    stack: Stack,
) -> None:
    stack.start_scheduler()
    stack.client.write_memory("agent-a", "ana", "s1", "user", "I live in Porto.", turn_id="dup3")
    wait_until(lambda: _stored(stack, "dup3"), timeout=30, what="dup3 stored")
    # The Python client writes to Redis directly, around the door.
    stack.client.write_memory("agent-a", "ana", "s1", "user", "I moved to Faro.", turn_id="dup3")
    stack.client.write_memory("agent-a", "ana", "s1", "user", "I live in Porto.", turn_id="dup3")  # a retry
    dead = wait_until(
        lambda: stack.stream.client.xrange(stack.settings.stream_dead),
        timeout=30,
        what="the conflicting turn dead-lettered",
    )
    assert len(dead) == 1
    fields = {k.decode(): v.decode() for k, v in dead[0][1].items()}
    assert fields["turn_id"] == "dup3"
    assert fields["content"] == "I moved to Faro."
    assert fields["reason"].startswith("turn_id 'dup3': already used by a stored turn")
    assert _stored(stack, "dup3") == ["I live in Porto."]


def test_how_long_the_door_remembers_a_turn_id_is_a_setting(
    clean: None, repo: Repository, embedder: WarmEmbedder, tmp_path: Path
) -> None:
    # HINDSIGHT_TURN_ID_LEDGER_S: was a fixed 6 h in turn_id_ledger.py, whatever the deployment set.
    settings = make_settings(tmp_path, turn_id_ledger_s=90)
    deps = api_deps(settings, repo, embedder, tmp_path)
    with TestClient(create_app(deps)) as api:
        assert api.post("/v1/turns", json=[_turn("kept-for", "I live in Porto.")]).status_code == 202
        ledger = TurnIdLedger(deps.stream.client, f"{settings.stream_turns}:turn-ids", ttl_s=90)
        ttl = deps.stream.client.ttl(ledger.redis_key(("agent-a", "ana", "kept-for")))
        assert 0 < ttl <= 90
        assert api.post("/v1/turns", json=[_turn("kept-for", "I moved to Faro.")]).status_code == 409
