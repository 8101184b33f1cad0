"""One description of each operation, run over the sync client or the async one.

An operation is a generator that yields `Call`s (what to ask the API) and receives each answer; `run`
drives it with `MemoryClient` (blocking), `arun` with `AsyncMemoryClient` (awaiting, no threads). So the
store's, the tools' and the session's logic is written once and the two paths cannot drift apart.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hindsight_frameworks.aclient import AsyncMemoryClient
from pipeline.client import MemoryClient

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call:
    """One request: `name` is a method both clients have (or "sleep", seconds in kwargs["s"])."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


Op = Generator[Call, Any, T]


def _sync_call(client: MemoryClient, call: Call) -> Any:
    if call.name == "sleep":
        time.sleep(call.kwargs["s"])
        return None
    if call.name == "recall":
        return [hit.to_json() for hit in client.recall(*call.args, **call.kwargs)]
    return getattr(client, call.name)(*call.args, **call.kwargs)


async def _async_call(client: AsyncMemoryClient, call: Call) -> Any:
    if call.name == "sleep":
        await asyncio.sleep(call.kwargs["s"])
        return None
    return await getattr(client, call.name)(*call.args, **call.kwargs)


def run(op: Op[T], client: MemoryClient) -> T:
    try:
        call = next(op)
        while True:
            call = op.send(_sync_call(client, call))
    except StopIteration as done:
        result: T = done.value
        return result


async def arun(op: Op[T], client: AsyncMemoryClient) -> T:
    try:
        call = next(op)
        while True:
            call = op.send(await _async_call(client, call))
    except StopIteration as done:
        result: T = done.value
        return result
