"""remember / recall / forget as LangChain tools, for any tool-calling chat model
(`pip install hindsight-memory[langchain]`).

    tools = memory_tools(agent_id="support-bot", user_id="u42", session_id="s1")
    model.bind_tools(tools)

Each tool has a sync path (MemoryClient) and an async one (AsyncMemoryClient: `ainvoke`, no threads).
A mistake the model can fix (an empty query, an unknown memory id) comes back to it as the tool's text;
an unreachable API or a key that may not act on the scope raises, with the client's message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from hindsight_frameworks import memory_ops
from hindsight_frameworks.aclient import AsyncMemoryClient
from hindsight_frameworks.memory_ops import MemoryScope
from hindsight_frameworks.transport import Op, arun, run
from pipeline.client import MemoryClient
from pipeline.core.errors import InvalidTurn, NotFound


def memory_tools(
    client: MemoryClient | None = None,
    *,
    agent_id: str,
    user_id: str,
    session_id: str,
    aclient: AsyncMemoryClient | None = None,
    source: str = "agent",
) -> list[BaseTool]:
    """The three tools, acting on one scope (agent_id, user_id); what they remember joins `session_id`."""
    client = client or MemoryClient()
    aclient = aclient or AsyncMemoryClient.like(client)
    scope = MemoryScope(agent_id, user_id, session_id, source)

    def tool(name: str, doc: str, make: Callable[..., Op[str]]) -> BaseTool:
        def sync(**kwargs: Any) -> str:
            try:
                return run(make(scope, **kwargs), client)
            except (InvalidTurn, NotFound) as exc:
                return f"error: {exc}"

        async def coroutine(**kwargs: Any) -> str:
            try:
                return await arun(make(scope, **kwargs), aclient)
            except (InvalidTurn, NotFound) as exc:
                return f"error: {exc}"

        return StructuredTool.from_function(
            func=sync, coroutine=coroutine, name=name, description=doc, args_schema=_SCHEMAS[name]
        )

    return [
        tool("remember", memory_ops.REMEMBER_DOC, memory_ops.remember),
        tool("recall", memory_ops.RECALL_DOC, memory_ops.recall),
        tool("forget", memory_ops.FORGET_DOC, memory_ops.forget),
    ]


_SCHEMAS: dict[str, dict[str, Any]] = {
    "remember": {
        "type": "object",
        "properties": {"content": {"type": "string", "description": "the statement to remember"}},
        "required": ["content"],
    },
    "recall": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "k": {"type": "integer", "description": "how many memories, at most", "default": 5},
        },
        "required": ["query"],
    },
    "forget": {
        "type": "object",
        "properties": {
            "memory_id": {"type": "string", "description": "e.g. episode:12, as recall shows it"},
            "reason": {"type": "string", "description": "why it should be forgotten"},
        },
        "required": ["memory_id", "reason"],
    },
}
