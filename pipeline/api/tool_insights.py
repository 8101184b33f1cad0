"""What review learnt, handed back to the agent (issue 30): its tool insights, and the prompt block."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from pipeline.api.auth import Caller, guard
from pipeline.api.deps import Deps
from pipeline.core.models import MAX_ID_CHARS
from pipeline.recall import prompt_block
from pipeline.review import injection

router = APIRouter()

AgentId = Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)]
UserId = Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)]
Task = Annotated[
    str | None, Query(max_length=500, description="what the agent is doing (matches an insight's task)")
]
# Agent-wide by default: tool skill is the agent's, learnt across its users (issue 30).
InsightScope = Annotated[
    Literal["agent", "user"],
    Query(description="agent: the agent's insights over all its users' calls; user: this scope's calls only"),
]
# Whose turn ids an agent-wide insight lists. Another user's turn ids name episodes of another scope, so
# only an operator (admin key) may ask for all of them; counts and rates are the agent's either way.
Provenance = Annotated[
    Literal["user", "all"],
    Query(description="user: source_turn_ids lists this user's calls only; all: every user's (admin keys)"),
]

INSIGHT_EXAMPLE = {
    "id": "semantic:41",
    "text": "For flight search, `flights.search` with dates, from, to succeeds 92% of the time "
    "(46 of 50 calls, median 1.2 s).",
    "tool": "flights.search",
    "arg_keys": ["dates", "from", "to"],
    "task": "flight search",
    "success_rate": 0.92,
    "calls": 50,
    "ok": 46,
    "calls_total": 50,
    "median_latency_ms": 1200.0,
    "failures": {"timeout": 4},
    "since": None,
    "previous_rate": None,
    "window": {"from": "2026-05-01T08:00:00+00:00", "to": "2026-05-03T19:20:00+00:00"},
    "version": 3,
    "valid_from": "2026-05-03T19:20:00+00:00",
    "weight": 1.0,
    "source_turn_ids": ["call-50", "call-49"],
    "scope": "agent",
    "users": 12,
    "user_calls": 2,
    "provenance": "user",
}


@router.get(
    "/v1/tool-insights",
    responses={200: {"content": {"application/json": {"example": {"insights": [INSIGHT_EXAMPLE]}}}}},
)
def tool_insights(
    deps: Deps,
    caller: Caller,
    agent_id: AgentId,
    user_id: UserId,
    task: Task = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    scope: InsightScope = "agent",
    provenance: Provenance = "user",
) -> dict[str, Any]:
    """The current tool insights (of `task` when given): per task, the best success rate first. By
    default the agent's, over all its users' calls, each listing only this user's calls as provenance
    (`source_turn_ids`; `user_calls` of the `calls` are theirs); `scope=user` for this scope's own."""
    guard(caller, agent_id, user_id, "read")
    if provenance == "all":
        guard(caller, agent_id, user_id, "admin")  # other users' turn ids: operators only
    insights = deps.repo.tool_insights(
        agent_id, user_id, task=task, limit=limit, scope=scope, provenance=provenance
    )
    return {"insights": insights}


@router.get(
    "/v1/prompt",
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        "prompt": prompt_block.HEADER.format(tag="memory-data-5d0c93a2b7e41f68")
                        + "\n<memory-data-5d0c93a2b7e41f68>\nWhat is true about the user now:\n"
                        "- home city: Lisbon\nWhat you have learnt about your tools:\n- "
                        + str(INSIGHT_EXAMPLE["text"])
                        + "\n</memory-data-5d0c93a2b7e41f68>",
                        "tokens": 52,
                        "budget_tokens": 300,
                        "included": {"facts": 1, "preferences": 0, "tools": 1},
                        "left_out": 0,
                    }
                }
            }
        }
    },
)
def prompt(
    deps: Deps,
    caller: Caller,
    agent_id: AgentId,
    user_id: UserId,
    task: Task = None,
    budget_tokens: Annotated[
        int, Query(ge=16, le=8000, description="estimated tokens, characters / 4 (see the README)")
    ] = 400,
    scope: InsightScope = "agent",
) -> dict[str, Any]:
    """A short ranked block for the agent's system prompt: current facts, preferences and the tool
    insights of `task` (the agent's across its users by default, `scope=user` for this scope's own),
    within `budget_tokens`."""
    guard(caller, agent_id, user_id, "read")
    facts = deps.repo.facts(agent_id, user_id)
    insights = deps.repo.tool_insights(agent_id, user_id, task=task, scope=scope)
    block = prompt_block.build(facts, insights, budget_tokens=budget_tokens, admit=_screen(deps))
    return {
        "prompt": block.text,
        "tokens": block.tokens,
        "budget_tokens": budget_tokens,
        "included": block.included,
        "left_out": block.left_out,
    }


def _screen(deps: Deps) -> Callable[[str], bool]:
    """The write-side injection screen (the review's thresholds), for lines made of metadata a caller sent
    (a fact's entity, attribute and value; a tool's name and task): only a line it finds clean goes in.
    Read as text no person said (source external), the strictest reading."""
    from pipeline.review.injection import InjectionThresholds

    thresholds = InjectionThresholds.of(deps.settings.review)

    def admit(line: str) -> bool:
        verdict = injection.assess(line, role="tool", source="external")
        return injection.decide(verdict, thresholds) == "clean"

    return admit
