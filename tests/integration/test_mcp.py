"""The MCP server as MCP clients use it: the SDK's own client spawns `hindsight mcp` over stdio, or talks
to `hindsight mcp --transport http` over streamable HTTP, and calls every tool against a real stack
(PostgreSQL, Redis, a Celery worker, the API on a socket)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from pipeline.adapters.postgres.repository import Repository
from pipeline.core.ports import WarmEmbedder
from pipeline.ingest.working_memory import slot_turn_id
from pipeline.mcp.server import TOOLS
from tests.integration.harness import REPO_ROOT, Stack, WorkerProcess
from tests.integration.live_api import live_stack
from tests.integration.mcp_http import mcp_over_http
from tests.llm_stub import StubLLM

pytestmark = pytest.mark.integration
AGENT, USER = "travel-bot", "mcp-user"


def _env(api_url: str) -> dict[str, str]:
    return {
        "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO_ROOT)),
        "HINDSIGHT_API_URL": api_url,
        "HINDSIGHT_LOG_JSON": "true",
        "HF_HUB_OFFLINE": "1",
    }


async def _call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result: CallToolResult = await client.call_tool(name, arguments)
    assert not result.is_error, f"{name}: {result.content}"
    assert result.structured_content is not None, name
    return result.structured_content


async def _error(client: Client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error, f"{name} should have failed: {result.structured_content}"
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def exercise_every_tool(
    client: Client, stack: Stack, session: str, before_reflect: Callable[[], None] = lambda: None
) -> dict[str, Any]:
    """Write, keep session state, end the session (the worker reviews it), then read it all back."""
    scope = {"agent_id": AGENT, "user_id": USER}
    stack.start_scheduler()
    assert {t.name for t in (await client.list_tools()).tools} == set(TOOLS)

    wrote = await _call(
        client, "memory_write", **scope, session_id=session, role="user",
        content="I live in Porto and I am allergic to peanuts.", turn_id=f"{session}-t1",
    )  # fmt: skip
    assert wrote == {"turn_id": f"{session}-t1", "accepted": True}
    made = await _call(
        client, "memory_write", **scope, session_id=session, role="user",
        content="For long flights I always book a window seat.", metadata={"space": "private"},
    )  # fmt: skip
    assert len(made["turn_id"]) == 32  # made by the server when not given

    state = await _call(
        client, "memory_session_set", **scope, session_id=session, task="book a flight to Madeira",
        slots={"home_city": "Porto", "seat": "window"}, pending_questions=["which dates?"],
    )  # fmt: skip
    assert state["slots"] == {"home_city": "Porto", "seat": "window"}
    state = await _call(client, "memory_session_set", **scope, session_id=session, slots={"seat": None})
    assert state["slots"] == {"home_city": "Porto"}
    assert state["task"] == "book a flight to Madeira"
    got = await _call(client, "memory_session_get", **scope, session_id=session)
    assert got["pending_questions"] == ["which dates?"]
    assert got["expires_in_s"] > 0

    ended = await _call(client, "memory_session_end", **scope, session_id=session)
    assert ended == {"session_id": session, "slots_handed_over": 1}
    turns = [f"{session}-t1", made["turn_id"], slot_turn_id(AGENT, USER, session, "home_city", "Porto")]
    await anyio.to_thread.run_sync(stack.wait_indexed, turns)  # the real worker reviews the session

    recalled = await _call(
        client, "memory_recall", query="where does the user live?", **scope, k=5, session_id=session
    )
    assert any("Porto" in hit["text"] for hit in recalled["results"]), recalled
    assert recalled["working_memory"]["expires_in_s"] is None  # handed over when the session ended

    first = await _call(client, "memory_list", **scope, kind="episode", limit=2)
    rest = await _call(client, "memory_list", **scope, kind="episode", limit=2, offset=first["next_offset"])
    listed = first["memories"] + rest["memories"]
    assert first["next_offset"] == 2
    assert rest["next_offset"] is None
    assert sorted(m["source_turn_ids"][0] for m in listed) == sorted(turns)
    porto = next(m for m in listed if m["source_turn_ids"] == [f"{session}-t1"])
    assert porto["status"] == "kept"
    assert porto["session_id"] == session

    updated = await _call(
        client, "memory_update", memory_id=porto["id"], **scope, reason="user asked", weight=2.0, core=True
    )
    assert updated["after"]["weight"] == 2.0
    assert updated["after"]["core"] is True

    before_reflect()
    reflected = await _call(client, "memory_reflect", goal="book a flight for the user", **scope)
    facts = {(f["attribute"], f["value"]) for f in reflected["evidence"]["current_facts"]}
    assert ("home_city", "Porto") in facts
    assert reflected["evidence"]["related_memories"], reflected

    forgotten = await _call(client, "memory_forget", memory_id=porto["id"], **scope, reason="user request")
    assert forgotten["mode"] == "soft"
    hidden = await _call(client, "memory_list", **scope, status="forgotten")
    assert [m["id"] for m in hidden["memories"]] == [porto["id"]]

    # Bad arguments and unknown memories are tool errors with a reason, and the server keeps serving.
    assert "role" in await _error(
        client, "memory_write", **scope, session_id=session, role="robot", content="x"
    )
    assert "user_id" in await _error(client, "memory_recall", query="x", agent_id=AGENT)
    assert "episode:<n>" in await _error(client, "memory_forget", memory_id="42", **scope, reason="r")
    missing = await _error(
        client, "memory_update", memory_id="episode:999999", **scope, reason="r", weight=1.0
    )
    assert "episode:999999: no such memory" in missing
    assert "as_of" in await _error(client, "memory_recall", query="x", **scope, as_of="yesterday")
    assert await _call(client, "memory_session_get", **scope, session_id=session)  # still serving
    return reflected


def test_every_tool_over_stdio(live: Stack) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pipeline.cli", "mcp"],
        env=_env(live.settings.api_url),
        cwd=REPO_ROOT,
    )

    async def scenario() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            return await exercise_every_tool(client, live, "stdio-s1")

    reflected = anyio.run(scenario)
    # No LLM configured: the deterministic evidence only.
    assert reflected["mode"] == "evidence"
    assert reflected["review"] is None


def test_every_tool_over_streamable_http_with_an_llm_for_reflect(
    clean: None,
    repo: Repository,
    worker: WorkerProcess,
    embedder: WarmEmbedder,
    tmp_path: Path,
) -> None:
    with (
        StubLLM() as llm,
        live_stack(repo, embedder, tmp_path, llm={"base_url": llm.url}) as stack,
        mcp_over_http({**os.environ, **_env(stack.settings.api_url)}, tmp_path / "mcp.log") as url,
    ):

        def script_the_review() -> None:
            # Cites the fact the worker made from the session's slot, and one id it made up.
            llm.good(
                {
                    "still_valid": [{"id": f"fact:{home_city_fact(repo)}", "why": "the user said so"}],
                    "to_correct": [{"id": "fact:987654", "problem": "invented", "correction": ""}],
                    "insights": ["Flies from Porto; peanut allergy matters for meals."],
                    "suggested_updates": [{"id": None, "action": "add_fact", "detail": "ask dates"}],
                }
            )

        async def scenario() -> dict[str, Any]:
            async with Client(url, read_timeout_seconds=60) as client:
                return await exercise_every_tool(client, stack, "http-s1", script_the_review)

        reflected = anyio.run(scenario)
    assert reflected["mode"] == "llm", reflected["llm_error"]
    review = reflected["review"]
    assert review["still_valid"] == [{"id": f"fact:{home_city_fact(repo)}", "why": "the user said so"}]
    assert review["to_correct"] == []  # it cited an id the evidence does not hold: dropped
    assert review["insights"] == ["Flies from Porto; peanut allergy matters for meals."]
    assert review["suggested_updates"] == [{"id": None, "action": "add_fact", "detail": "ask dates"}]
    assert "Goal: book a flight for the user" in llm.requests[0]["messages"][1]["content"]


def home_city_fact(repo: Repository) -> int:
    return int(repo.facts(AGENT, USER, attribute="home_city")[0]["id"])
