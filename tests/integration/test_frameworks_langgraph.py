"""A LangGraph graph on the real stack: it writes every turn to the Hindsight store and recalls before
answering; the chat model is langchain-core's own fake, scripted to call Hindsight's LangChain tools."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore

from hindsight_frameworks.langchain_tools import memory_tools
from hindsight_frameworks.langgraph_store import HindsightStore
from tests.helpers import wait_until
from tests.integration.harness import Stack

pytestmark = pytest.mark.integration
AGENT, USER = "chef-bot", "u9"
TURNS = (AGENT, USER, "turns")


class Prompts(BaseCallbackHandler):
    """What the chat model was sent, call by call."""

    def __init__(self) -> None:
        self.seen: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.seen.append(messages[0])


def _turn(state: MessagesState) -> dict[str, str]:
    last = state["messages"][-1]
    return {"role": "user" if isinstance(last, HumanMessage) else "assistant", "text": str(last.content)}


def _notes(found: list[Any]) -> dict[str, Any]:
    notes = "\n".join(f"- {item.value['text']}" for item in found) or "- nothing yet"
    return {"messages": [SystemMessage(f"What you remember about the user:\n{notes}")]}


def build(model: FakeMessagesListChatModel, tools: list[Any], *, use_async: bool = False) -> Any:
    def remember_turn(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        store.put(TURNS, uuid.uuid4().hex, _turn(state))
        return {}

    def recall(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        return _notes(store.search((AGENT, USER), query=str(state["messages"][-1].content), limit=3))

    async def aremember_turn(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        await store.aput(TURNS, uuid.uuid4().hex, _turn(state))
        return {}

    async def arecall(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        return _notes(await store.asearch((AGENT, USER), query=str(state["messages"][-1].content), limit=3))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "remember_answer"

    graph = StateGraph(MessagesState)
    graph.add_node("remember_question", aremember_turn if use_async else remember_turn)
    graph.add_node("recall", arecall if use_async else recall)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_node("remember_answer", aremember_turn if use_async else remember_turn)
    graph.add_edge(START, "remember_question")
    graph.add_edge("remember_question", "recall")
    graph.add_edge("recall", "agent")
    graph.add_conditional_edges("agent", route, ["tools", "remember_answer"])
    graph.add_edge("tools", "agent")
    graph.add_edge("remember_answer", END)
    return graph


def test_graph_writes_every_turn_and_recalls_before_answering(live: Stack) -> None:
    live.start_scheduler()
    store = HindsightStore(live.client)
    tools = memory_tools(
        live.client, agent_id=AGENT, user_id=USER, session_id="chat-1", aclient=store.aclient
    )
    first = FakeMessagesListChatModel(
        responses=[
            AIMessage(
                "",
                tool_calls=[
                    {"name": "remember", "args": {"content": "The user is allergic to peanuts."}, "id": "c1"}
                ],
            ),
            AIMessage("Got it, no peanuts."),
        ]
    )
    app = build(first, tools).compile(store=store)
    out = app.invoke({"messages": [HumanMessage("I'm allergic to peanuts.")]})
    assert out["messages"][-1].content == "Got it, no peanuts."
    assert "Remembered" in out["messages"][-2].content  # the tool ran and wrote a turn
    # Both turns of the exchange are items of the store (and turns of the scope), the question first.
    wait_until(lambda: len(store.search(TURNS)) == 2, timeout=20, what="both turns stored")
    assert [i.value["role"] for i in reversed(store.search(TURNS))] == ["user", "assistant"]

    # Next conversation: recall runs before the model answers, and the model's input holds the memory.
    wait_until(
        lambda: any(
            "peanuts" in i.value["text"] for i in store.search((AGENT, USER), query="what can I cook")
        ),
        timeout=20,
        what="the peanut turn recallable",
    )
    prompts = Prompts()
    second = FakeMessagesListChatModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "food allergies"}, "id": "c2"}]),
            AIMessage("A peanut-free stir fry."),
        ]
    )
    out = (
        build(second, tools)
        .compile(store=store)
        .invoke({"messages": [HumanMessage("What can I cook tonight?")]}, config={"callbacks": [prompts]})
    )
    assert out["messages"][-1].content == "A peanut-free stir fry."
    first_prompt = "\n".join(str(m.content) for m in prompts.seen[0])
    assert "allergic to peanuts" in first_prompt  # recalled before the model's first word
    assert "peanuts" in out["messages"][-2].content  # and the recall tool found it too

    # The async path (aput, asearch: abatch over httpx's async client) in async nodes: the same graph.
    third = FakeMessagesListChatModel(responses=[AIMessage("Still no peanuts.")])
    prompts = Prompts()
    out = asyncio.run(
        build(third, tools, use_async=True)
        .compile(store=store)
        .ainvoke(
            {"messages": [HumanMessage("Any dessert without peanuts?")]}, config={"callbacks": [prompts]}
        )
    )
    assert out["messages"][-1].content == "Still no peanuts."
    assert "allergic to peanuts" in "\n".join(str(m.content) for m in prompts.seen[0])
    wait_until(lambda: len(store.search(TURNS, limit=50)) == 6, timeout=20, what="all six turns stored")
