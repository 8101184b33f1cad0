"""Issue 44 concern: the audit log's `actor` is whatever the caller writes, so an agent's key could record
"admin:ops". The key the server authenticated is now recorded beside it, and shown by GET /v1/audit and
the inspector's audit page. Against the seeded stack of test_access.py (keys required)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from pipeline.core.authz import parse_key
from tests.integration.test_access import USER, World
from tests.integration.test_access import world as world  # the module's seeded stack

pytestmark = pytest.mark.integration


def _prefix(world: World, key: str) -> str:
    return parse_key(world.keys[key])[0]


def test_an_agent_key_claiming_to_be_an_operator_is_recorded_with_its_own_key(world: World) -> None:
    scope = {"agent_id": "alpha", "user_id": USER}
    body = {**scope, "reason": "user asked", "actor": "admin:ops"}
    with world.http("alpha") as http:
        forgot = http.post(f"/v1/memories/{world.ids['alpha']}/forget", json=body)
        assert forgot.status_code == 200, forgot.text
        listed = http.get("/v1/audit", params=scope)
        assert listed.status_code == 200, listed.text
        # The agent reads its own scope's log, never every scope's (nor the inspector's page of it).
        assert http.get("/v1/audit").status_code == 403
        assert http.get("/v1/audit", params={"agent_id": "beta", "user_id": USER}).status_code == 403
        assert http.get("/ui/audit").status_code == 403
    (entry,) = [a for a in listed.json()["audit"] if a["memory_id"] == world.ids["alpha"]]
    assert (entry["actor"], entry["action"]) == ("admin:ops", "update")
    assert entry["key"] == _prefix(world, "alpha")
    assert entry["key"] != _prefix(world, "admin")
    with world.http("admin") as http:
        everything = http.get("/v1/audit").json()["audit"]
        assert [a["key"] for a in everything if a["memory_id"] == world.ids["alpha"]] == [
            _prefix(world, "alpha")
        ]
        page = http.get("/ui/audit")
        assert page.status_code == 200
        row = next(r for r in page.text.split("<tr") if world.ids["alpha"] in r and "admin:ops" in r)
        assert _prefix(world, "alpha") in row


def test_a_quarantine_decision_records_the_operator_key_that_made_it(world: World) -> None:
    scope = {"agent_id": "alpha", "user_id": USER}
    body = {**scope, "reason": "confirmed injection", "actor": "someone"}
    with world.http("admin") as http:
        rejected = http.post(f"/v1/quarantine/{world.ids['injection']}/reject", json=body)
        assert rejected.status_code == 200, rejected.text
        entries = http.get("/v1/audit", params=scope).json()["audit"]
    (entry,) = [a for a in entries if a["memory_id"] == world.ids["injection"]]
    assert (entry["actor"], entry["action"], entry["key"]) == ("someone", "reject", _prefix(world, "admin"))
    # The turn's own verdict keeps it too, beside rejected_by.
    with world.stack.repo.engine.connect() as conn:
        verdict = conn.execute(
            text("SELECT quarantine FROM episodes WHERE id = :i"),
            {"i": int(world.ids["injection"].split(":")[1])},
        ).scalar_one()
    assert (verdict["rejected_by"], verdict["rejected_with_key"]) == ("someone", _prefix(world, "admin"))
