"""Real turns through the real pipeline, pushed over HTTP: the state the HTTP and inspector tests look at."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from tests.helpers import wait_until
from tests.integration.harness import Stack

AGENT, USER = "support-bot", "ana"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=30)


@dataclass(frozen=True)
class Scenario:
    porto_turn: str
    lisbon_turn: str
    turn_ids: list[str]
    bad_turn_id: str


def _turn(turn_id: str, session: str, content: str, ts: datetime, **metadata: object) -> dict[str, object]:
    return {
        "turn_id": turn_id,
        "agent_id": AGENT,
        "user_id": USER,
        "session_id": session,
        "role": "user",
        "content": content,
        "ts": ts.isoformat(),
        "source": "user",
        "metadata": metadata,
    }


def run_scenario(live: Stack) -> Scenario:
    """Two sessions (the user moves from Porto to Lisbon in between) and one malformed stream entry."""
    live.start_scheduler()
    city = {"entity": "user", "attribute": "city"}
    first = [
        _turn("t-porto", "s1", "I live in Porto, near the river.", T0, **city, value="Porto"),
        _turn("t-shellfish", "s1", "I'm allergic to shellfish.", T0 + timedelta(minutes=1)),
        _turn("t-marta", "s1", "My sister Marta is an airline pilot.", T0 + timedelta(minutes=2)),
    ]
    second = [_turn("t-lisbon", "s2", "I moved to Lisbon last month.", T1, **city, value="Lisbon")]
    for session, turns in (("s1", first), ("s2", second)):
        response = live.api.post("/v1/turns", json=turns)
        assert response.status_code == 202, response.text
        assert (
            live.api.post(
                "/v1/sessions/end", json={"agent_id": AGENT, "user_id": USER, "session_id": session}
            ).status_code
            == 202
        )
        live.wait_indexed([str(t["turn_id"]) for t in turns])
    bad = {**first[0], "turn_id": "t-bad", "role": "robot", "metadata": "{}"}
    live.stream.client.xadd("hindsight:turns", bad)  # type: ignore[arg-type]
    wait_until(lambda: live.stream.client.xlen("hindsight:dead") == 1, timeout=20, what="one dead letter")
    ids = [str(t["turn_id"]) for t in first + second]
    return Scenario("t-porto", "t-lisbon", ids, "t-bad")
