"""An OpenAI Agents SDK agent with Hindsight's session and memory tools. Run it against `make run`:

    .venv/bin/python examples/openai_agents_session.py

The model is a scripted stand-in (hindsight_frameworks.scripted), so no OpenAI key is needed and nothing
leaves the machine (tracing off); pass `model="gpt-..."` to use a real one.
"""

from __future__ import annotations

import asyncio
import uuid

from agents import Agent, RunConfig, Runner, set_tracing_disabled

from hindsight_frameworks.aclient import AsyncMemoryClient
from hindsight_frameworks.openai_agents import HindsightSession, memory_function_tools
from hindsight_frameworks.scripted import ScriptedModel, call, last_tool_output, say

AGENT, USER = "travel-bot", f"demo-{uuid.uuid4().hex[:6]}"


async def main() -> None:
    set_tracing_disabled(True)
    client = AsyncMemoryClient()
    session = HindsightSession("trip-1", agent_id=AGENT, user_id=USER, client=client)
    tools = memory_function_tools(client, agent_id=AGENT, user_id=USER, session_id="trip-1")
    model = ScriptedModel(
        [
            call("remember", content="The user prefers window seats."),
            say("Window seat it is."),
            call("recall", query="seat preference"),
            say(lambda items: "From memory: " + last_tool_output(items).splitlines()[0]),
        ]
    )
    agent = Agent(name="travel", instructions="Book travel; remember preferences.", model=model, tools=tools)
    run = RunConfig(tracing_disabled=True)
    first = await Runner.run(agent, "I always want a window seat.", session=session, run_config=run)
    print("agent:", first.final_output)
    await asyncio.sleep(2)  # recallable within a second or two
    second = await Runner.run(agent, "Book my flight to Kyoto.", session=session, run_config=run)
    print("agent:", second.final_output)
    print("session items:", [i.get("role") or i.get("type") for i in await session.get_items()])
    await session.clear_session()  # ends the session (review now); memory stays
    print("after clear:", await session.get_items())
    await client.aclose()


if __name__ == "__main__":
    asyncio.run(main())
