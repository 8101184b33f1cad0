"""Fuzzing the MCP tools: the SDK's in-memory client against the real server object, which calls a real API
(uvicorn on a socket) over the real PostgreSQL and Redis. Every call, whatever its arguments, ends in a
result or a tool error with a reason, never a crash or a hang; the server keeps serving; a `memory_write`
that succeeds put exactly one turn on the stream and one that fails put none."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from pipeline.api.app import create_app
from pipeline.mcp.gateway import ApiGateway
from pipeline.mcp.server import TOOLS, build_server
from tests.fuzz.api import fuzz_api_deps
from tests.fuzz.strategies import (
    BAD_VALUE,
    EXAMPLES,
    FUZZ_TIMEOUT_S,
    huge,
    json_values,
    metadata_values,
    nasty_text,
)
from tests.fuzz.strategies import ts_values as timestamps
from tests.integration.harness import REDIS_URL
from tests.integration.live_api import serve

pytestmark = [pytest.mark.fuzz, pytest.mark.integration, pytest.mark.timeout(FUZZ_TIMEOUT_S)]
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
STREAM, DEAD = "hindsight:fuzz-mcp:turns", "hindsight:fuzz-mcp:dead"
SCOPE = {"agent_id": "fuzz-agent", "user_id": "fuzz-user"}

# One valid call per tool; the fuzzer drops, replaces and adds arguments from here.
VALID: dict[str, dict[str, Any]] = {
    "memory_write": {**SCOPE, "session_id": "s1", "role": "user", "content": "I moved to Lisbon."},
    "memory_recall": {**SCOPE, "query": "where do I live"},
    "memory_reflect": {**SCOPE, "goal": "plan a trip"},
    "memory_update": {**SCOPE, "memory_id": "episode:1", "reason": "fuzz", "weight": 0.5},
    "memory_forget": {**SCOPE, "memory_id": "episode:1", "reason": "fuzz"},
    "memory_list": {**SCOPE, "limit": 5},
    "memory_session_get": {**SCOPE, "session_id": "s1"},
    "memory_session_set": {**SCOPE, "session_id": "s1", "task": "fuzz", "slots": {"city": "Lisbon"}},
    "memory_session_end": {**SCOPE, "session_id": "s1"},
}
ODD: dict[str, st.SearchStrategy[Any]] = {
    "ts": timestamps,
    "as_of": timestamps,
    "metadata": metadata_values,
    "slots": st.one_of(st.dictionaries(nasty_text, json_values, max_size=4), json_values),
    "k": st.integers(min_value=-(2**40), max_value=2**40),
    "limit": st.integers(min_value=-(2**40), max_value=2**40),
    "memory_id": st.one_of(
        st.sampled_from(
            ["episode:1", "semantic:1", "episode:-1", "episode:99999999999999999999", "fact:1", ":"]
        ),
        nasty_text,
    ),
    "role": st.sampled_from(["user", "assistant", "tool", "system", "admin", ""]),
    "content": st.one_of(nasty_text, huge),
}


def _wire(value: Any) -> Any:
    """What a JSON-RPC peer can send: the SDK's client refuses to encode a lone surrogate (a UTF-8 encoder
    cannot), so those become U+FFFD as an agent's JSON encoder would make them. Lone surrogates and invalid
    UTF-8 reaching the API are fuzzed in test_fuzz_http."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_wire(k): _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from([*TOOLS, "memory_unknown"]))
    args = dict(VALID.get(tool, {}))
    for name in draw(st.lists(st.sampled_from(sorted(args) or ["x"]), max_size=3, unique=True)):
        action = draw(st.sampled_from(["drop", "odd", "wrong", "text"]))
        if action == "drop":
            args.pop(name, None)
        elif action == "odd" and name in ODD:
            args[name] = draw(ODD[name])
        elif action == "text":
            args[name] = draw(nasty_text)
        else:
            args[name] = draw(BAD_VALUE)
    if draw(st.integers(0, 4)) == 0:
        args[draw(nasty_text)] = draw(json_values)
    return tool, _wire(args)


@pytest.fixture(scope="module")
def mcp(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[anyio.from_thread.BlockingPortal, Client]]:
    deps = fuzz_api_deps(Path(tmp_path_factory.mktemp("fuzz-mcp")), STREAM, DEAD)
    with serve(create_app(deps)) as url, anyio.from_thread.start_blocking_portal() as portal:
        gateway = ApiGateway(url, timeout_s=30)
        try:
            # Entered and left in the portal's own task: the client's task group must exit where it entered.
            with portal.wrap_async_context_manager(Client(build_server(gateway))) as client:
                yield portal, client
        finally:
            gateway.close()
    redis.Redis.from_url(REDIS_URL).delete(STREAM, DEAD)


def _stream_len() -> int:
    return int(redis.Redis.from_url(REDIS_URL).xlen(STREAM))


@FUZZ
@given(call=calls())
def test_every_tool_call_ends_in_a_result_or_a_clear_tool_error(
    mcp: tuple[anyio.from_thread.BlockingPortal, Client], call: tuple[str, dict[str, Any]]
) -> None:
    portal, client = mcp
    tool, args = call
    before = _stream_len()
    result = portal.call(client.call_tool, tool, args)
    if result.is_error:
        reason = result.content[0].text if result.content else ""
        assert reason.strip(), (tool, args)
    else:
        assert result.structured_content is not None or result.content, (tool, args)
    if tool == "memory_write":
        assert _stream_len() - before == (0 if result.is_error else 1), (args, result)
    json.dumps(result.model_dump(mode="json"))  # whatever came back is serialisable for the agent


def test_the_server_still_serves_every_tool_after_the_fuzzing(
    mcp: tuple[anyio.from_thread.BlockingPortal, Client],
) -> None:
    portal, client = mcp
    listed = portal.call(client.list_tools)
    assert sorted(t.name for t in listed.tools) == sorted(TOOLS)
    ok = portal.call(client.call_tool, "memory_write", VALID["memory_write"])
    assert not ok.is_error, ok.content
