"""The MCP tools in process (the SDK's in-memory client): names and parameters match the Python client,
and failures are tool errors with a reason, never a crash."""

from __future__ import annotations

import inspect
from typing import Any

import anyio
import pytest
from mcp import Client

from pipeline.client import MemoryClient
from pipeline.mcp.gateway import ApiGateway
from pipeline.mcp.server import TOOLS, build_server
from tests.helpers import free_port

# tool -> the Python client method whose parameters it mirrors (the MCP tools set `actor` themselves)
MIRRORS = {
    "memory_write": MemoryClient.write_memory,
    "memory_recall": MemoryClient.recall,
    "memory_reflect": MemoryClient.reflect,
    "memory_update": MemoryClient.update_memory,
    "memory_forget": MemoryClient.forget,
    "memory_list": MemoryClient.list_memories,
    "memory_tool_insights": MemoryClient.tool_insights,
    "memory_session_get": MemoryClient.get_working_memory,
    "memory_session_set": MemoryClient.set_working_memory,
    "memory_session_end": MemoryClient.end_session,
}


def _with_server(body: Any) -> Any:
    gateway = ApiGateway(f"http://127.0.0.1:{free_port()}", timeout_s=5)  # nothing listens there

    async def run() -> Any:
        async with Client(build_server(gateway)) as client:
            return await body(client)

    try:
        return anyio.run(run)
    finally:
        gateway.close()


def test_every_tool_has_the_client_method_parameter_names_and_an_output_schema() -> None:
    async def tools(client: Client) -> Any:
        return (await client.list_tools()).tools

    listed = {t.name: t for t in _with_server(tools)}
    assert set(listed) == set(TOOLS) == set(MIRRORS)
    for name, method in MIRRORS.items():
        expected = [p for p in inspect.signature(method).parameters if p not in ("self", "actor")]
        assert list(listed[name].input_schema["properties"]) == expected, name
        assert listed[name].output_schema is not None, name


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("memory_recall", {"query": "x", "agent_id": "a", "user_id": "u"}, "is unreachable"),
        ("memory_recall", {"query": "x", "agent_id": "a"}, "user_id"),
        ("memory_recall", {"query": "x", "agent_id": "a", "user_id": "u", "k": 0}, "k"),
        (
            "memory_forget",
            {"memory_id": "e:1", "agent_id": "a", "user_id": "u", "reason": "r"},
            "episode:<n>",
        ),
        ("memory_list", {"agent_id": "a", "user_id": "u", "kind": "fact"}, "kind"),
        ("memory_session_set", {"agent_id": "a", "user_id": "u", "session_id": "s", "slots": [1]}, "slots"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
def test_failures_are_tool_errors_with_a_reason(tool: str, arguments: dict[str, Any], message: str) -> None:
    async def call(client: Client) -> Any:
        first = await client.call_tool(tool, arguments)
        after = await client.list_tools()  # the server is still serving
        return first, after

    result, after = _with_server(call)
    assert result.is_error
    assert message in result.content[0].text
    assert len(after.tools) == len(TOOLS)
