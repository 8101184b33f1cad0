"""Errors through the framework adapters: an unreachable API is one clear error and one attempt (no retry
storm); a key that may not act on a namespace gets a 403 naming the key."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agents import Agent, RunConfig, Runner, set_tracing_disabled

from hindsight_frameworks.aclient import AsyncMemoryClient
from hindsight_frameworks.langchain_tools import memory_tools
from hindsight_frameworks.langgraph_store import HindsightStore
from hindsight_frameworks.openai_agents import HindsightSession
from hindsight_frameworks.scripted import ScriptedModel, say
from pipeline.adapters.postgres.repository import Repository
from pipeline.client import MemoryClient
from pipeline.core.errors import Forbidden, RetryableError
from pipeline.core.ports import WarmEmbedder
from tests.integration.harness import WorkerProcess, make_settings
from tests.integration.keyed import fresh_keys
from tests.integration.live_api import live_stack

pytestmark = pytest.mark.integration


class Hangup:
    """A listener that accepts each connection and closes it at once, counting them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


@pytest.fixture
def hangup() -> Iterator[Hangup]:
    h = Hangup()
    yield h
    h.sock.close()


def test_unreachable_api_is_one_clear_error_and_one_attempt(hangup: Hangup, tmp_path: Path) -> None:
    settings = make_settings(tmp_path).model_copy(update={"api_url": hangup.url})
    client = MemoryClient(settings, api_key="hs_00000000_" + "c" * 43)
    store = HindsightStore(client)
    started = time.monotonic()
    with pytest.raises(RetryableError, match=f"API unreachable at {hangup.url}"):
        store.search(("support-bot", "u42"), query="anything")
    assert hangup.connections == 1
    with pytest.raises(RetryableError, match="API unreachable"):
        store.put(("support-bot", "u42"), "k", {"text": "x"})
    assert hangup.connections == 2
    with pytest.raises(RetryableError, match="API unreachable"):
        asyncio.run(store.aget(("support-bot", "u42"), "k"))
    assert hangup.connections == 3
    recall_tool = memory_tools(client, agent_id="support-bot", user_id="u42", session_id="s1")[1]
    with pytest.raises(RetryableError, match="API unreachable"):
        recall_tool.invoke({"query": "anything"})
    assert hangup.connections == 4
    set_tracing_disabled(True)
    session = HindsightSession(
        "s1", agent_id="support-bot", user_id="u42", client=AsyncMemoryClient(hangup.url)
    )
    agent = Agent(name="a", model=ScriptedModel([say("hi")]))
    with pytest.raises(RetryableError, match="API unreachable"):
        asyncio.run(Runner.run(agent, "hello", session=session, run_config=RunConfig(tracing_disabled=True)))
    assert hangup.connections == 5
    assert time.monotonic() - started < 10  # no backoff loop either
    client.close()


def test_a_key_that_may_not_act_on_the_namespace_is_named(
    repo: Repository, worker: WorkerProcess, embedder: WarmEmbedder, tmp_path: Path
) -> None:
    keys = fresh_keys(repo)
    alpha_prefix = keys["alpha"].split("_")[1]
    with live_stack(repo, embedder, tmp_path, auth={"mode": "required"}) as stack:
        stack.start_scheduler()
        alpha = MemoryClient(stack.settings, api_key=keys["alpha"])
        store = HindsightStore(alpha)
        store.put(("alpha", "u1", "notes"), "k", {"text": "alpha's own note"})  # its own agent: fine
        with pytest.raises(
            Forbidden, match=f"the key {alpha_prefix}.*may not write the memories of agent 'beta'"
        ):
            store.put(("beta", "u1", "notes"), "k", {"text": "not alpha's"})
        with pytest.raises(
            Forbidden, match=f"the key {alpha_prefix}.*may not read the memories of agent 'beta'"
        ):
            store.search(("beta", "u1"), query="notes")
        with pytest.raises(Forbidden, match=f"the key {alpha_prefix}"):
            asyncio.run(store.aget(("beta", "u1", "notes"), "k"))
        session = HindsightSession("s1", agent_id="beta", user_id="u1", client=AsyncMemoryClient.like(alpha))
        with pytest.raises(Forbidden, match=f"the key {alpha_prefix}"):
            asyncio.run(session.get_items())
        alpha.close()
