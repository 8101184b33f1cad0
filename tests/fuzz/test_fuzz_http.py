"""Fuzzing the HTTP API in-process (FastAPI TestClient) against the real PostgreSQL and Redis: every body,
path and query ends in 2xx or a 4xx with a JSON `detail`, never a 500; an accepted batch of turns is on
the stream in full and a rejected one is not on it at all."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from pipeline.api.app import create_app
from pipeline.core.errors import InvalidTurn
from pipeline.ingest.validation import RepeatedTurnIds, parse_event, utcnow
from tests.fuzz.api import fuzz_api_deps
from tests.fuzz.strategies import EXAMPLES, FUZZ_TIMEOUT_S, json_values, nasty_text, turn_fields
from tests.integration.harness import REDIS_URL, TABLES

pytestmark = [pytest.mark.fuzz, pytest.mark.integration, pytest.mark.timeout(FUZZ_TIMEOUT_S)]
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
STREAM, DEAD = "hindsight:fuzz:turns", "hindsight:fuzz:dead"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    deps = fuzz_api_deps(Path(tmp_path_factory.mktemp("fuzz-api")), STREAM, DEAD)
    # Each case is judged on its own request: no turn stored by an earlier suite (this API stores none).
    with deps.repo.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    with TestClient(create_app(deps), raise_server_exceptions=False) as client:
        yield client
    redis.Redis.from_url(REDIS_URL).delete(STREAM, DEAD)


def _forget_accepted_turn_ids() -> None:
    """Empty the API's turn-id ledger: cases draw ids from a small space, and an id an earlier case was
    accepted with would make this one a 409 (the cross-request ledger has its own integration tests)."""
    client = redis.Redis.from_url(REDIS_URL)
    for key in client.scan_iter(match=f"{STREAM}:turn-ids:*", count=1000):
        client.delete(key)


def _stream_len() -> int:
    return int(redis.Redis.from_url(REDIS_URL).xlen(STREAM))


def _quote(text: str) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def _assert_clear(response: Any) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if response.status_code >= 400:
        detail = response.json()["detail"]
        assert isinstance(detail, str)
        assert detail


def _expected_ok(items: list[Any]) -> bool:
    if len(items) > 1000:
        return False
    repeats = RepeatedTurnIds()  # two different turns under one id of one scope: refused (409)
    now = utcnow()  # one request, one time for the turns without a ts, as the API does
    try:
        for i, item in enumerate(items):
            repeats.check(parse_event(item, now=now), f"item {i}")
    except InvalidTurn:
        return False
    return True


@FUZZ
@given(st.lists(st.one_of(turn_fields(), turn_fields(), json_values), max_size=4))
def test_a_batch_of_turns_is_accepted_whole_or_rejected_whole(api: TestClient, items: list[Any]) -> None:
    body = json.dumps(items).encode()  # \\u escapes: lone surrogates reach the server as such
    _forget_accepted_turn_ids()
    before = _stream_len()
    response = api.post("/v1/turns", content=body, headers={"content-type": "application/json"})
    _assert_clear(response)
    after = _stream_len()
    # Judged on what the server decodes: JSON joins an escaped surrogate pair (\ud800\udc00) into one
    # valid character, which Python held as two lone surrogates.
    if _expected_ok(json.loads(body)):
        assert response.status_code == 202, response.text[:300]
        assert response.json()["accepted"] == len(items) == after - before
    else:
        assert response.status_code in (400, 409, 422), response.text[:300]
        assert after == before, "a rejected batch left turns on the stream"
    if after > 5000:
        redis.Redis.from_url(REDIS_URL).delete(STREAM)


raw_bodies = st.one_of(
    st.binary(max_size=80),
    st.sampled_from(
        [
            b"[" * 100_000 + b"]" * 100_000,
            b'[{"a": ' + b"9" * 5000 + b"}]",
            b"\xff\xfe\x00",
            b"NaN",
            b"",
            b"[" + b"1," * 1000 + b"1]",
            b'[{"agent_id":"a","metadata":' + b'{"a":' * 900 + b"1" + b"}" * 900 + b"}]",
        ]
    ),
    json_values.map(lambda v: json.dumps(v).encode()),
)


@FUZZ
@given(raw_bodies, st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded"]))
def test_raw_bodies_never_crash_the_api(api: TestClient, body: bytes, content_type: str) -> None:
    before = _stream_len()
    response = api.post("/v1/turns", content=body, headers={"content-type": content_type})
    _assert_clear(response)
    if response.status_code != 202:
        assert _stream_len() == before


ids = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["episode:1", "semantic:1", "episode:99999999999999999999999", "episode:²", "episode:-1"]
    ),
    st.integers().map(lambda n: f"episode:{n}"),
)
params = st.dictionaries(
    st.sampled_from(["q", "agent_id", "user_id", "k", "as_of", "history", "include_cold", "limit", "entity"]),
    st.one_of(
        nasty_text, st.integers().map(str), st.sampled_from(["true", "false", "2026-01-01T00:00:00+00:00"])
    ),
    max_size=6,
)
bodies = st.one_of(
    st.dictionaries(
        st.sampled_from(
            [
                "agent_id",
                "user_id",
                "session_id",
                "reason",
                "actor",
                "hard",
                "weight",
                "status",
                "full",
                "turn_ids",
                "batch_ids",
            ]
        ),
        json_values,
        max_size=6,
    ),
    json_values,
)


@FUZZ
@given(
    st.sampled_from(
        [
            ("GET", "/v1/recall"),
            ("GET", "/v1/facts"),
            ("GET", "/v1/quarantine"),
            ("POST", "/v1/sessions/end"),
            ("POST", "/v1/review"),
            ("POST", "/v1/progress"),
            ("POST", "/v1/quarantine/{id}/release"),
            ("POST", "/v1/quarantine/{id}/reject"),
            ("POST", "/v1/memories/{id}/forget"),
            ("PATCH", "/v1/memories/{id}"),
        ]
    ),
    ids,
    params,
    bodies,
)
def test_every_endpoint_answers_hostile_input_with_a_clear_status(
    api: TestClient, route: tuple[str, str], memory_id: str, query: dict[str, str], body: Any
) -> None:
    method, path = route
    # Percent-encoded bytes, as a real client would send them (lone surrogates too, via surrogatepass).
    url = path.replace("{id}", _quote(memory_id))
    if method == "GET":
        response = api.request(
            method, url + "?" + "&".join(f"{_quote(k)}={_quote(v)}" for k, v in query.items())
        )
    else:
        response = api.request(
            method, url, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
    _assert_clear(response)
