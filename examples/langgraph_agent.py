"""A LangGraph agent whose memory is Hindsight: it writes every turn to the store and recalls before it
answers. Run it against `make run` (HINDSIGHT_API_URL, default http://127.0.0.1:8700):

    .venv/bin/python examples/langgraph_agent.py

The chat model is langchain-core's scripted fake, so no LLM key is needed; put any tool-calling chat model
in its place (`model.bind_tools(tools)`).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore

from hindsight_frameworks.langchain_tools import memory_tools
from hindsight_frameworks.langgraph_store import HindsightStore

AGENT, USER = "chef-bot", f"demo-{uuid.uuid4().hex[:6]}"


def build(model: Any, tools: list[Any]) -> Any:
    def remember_turn(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        last = state["messages"][-1]
        role = "user" if isinstance(last, HumanMessage) else "assistant"
        store.put((AGENT, USER, "turns"), uuid.uuid4().hex, {"role": role, "text": str(last.content)})
        return {}

    def recall(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        found = store.search((AGENT, USER), query=str(state["messages"][-1].content), limit=3)
        notes = "\n".join(f"- {i.value['text']}" for i in found) or "- nothing yet"
        return {"messages": [SystemMessage(f"What you remember about the user:\n{notes}")]}

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "remember_answer"

    graph = StateGraph(MessagesState)
    graph.add_node("remember_question", remember_turn)
    graph.add_node("recall", recall)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_node("remember_answer", remember_turn)
    graph.add_edge(START, "remember_question")
    graph.add_edge("remember_question", "recall")
    graph.add_edge("recall", "agent")
    graph.add_conditional_edges("agent", route, ["tools", "remember_answer"])
    graph.add_edge("tools", "agent")
    graph.add_edge("remember_answer", END)
    return graph


def main() -> None:
    store = HindsightStore()
    tools = memory_tools(store.client, agent_id=AGENT, user_id=USER, session_id="chat-1")
    remember = {"name": "remember", "args": {"content": "The user is allergic to peanuts."}, "id": "c1"}
    model = FakeMessagesListChatModel(responses=[AIMessage("", tool_calls=[remember]), AIMessage("Noted.")])
    out = (
        build(model, tools)
        .compile(store=store)
        .invoke({"messages": [HumanMessage("I'm allergic to peanuts.")]})
    )
    print("user: I'm allergic to peanuts.\nagent:", out["messages"][-1].content)

    time.sleep(2)  # the pipeline stores a turn within a second or two
    model = FakeMessagesListChatModel(responses=[AIMessage("How about a peanut-free noodle stir fry?")])
    out = (
        build(model, tools)
        .compile(store=store)
        .invoke({"messages": [HumanMessage("What can I cook tonight?")]})
    )
    print("\nuser: What can I cook tonight?")
    print(next(m.content for m in out["messages"] if isinstance(m, SystemMessage)))
    print("agent:", out["messages"][-1].content)
    print("\nstore items:", [i.value["text"] for i in store.search((AGENT, USER, "turns"), limit=10)])
    store.close()


if __name__ == "__main__":
    main()
