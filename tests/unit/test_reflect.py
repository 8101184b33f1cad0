"""Reflect: evidence only without an LLM; with one, a review that may cite only ids in the evidence."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from pipeline.adapters.llm import LLMUnavailable
from pipeline.recall.reflect import Evidence, ReviewAnswer, reflect, superseded

M = TypeVar("M", bound=BaseModel)
FACT = {"id": 7, "attribute": "city", "value": "Porto", "valid_to": None, "retracted_at": None}
OLD = {
    "id": 3,
    "attribute": "city",
    "value": "Berlin",
    "valid_to": "2026-01-01T00:00:00+00:00",
    "retracted_at": None,
}
WRONG = {
    "id": 4,
    "attribute": "city",
    "value": "Suzhou",
    "valid_to": None,
    "retracted_at": "2026-02-01T00:00:00+00:00",
}
EVIDENCE = Evidence([FACT], [OLD], [{"id": "episode:12", "text": "I live in Porto"}], None)


class Scripted:
    def __init__(self, answer: dict[str, Any] | Exception) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def complete_json(self, system: str, user: str, schema: type[M], *, max_tokens: int = 400) -> M:
        self.prompts.append(user)
        if isinstance(self.answer, Exception):
            raise self.answer
        return schema.model_validate(self.answer)


def test_superseded_keeps_closed_and_retracted_versions_only() -> None:
    assert superseded([FACT, OLD, WRONG]) == [OLD, WRONG]


def test_without_an_llm_the_evidence_alone() -> None:
    out = reflect("plan a trip", EVIDENCE, None)
    assert out["mode"] == "evidence"
    assert out["review"] is None
    assert out["evidence"]["current_facts"] == [FACT]
    assert out["evidence"]["superseded_facts"] == [OLD]


def test_the_review_drops_items_that_cite_ids_the_evidence_does_not_hold() -> None:
    llm = Scripted(
        {
            "still_valid": [{"id": "fact:7", "why": "current"}, {"id": "fact:99", "why": "made up"}],
            "to_correct": [{"id": "episode:12", "problem": "vague", "correction": "say the city"}],
            "insights": ["  lives   in Porto ", ""],
            "suggested_updates": [{"id": None, "action": "add_fact", "detail": "ask dates"},
                                  {"id": "semantic:5", "action": "forget", "detail": "not in evidence"}],
        }
    )  # fmt: skip
    out = reflect("plan a trip", EVIDENCE, llm)
    assert out["mode"] == "llm"
    assert out["review"]["still_valid"] == [{"id": "fact:7", "why": "current"}]
    assert [c["id"] for c in out["review"]["to_correct"]] == ["episode:12"]
    assert out["review"]["insights"] == ["lives in Porto"]
    assert out["review"]["suggested_updates"] == [{"id": None, "action": "add_fact", "detail": "ask dates"}]
    assert llm.prompts[0].startswith("Goal: plan a trip")
    assert '"id": "fact:7"' in llm.prompts[0]  # facts are shown in the form the review must cite
    assert ReviewAnswer.model_validate({}).still_valid == []


def test_an_llm_failure_falls_back_to_the_evidence_with_the_reason() -> None:
    out = reflect("plan a trip", EVIDENCE, Scripted(LLMUnavailable("timeout")))
    assert out["mode"] == "evidence"
    assert out["review"] is None
    assert out["llm_error"] == "LLMUnavailable: timeout"
