"""The OpenAI Agents SDK on the real stack: a Runner with a scripted model (no network), Hindsight's
function tools and session."""

from __future__ import annotations

import asyncio

import pytest
from agents import Agent, RunConfig, Runner, set_tracing_disabled

from hindsight_frameworks.aclient import AsyncMemoryClient
from hindsight_frameworks.openai_agents import HindsightSession, memory_function_tools
from hindsight_frameworks.scripted import ScriptedModel, call, last_tool_output, say
from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration
SCOPE = {"agent_id": "travel-bot", "user_id": "u7"}
NO_TRACING = RunConfig(tracing_disabled=True)


@pytest.fixture
def api(live: Stack) -> Stack:
    set_tracing_disabled(True)
    live.start_scheduler()
    return live


def _agent(model: ScriptedModel, client: AsyncMemoryClient, session_id: str) -> Agent:
    return Agent(
        name="travel",
        instructions="Help the user travel; remember what matters.",
        model=model,
        tools=memory_function_tools(client, session_id=session_id, **SCOPE),
    )


def test_runner_with_session_and_tools_writes_turns_and_recalls(api: Stack) -> None:
    async def scenario() -> None:
        client = AsyncMemoryClient(api.settings.api_url)
        session = HindsightSession("trip-1", client=client, **SCOPE)
        first = ScriptedModel(
            [
                call("remember", content="The user is vegetarian."),
                say("Noted: vegetarian meals on your trip."),
            ]
        )
        result = await Runner.run(
            _agent(first, client, "trip-1"),
            "I'm vegetarian, keep that in mind.",
            session=session,
            run_config=NO_TRACING,
        )
        assert result.final_output == "Noted: vegetarian meals on your trip."
        # Every item of the run is a turn of the session: user message, function call, its output, answer.
        items = await session.get_items()
        assert [i.get("role") or i.get("type") for i in items] == [
            "user",
            "function_call",
            "function_call_output",
            "assistant",
        ]
        wait_until(
            lambda: (
                len(api.client.list_memories(session_id="trip-1", kind="episode", **SCOPE)["memories"]) >= 5
            ),
            timeout=20,
            what="the run's turns stored",
        )
        # A second run, by another process's session object: the history comes back from the turns, and
        # the model recalls before answering.
        again = HindsightSession("trip-1", client=client, **SCOPE)
        assert [i.get("role") or i.get("type") for i in await again.get_items()] == [
            i.get("role") or i.get("type") for i in items
        ]
        assert len(await again.get_items(limit=2)) == 2
        second = ScriptedModel(
            [
                call("recall", query="what does the user eat"),
                say(lambda seen: "From memory: " + last_tool_output(seen).splitlines()[0]),
            ]
        )
        wait_until(
            lambda: any("vegetarian" in h.text for h in api.client.recall("what does the user eat", **SCOPE)),
            timeout=20,
            what="the remembered fact recallable",
        )
        result = await Runner.run(
            _agent(second, client, "trip-1"), "Book me a dinner.", session=again, run_config=NO_TRACING
        )
        assert "vegetarian" in result.final_output
        # The model saw the first run's history (from the session) before it answered.
        assert any("I'm vegetarian" in str(i.get("content")) for i in second.inputs[0])
        # pop_item forgets the newest item; clear_session ends the session without deleting memory.
        popped = await again.pop_item()
        assert popped is not None
        assert "vegetarian" in str(popped.get("content"))
        await again.clear_session()
        assert await again.get_items() == []
        # Another process sees the clear once the pipeline has stored it (a second or two).
        fresh = HindsightSession("trip-1", client=client, **SCOPE)
        for _ in range(100):
            if await fresh.get_items() == []:
                break
            await asyncio.sleep(0.2)
        assert await fresh.get_items() == []
        assert any("vegetarian" in h.text for h in api.client.recall("what does the user eat", **SCOPE))
        await client.aclose()

    asyncio.run(scenario())
