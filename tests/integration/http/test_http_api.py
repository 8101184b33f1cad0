"""The HTTP API through a real server socket (uvicorn on a free port), after real turns went through the pipeline."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import wait_until
from tests.integration.harness import Stack
from tests.integration.http.scenario import AGENT, T0, T1, USER, run_scenario

pytestmark = pytest.mark.integration
SCOPE = {"agent_id": AGENT, "user_id": USER}


def _get(live: Stack, path: str, **params: object) -> dict:  # type: ignore[type-arg]
    response = live.api.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_memories_facts_reviews_dead_letters_and_metrics_after_real_turns(live: Stack) -> None:
    sc = run_scenario(live)

    # memories: list with filters and paging
    everything = _get(live, "/v1/memories", **SCOPE)
    assert everything["total"] == 4
    assert {m["source_turn_ids"][0] for m in everything["memories"]} == set(sc.turn_ids)
    assert everything["memories"][0]["source_turn_ids"] == ["t-lisbon"]  # newest first
    page1 = _get(live, "/v1/memories", **SCOPE, limit=3)
    page2 = _get(live, "/v1/memories", **SCOPE, limit=3, offset=page1["next_offset"])
    assert page1["next_offset"] == 3
    assert page2["next_offset"] is None
    assert [m["id"] for m in page1["memories"] + page2["memories"]] == [
        m["id"] for m in everything["memories"]
    ]
    s1 = _get(live, "/v1/memories", **SCOPE, session_id="s1", kind="episode")
    assert {m["source_turn_ids"][0] for m in s1["memories"]} == {"t-porto", "t-shellfish", "t-marta"}
    found = _get(live, "/v1/memories", **SCOPE, contains="SHELLFISH")["memories"]
    assert [m["source_turn_ids"] for m in found] == [["t-shellfish"]]
    window = _get(live, "/v1/memories", **SCOPE, since=T1.isoformat())["memories"]
    assert [m["source_turn_ids"] for m in window] == [["t-lisbon"]]
    before = _get(live, "/v1/memories", **SCOPE, until=T1.isoformat(), kind="episode")
    assert before["total"] == 3
    assert _get(live, "/v1/memories", **SCOPE, kind="semantic")["total"] == 0  # light reviews only
    assert _get(live, "/v1/memories", agent_id=AGENT, user_id="someone-else")["total"] == 0

    # memory get: quality breakdown, provenance, the fact versions it supports
    porto_id = next(m["id"] for m in everything["memories"] if m["source_turn_ids"] == ["t-porto"])
    porto = _get(live, f"/v1/memories/{porto_id}", **SCOPE)
    assert porto["status"] == "kept"
    assert {"density", "timeliness", "uniqueness", "actionability", "total"} <= set(porto["quality"])
    assert porto["provenance"]["turn_ids"] == ["t-porto"]
    # The agent's metadata (city) and the English rules (location) both read the move.
    supported = {(f["attribute"], f["value"], f["valid_to"], f["current"]) for f in porto["facts"]}
    assert supported == {
        ("city", "Porto", T1.isoformat(), False),
        ("location", "Porto", T1.isoformat(), False),
    }
    other_scope = live.api.get(f"/v1/memories/{porto_id}", params={"agent_id": AGENT, "user_id": "bob"})
    assert other_scope.status_code == 404
    assert porto_id in other_scope.json()["detail"]

    # facts: now, as of a past time, and the whole history
    city = {"entity": "user", "attribute": "city"}
    assert [f["value"] for f in _get(live, "/v1/facts", **SCOPE, **city)["facts"]] == ["Lisbon"]
    as_of = (T0.replace(day=15)).isoformat()
    assert [f["value"] for f in _get(live, "/v1/facts", **SCOPE, **city, as_of=as_of)["facts"]] == ["Porto"]
    assert "shellfish" in {
        f["attribute"].partition(":")[2] for f in _get(live, "/v1/facts", **SCOPE)["facts"]
    }
    chain = _get(live, "/v1/facts", **SCOPE, entity="user", attribute="city", history="true")["facts"]
    assert [(f["value"], f["valid_to"]) for f in chain] == [("Porto", T1.isoformat()), ("Lisbon", None)]

    # the review log, paged
    reviews = _get(live, "/v1/reviews", limit=1)
    assert len(reviews["reviews"]) == 1
    assert reviews["next_before_id"] is not None
    older = _get(live, "/v1/reviews", limit=1, before_id=reviews["next_before_id"])["reviews"]
    both = reviews["reviews"] + older
    assert [(r["trigger"], r["session_id"]) for r in both] == [("session_end", "s2"), ("session_end", "s1")]
    assert [r["counts"]["episodes"] for r in both] == [1, 3]
    assert all(r["duration_ms"] >= 0 and r["worker"] for r in both)

    # dead letters (read-only)
    dead = _get(live, "/v1/dead-letters")
    assert dead["total"] == 1
    assert dead["dead_letters"][0]["fields"]["turn_id"] == sc.bad_turn_id
    assert "role" in dead["dead_letters"][0]["reason"]

    # recall twice, then /metrics parsed with the Prometheus parser
    for q in ("where does she live", "what is she allergic to"):
        assert _get(live, "/v1/recall", q=q, **SCOPE)["results"]
    samples = _samples(live.api.get("/metrics").text)
    assert samples[("hindsight_recall_latency_seconds_count", ())] == 2
    assert samples[("hindsight_dead_letters", ())] == 1
    assert samples[("hindsight_stream_lag", ())] == 0
    assert samples[("hindsight_outbox_pending", ())] == 0
    dispatched = (("kind", "light"), ("trigger", "session_end"))
    assert samples[("hindsight_batches_dispatched_total", dispatched)] == 2
    assert samples[("hindsight_review_duration_seconds_count", (("kind", "light"),))] == 2
    assert samples[("hindsight_review_batch_size_sum", (("kind", "light"),))] == 4
    assert samples[("hindsight_review_batch_size_bucket", (("kind", "light"), ("le", "1.0")))] == 1
    assert samples[("hindsight_review_batch_size_bucket", (("kind", "light"), ("le", "5.0")))] == 2
    assert samples[("hindsight_llm_calls_total", ())] == 0
    daily = live.settings.llm.daily_calls
    assert samples[("hindsight_llm_budget_remaining", (("resource", "calls"),))] == daily
    assert samples[("hindsight_scrape_up", (("source", "postgres"),))] == 1
    assert samples[("hindsight_scrape_up", (("source", "redis"),))] == 1

    # The Python client: the superseded Porto turn comes back only when history is asked for, flagged.
    current = live.client.recall("Porto", agent_id=AGENT, user_id=USER)
    assert all("t-porto" not in h.source_turn_ids for h in current)
    past = live.client.recall("Porto", agent_id=AGENT, user_id=USER, history=True)
    assert [h.superseded for h in past if "t-porto" in h.source_turn_ids] == [True]

    # The CLI's read commands print the same documents (through the same socket).
    cli = _cli(live, "memories", "--agent", AGENT, "--user", USER, "--contains", "lisbon", "--json")
    assert [m["source_turn_ids"] for m in cli["memories"]] == [["t-lisbon"]]
    assert (
        _cli(live, "memory", porto_id, "--agent", AGENT, "--user", USER, "--json")["facts"] == porto["facts"]
    )
    assert [r["id"] for r in _cli(live, "reviews", "--json")["reviews"]] == [r["id"] for r in both]
    assert _cli(live, "dead-letters", "--json")["dead_letters"] == dead["dead_letters"]


def _cli(live: Stack, *args: str) -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "HINDSIGHT_API_URL": str(live.api.base_url).rstrip("/")}
    result = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "message"),
    [
        ("get", "/v1/nope", {}, 404, "no such endpoint: GET /v1/nope"),
        ("delete", "/v1/stats", {}, 405, "method DELETE not allowed on /v1/stats"),
        ("get", "/v1/memories", {"params": {"agent_id": "a"}}, 422, "user_id"),
        ("get", "/v1/memories", {"params": {**SCOPE, "kind": "dream"}}, 422, "kind"),
        ("get", "/v1/memories", {"params": {**SCOPE, "since": "last week"}}, 422, "since"),
        ("get", "/v1/memories/episode:1", {"params": SCOPE}, 404, "not found"),
        ("get", "/v1/memories/banana", {"params": SCOPE}, 422, "memory_id"),
        ("get", "/v1/reviews", {"params": {"agent_id": "a"}}, 422, "agent_id and user_id"),
        ("get", "/v1/dead-letters", {"params": {"before": "x; FLUSHALL"}}, 422, "before"),
        ("post", "/v1/turns", {"content": b"[" + b"1," * 3_000_000 + b"1]"}, 413, "larger than"),
    ],
)
def test_errors_are_json_with_a_message(
    live: Stack, method: str, path: str, kwargs: dict[str, object], status: int, message: str
) -> None:
    response = live.api.request(method.upper(), path, **kwargs)  # type: ignore[arg-type]
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    assert message in response.json()["detail"]


def test_a_body_over_the_limit_sent_chunked_is_refused_too(live: Stack) -> None:
    def chunks():  # no Content-Length: the limit must count bytes as they arrive
        for _ in range(100):
            yield b" " * 65_536

    response = httpx.post(f"{live.api.base_url}/v1/turns", content=chunks(), timeout=30)
    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]


def test_readiness_names_each_dependency_and_openapi_has_examples(live: Stack) -> None:
    ready = live.api.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"postgres": "ok", "redis": "ok", "qdrant": "ok"}
    spec = live.api.get("/openapi.json").json()
    for path in ("/v1/memories", "/v1/memories/{memory_id}", "/v1/reviews", "/v1/dead-letters", "/v1/scopes"):
        assert "get" in spec["paths"][path], path
    turns = spec["paths"]["/v1/turns"]["post"]
    assert turns["requestBody"]["content"]["application/json"]["examples"]["one turn"]["value"][0]["turn_id"]
    recall = spec["paths"]["/v1/recall"]["get"]["responses"]["200"]["content"]["application/json"]["example"]
    assert recall["results"][0]["id"] == "episode:1"
    assert spec["components"]["schemas"]["ForgetRequest"]["examples"]
    assert live.api.get("/docs").status_code == 200


def test_readiness_reports_a_dead_dependency_with_503(live: Stack) -> None:
    original = live.stream.client
    live.stream.client = type(original).from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    try:
        ready = live.api.get("/readyz")
    finally:
        live.stream.client = original
    assert ready.status_code == 503
    assert ready.json()["checks"]["redis"].startswith("error:")
    # Unauthenticated: the kind of failure, not the driver's message with its host and port.
    assert "127.0.0.1" not in ready.json()["checks"]["redis"]
    assert ready.json()["checks"]["postgres"] == "ok"


PARAPHRASES = ["I don't like long answers.", "Please keep it short.", "Your replies are too wordy."]
UNRELATED = [
    "I'm flying to Kyoto on the 14th of April.",
    "Our cat is called Miso and she is twelve.",
    "The lasagne recipe needs 500 grams of ricotta.",
]


def test_a_semantic_memory_shows_the_episodes_it_was_folded_from(live: Stack) -> None:
    live.start_scheduler()
    ids = [
        live.client.write_memory(AGENT, USER, "s1", "user", c, ts=T0.replace(minute=i), turn_id=f"p-{i}")
        for i, c in enumerate(PARAPHRASES + UNRELATED)
    ]
    live.client.end_session(AGENT, USER, "s1")
    live.wait_indexed(ids)
    batch_ids = live.api.post("/v1/review", json={**SCOPE, "full": True}).json()["batch_ids"]
    assert batch_ids
    wait_until(
        lambda: (
            live.api.post("/v1/progress", json={"batch_ids": batch_ids}).json()["batches"]["done"]
            == len(batch_ids)
        ),
        timeout=60,
        what="the full review",
    )

    semantic = _get(live, "/v1/memories", **SCOPE, kind="semantic")
    assert semantic["total"] == 1
    listed = semantic["memories"][0]
    assert set(listed["source_turn_ids"]) == {"p-0", "p-1", "p-2"}
    memory = _get(live, f"/v1/memories/{listed['id']}", **SCOPE)
    assert sorted(e["turn_id"] for e in memory["provenance"]["episodes"]) == ["p-0", "p-1", "p-2"]
    assert [(v["id"], v["version"], v["valid_to"]) for v in memory["provenance"]["versions"]] == [
        (listed["id"], 1, None)
    ]
    member = next(e["id"] for e in memory["provenance"]["episodes"] if e["turn_id"] == "p-1")
    folded = _get(live, f"/v1/memories/{member}", **SCOPE)
    assert folded["consolidated"] is True
    assert [s["id"] for s in folded["provenance"]["semantic_memories"]] == [listed["id"]]
    # The light review before the full one and the full one itself, newest first.
    kinds = [r["kind"] for r in _get(live, "/v1/reviews", **SCOPE)["reviews"]]
    assert kinds == ["full", "light"]
