"""Reflect: review what is remembered about a user against a stated goal.

Evidence is deterministic (current facts, the versions newer statements superseded or corrections
retracted, the memories most related to the goal, the session's working memory). With an LLM the
evidence is also reviewed: which memories still hold, which need correcting, insights, suggested
updates. The LLM's answer is validated and may only cite ids present in the evidence, so a wrong
answer can mislead nobody about what is stored; any LLM failure returns the evidence alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core.errors import HindsightError
from pipeline.core.logging import get_logger
from pipeline.review.llm_tasks import JSONCompleter

log = get_logger(__name__)
MAX_EVIDENCE_CHARS = 12_000  # keeps the prompt well inside small context windows


@dataclass(frozen=True, slots=True)
class Evidence:
    current_facts: list[dict[str, Any]]
    superseded_facts: list[dict[str, Any]]
    related_memories: list[dict[str, Any]]
    working_memory: dict[str, Any] | None

    def ids(self) -> set[str]:
        return {f"fact:{f['id']}" for f in self.current_facts + self.superseded_facts} | {
            str(m["id"]) for m in self.related_memories
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "current_facts": self.current_facts,
            "superseded_facts": self.superseded_facts,
            "related_memories": self.related_memories,
            "working_memory": self.working_memory,
        }


def superseded(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Versions that are no longer current: closed in valid time or retracted in system time."""
    return [f for f in history if f.get("valid_to") is not None or f.get("retracted_at") is not None]


class _Valid(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(max_length=64)
    why: str = Field("", max_length=500)


class _Correction(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = Field(max_length=64)
    problem: str = Field(max_length=500)
    correction: str = Field("", max_length=500)


class _Update(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = Field(None, max_length=64)
    action: Literal["update", "forget", "add_fact", "confirm"]
    detail: str = Field(max_length=500)


class ReviewAnswer(BaseModel):
    """The LLM's review, as it must answer."""

    model_config = ConfigDict(extra="ignore")
    still_valid: list[_Valid] = Field(default_factory=list, max_length=50)
    to_correct: list[_Correction] = Field(default_factory=list, max_length=50)
    insights: list[str] = Field(default_factory=list, max_length=20)
    suggested_updates: list[_Update] = Field(default_factory=list, max_length=50)


SYSTEM = (
    "You review an AI agent's long-term memory about one user against the agent's goal. Use only the "
    "evidence given. Reply with one JSON object with keys: still_valid (list of {id, why}: memories "
    "that still hold and matter for the goal), to_correct (list of {id, problem, correction}: memories "
    "that are outdated, contradicted or wrong), insights (list of short strings relevant to the goal), "
    "suggested_updates (list of {id or null, action: update|forget|add_fact|confirm, detail}). Cite "
    "only ids that appear in the evidence."
)


def review_prompt(goal: str, evidence: Evidence) -> str:
    """The evidence as the LLM sees it: facts named "fact:<id>", the form its review must cite."""
    shown = evidence.to_json() | {
        "current_facts": [f | {"id": f"fact:{f['id']}"} for f in evidence.current_facts],
        "superseded_facts": [f | {"id": f"fact:{f['id']}"} for f in evidence.superseded_facts],
    }
    body = json.dumps(shown, ensure_ascii=False, default=str)
    if len(body) > MAX_EVIDENCE_CHARS:
        body = body[:MAX_EVIDENCE_CHARS] + " …(truncated)"
    return f"Goal: {goal}\n\nEvidence (JSON):\n{body}"


def validated_review(answer: ReviewAnswer, evidence: Evidence) -> tuple[dict[str, Any], int]:
    """The review as returned to callers, with items citing unknown ids dropped; and how many were dropped."""
    known = evidence.ids()
    still = [v.model_dump() for v in answer.still_valid if v.id in known]
    fix = [c.model_dump() for c in answer.to_correct if c.id in known]
    updates = [u.model_dump() for u in answer.suggested_updates if u.id is None or u.id in known]
    dropped = (
        len(answer.still_valid)
        - len(still)
        + len(answer.to_correct)
        - len(fix)
        + len(answer.suggested_updates)
        - len(updates)
    )
    insights = [" ".join(i.split())[:500] for i in answer.insights if i.strip()]
    review = {"still_valid": still, "to_correct": fix, "insights": insights, "suggested_updates": updates}
    return review, dropped


def reflect(goal: str, evidence: Evidence, llm: JSONCompleter | None) -> dict[str, Any]:
    """{"goal", "mode": "llm" | "evidence", "review": {...} | None, "evidence": {...}, "llm_error"}."""
    out: dict[str, Any] = {
        "goal": goal,
        "mode": "evidence",
        "review": None,
        "evidence": evidence.to_json(),
        "llm_error": None,
    }
    if llm is None:
        return out
    try:
        answer = llm.complete_json(SYSTEM, review_prompt(goal, evidence), ReviewAnswer, max_tokens=800)
    except HindsightError as exc:
        log.warning("reflect.llm_failed", error=type(exc).__name__)
        out["llm_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        return out
    review, dropped = validated_review(answer, evidence)
    if dropped:
        log.info("reflect.dropped_unknown_ids", dropped=dropped)
    return out | {"mode": "llm", "review": review}
