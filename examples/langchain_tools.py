"""Hindsight's remember / recall / forget as LangChain tools, called by a (scripted) tool-calling chat
model. Run it against `make run`:

    .venv/bin/python examples/langchain_tools.py

With a real model: `model.bind_tools(memory_tools(...))`, then run each tool call it makes.
"""

from __future__ import annotations

import time
import uuid

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from hindsight_frameworks.langchain_tools import memory_tools

AGENT, USER = "support-bot", f"demo-{uuid.uuid4().hex[:6]}"


def main() -> None:
    tools = {t.name: t for t in memory_tools(agent_id=AGENT, user_id=USER, session_id="s1")}
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage(
                "",
                tool_calls=[
                    {"name": "remember", "args": {"content": "The user's dog is called Miso."}, "id": "a"}
                ],
            ),
            AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "the user's pet"}, "id": "b"}]),
        ]
    )
    messages: list = [HumanMessage("My dog is called Miso.")]
    for step in range(2):
        reply = model.invoke(messages)
        for call in reply.tool_calls:
            result = tools[call["name"]].invoke(call["args"])
            print(f"{call['name']}({call['args']}) -> {result}")
            messages += [reply, ToolMessage(result, tool_call_id=call["id"])]
        if step == 0:
            time.sleep(2)  # recallable within a second or two of the write
    memory_id = str(messages[-1].content).split(" ", 1)[0]
    print("forget ->", tools["forget"].invoke({"memory_id": memory_id, "reason": "demo"}))


if __name__ == "__main__":
    main()
