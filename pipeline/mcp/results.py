"""Structured results of the MCP tools (their published output schemas). Shapes follow the HTTP API."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class WriteResult(BaseModel):
    turn_id: str = Field(description="the turn's id (the idempotency key): writing it again adds nothing")
    accepted: bool


class Hit(BaseModel):
    id: str = Field(description="'episode:<n>' or 'semantic:<n>'; what memory_update/memory_forget take")
    kind: Literal["semantic", "episode"]
    text: str
    score: float
    weight: float
    valid_from: str | None
    valid_to: str | None
    source_turn_ids: list[str]
    session_id: str | None
    cold: bool = False
    superseded: bool = Field(False, description="a value newer facts replaced (only with history)")
    reviewed: bool = Field(
        True, description="false: a raw turn written moments ago, not yet reviewed (it may still go cold)"
    )
    space: Literal["private", "shared", "system"] | None = Field(
        None, description="whose memory: the agent's own, shared by all agents, or the system's"
    )


class WorkingMemory(BaseModel):
    session_id: str
    task: str | None
    slots: dict[str, str] = Field(description="confirmed slots; they become facts when the session ends")
    pending_questions: list[str]
    updated_at: str | None
    expires_in_s: int | None = Field(description="seconds until it expires; null when nothing is stored")


class RecallResult(BaseModel):
    results: list[Hit]
    working_memory: WorkingMemory | None = Field(
        None, description="the session's state, when session_id given"
    )


class FactVersion(BaseModel):
    id: int
    entity: str
    attribute: str
    value: str
    valid_from: str
    valid_to: str | None
    recorded_at: str
    retracted_at: str | None
    superseded_by: int | None
    source: str
    confidence: float
    turn_ids: list[str]


class Evidence(BaseModel):
    current_facts: list[FactVersion]
    superseded_facts: list[FactVersion]
    related_memories: list[Hit]
    working_memory: WorkingMemory | None


class StillValid(BaseModel):
    id: str
    why: str


class ToCorrect(BaseModel):
    id: str
    problem: str
    correction: str


class SuggestedUpdate(BaseModel):
    id: str | None
    action: Literal["update", "forget", "add_fact", "confirm"]
    detail: str


class Review(BaseModel):
    still_valid: list[StillValid]
    to_correct: list[ToCorrect]
    insights: list[str]
    suggested_updates: list[SuggestedUpdate]


class ReflectResult(BaseModel):
    goal: str
    mode: Literal["llm", "evidence"] = Field(description="'evidence' when no LLM is configured or it failed")
    review: Review | None
    evidence: Evidence
    llm_error: str | None


class UpdateResult(BaseModel):
    updated: str
    before: dict[str, Any]
    after: dict[str, Any]


class ForgetResult(BaseModel):
    forgotten: str
    mode: Literal["soft", "hard"]
    purged: dict[str, Any] | None = None


class Memory(BaseModel):
    """One memory as GET /v1/memories lists it; fields the API adds beyond these pass through."""

    model_config = ConfigDict(extra="allow")
    id: str
    kind: Literal["episode", "semantic"]
    text: str
    status: str
    weight: float
    core: bool
    tags: list[str]
    session_id: str | None
    valid_from: str | None
    valid_to: str | None
    source_turn_ids: list[str]
    quality: dict[str, Any] | None


class MemoryPage(BaseModel):
    model_config = ConfigDict(extra="allow")
    memories: list[Memory]
    next_offset: int | None = Field(description="pass as offset for the next page; null on the last page")


class SessionEnded(BaseModel):
    session_id: str
    slots_handed_over: int = Field(description="confirmed slots sent to the light review as facts")


class ToolInsight(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    text: str = Field(description="the insight as a sentence, ready for a prompt")
    tool: str | None
    arg_keys: list[str] | None
    task: str | None
    success_rate: float | None = Field(description="0..1, over the calls since the latest change")
    calls: int | None
    ok: int | None
    median_latency_ms: float | None
    source_turn_ids: list[str] = Field(
        description="the calls it counts, newest first; for an agent-wide insight this user's calls only"
    )
    scope: str = Field("user", description="agent: counts all the agent's users' calls; user: this scope's")
    users: int | None = Field(None, description="how many users its calls come from")
    user_calls: int | None = Field(None, description="how many of the calls it counts are this user's")


class ToolInsights(BaseModel):
    insights: list[ToolInsight]
