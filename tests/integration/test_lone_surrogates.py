"""A lone surrogate in a JSON string ("\\ud800") is a valid Python str that no UTF-8 store takes: the store
boundary refuses it as the caller's bad value, and the API answers 422 naming it, not 500 (found by fuzzing)."""

from __future__ import annotations

import pytest

from pipeline.adapters.postgres.repository import Repository
from pipeline.core.errors import InvalidValue
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration


def test_the_repository_refuses_a_lone_surrogate_as_an_invalid_value(clean: None, repo: Repository) -> None:
    with pytest.raises(InvalidValue, match="not valid UTF-8"):
        repo.turn_progress(["turn-\ud800"])
    assert repo.turn_progress(["turn-1"]) == {"received": 0, "reviewed": 0, "indexed": 0}  # the pool is fine


def test_the_api_answers_422_for_a_lone_surrogate_in_a_body(stack: Stack) -> None:
    raw = '{"turn_ids": ["ok", "bad-\\ud800"]}'  # the escape as a client would send it
    response = stack.api.post("/v1/progress", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "not valid UTF-8" in response.json()["detail"]
    assert stack.api.post("/v1/progress", json={"turn_ids": ["ok"]}).status_code == 200
