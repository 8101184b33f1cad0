"""Hostile inputs of issue 29 at the pure boundaries: repeated turn ids, metadata.space, lone surrogates in
working memory, the client's metadata argument, MCP argument errors."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from pipeline.client import MemoryClient
from pipeline.core.config import Settings
from pipeline.core.errors import InvalidTurn, TurnIdConflict
from pipeline.ingest.validation import RepeatedTurnIds, parse_event, utcnow
from pipeline.ingest.working_memory import parse_change
from pipeline.mcp.gateway import ApiGateway
from pipeline.mcp.server import build_server
from tests.helpers import free_port


def _turn(**overrides: Any) -> dict[str, Any]:
    return {
        "turn_id": "t-1", "agent_id": "a", "user_id": "u", "session_id": "s", "role": "user",
        "content": "hello", "ts": "2024-05-01T10:00:00+00:00", **overrides,
    }  # fmt: skip


def test_a_turn_id_is_refused_only_for_a_different_turn_of_the_same_scope() -> None:
    now = utcnow()
    repeats = RepeatedTurnIds()
    repeats.check(parse_event(_turn(), now=now), "item 0")
    repeats.check(parse_event(_turn(), now=now), "item 1")  # a retry
    repeats.check(parse_event(_turn(agent_id="b", content="other"), now=now), "item 2")  # another scope
    repeats.check(parse_event(_turn(user_id="v", content="other"), now=now), "item 3")
    with pytest.raises(TurnIdConflict, match=r"turn_id 't-1': already used by item 0 for a different turn"):
        repeats.check(parse_event(_turn(content="changed"), now=now), "item 4")


@pytest.mark.parametrize(
    ("agent_id", "space", "ok"),
    [("bot", "private", True), ("shared", "shared", True), ("system", "system", True),
     ("bot", "shared", False), ("shared", "private", False), ("bot", "system", False)],
)  # fmt: skip
def test_metadata_space_must_name_the_space_the_agent_id_is(agent_id: str, space: str, ok: bool) -> None:
    fields = _turn(agent_id=agent_id, metadata={"space": space})
    if ok:
        assert parse_event(fields, now=utcnow()).metadata == {"space": space}  # type: ignore[union-attr]
    else:
        with pytest.raises(InvalidTurn, match=f"metadata.space: '{space}', but agent_id '{agent_id}'"):
            parse_event(fields, now=utcnow())


@pytest.mark.parametrize(
    ("change", "field"),
    [({"task": "t\ud800"}, "task"), ({"slots": {"city": "x\udfff"}}, "slots.city"),
     ({"pending_questions": ["ok", "q\ud800"]}, r"pending_questions\[1\]")],
)  # fmt: skip
def test_a_lone_surrogate_in_a_working_memory_change_is_invalid(change: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidTurn, match=f"{field}: not valid UTF-8"):
        parse_change(**change)


def _client(api_key: str | None) -> MemoryClient:
    port = free_port()  # nothing listens: the checks must refuse before any I/O
    settings = Settings(redis_url=f"redis://127.0.0.1:{port}/0", api_url=f"http://127.0.0.1:{port}")
    return MemoryClient(settings, api_key=api_key)


@pytest.mark.parametrize("api_key", [None, "hs_x_y"])
@pytest.mark.parametrize(("metadata", "got"), [([1, 2], "list"), ('{"a": 1}', "str"), (3, "int")])
def test_the_client_refuses_metadata_that_is_not_a_mapping(
    api_key: str | None, metadata: Any, got: str
) -> None:
    client = _client(api_key)
    with pytest.raises(InvalidTurn, match=f"metadata: must be a mapping .*got {got}"):
        client.write_memory("a", "u", "s", "user", "hello", metadata=metadata)


@pytest.mark.parametrize("api_key", [None, "hs_x_y"])
def test_the_clients_working_memory_refuses_a_lone_surrogate_before_sending(api_key: str | None) -> None:
    client = _client(api_key)
    with pytest.raises(InvalidTurn, match="task: not valid UTF-8"):
        client.set_working_memory("a", "u", "s", task="t\ud800")


def test_mcp_argument_errors_end_with_the_reason_not_pydantics_url() -> None:
    gateway = ApiGateway(f"http://127.0.0.1:{free_port()}", timeout_s=5)

    async def call() -> Any:
        async with Client(build_server(gateway)) as client:
            args = {"agent_id": "a", "user_id": "u", "session_id": "s", "role": "robot", "content": "x"}
            return await client.call_tool("memory_write", args)

    try:
        result = anyio.run(call)
    finally:
        gateway.close()
    assert result.is_error
    message = result.content[0].text
    assert "role" in message
    assert "Input should be 'user'" in message
    assert "errors.pydantic.dev" not in message
    assert "For further information" not in message
