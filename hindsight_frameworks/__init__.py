"""Hindsight for the agent frameworks people build with (issue 41), installed as optional extras:

- `hindsight_frameworks.langgraph_store.HindsightStore`: a LangGraph `BaseStore` (`pip install
  hindsight-memory[langgraph]`);
- `hindsight_frameworks.langchain_tools.memory_tools`: remember / recall / forget as LangChain tools
  (`[langchain]`);
- `hindsight_frameworks.openai_agents`: function tools and a `Session` for the OpenAI Agents SDK
  (`[openai-agents]`).

They speak only through the public client (`pipeline.client.MemoryClient`) and, on their async paths, its
asynchronous twin here (`AsyncMemoryClient`, over httpx's async client: no threads).
"""

from hindsight_frameworks.aclient import AsyncMemoryClient

__all__ = ["AsyncMemoryClient"]
