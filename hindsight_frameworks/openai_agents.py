"""The OpenAI Agents SDK on Hindsight (`pip install hindsight-memory[openai-agents]`): memory function
tools and a `Session`.

    session = HindsightSession("s1", agent_id="support-bot", user_id="u42")
    agent = Agent(name="support", tools=memory_function_tools(agent_id="support-bot", user_id="u42",
                                                              session_id="s1"))
    await Runner.run(agent, "hi", session=session)

The session writes each item the Runner adds as one turn of Hindsight session `session_id` (messages by
their role, a function call as an assistant turn, its output as a tool turn), so review sees the whole
conversation; `get_items` gives the session's recent items back from those turns (its own writes at once,
before the pipeline has stored them); `pop_item` forgets the newest; `clear_session` ends the session (its
light review starts now) and starts the history afresh: nothing is deleted, what was said stays in the
user's memory and recall. Everything is async over httpx (no threads).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from agents import FunctionTool, function_tool
from agents.items import TResponseInputItem

from hindsight_frameworks import memory_ops
from hindsight_frameworks.aclient import AsyncMemoryClient
from hindsight_frameworks.memory_ops import MemoryScope
from hindsight_frameworks.transport import arun
from pipeline.core.errors import InvalidTurn, NotFound
from pipeline.core.models import MAX_ID_CHARS
from pipeline.ingest.validation import utcnow

ENTITY_PREFIX = "agents-session:"
CLEARED = "~cleared"
MAX_ITEM_META_BYTES = 12 * 1024
PAGE = 500
POP_WAIT_S = 10.0
PENDING_S = 120.0


def memory_function_tools(
    aclient: AsyncMemoryClient | None = None,
    *,
    agent_id: str,
    user_id: str,
    session_id: str,
    source: str = "agent",
) -> list[FunctionTool]:
    """remember / recall / forget as function tools on one scope. A mistake the model can fix comes back as
    the tool's text; an unreachable API or a refused key raises out of the run."""
    client = aclient or AsyncMemoryClient()
    scope = MemoryScope(agent_id, user_id, session_id, source)

    async def remember(content: str) -> str:
        try:
            return await arun(memory_ops.remember(scope, content), client)
        except InvalidTurn as exc:
            return f"error: {exc}"

    async def recall(query: str, k: int = 5) -> str:
        try:
            return await arun(memory_ops.recall(scope, query, k), client)
        except InvalidTurn as exc:
            return f"error: {exc}"

    async def forget(memory_id: str, reason: str) -> str:
        try:
            return await arun(memory_ops.forget(scope, memory_id, reason), client)
        except (InvalidTurn, NotFound) as exc:
            return f"error: {exc}"

    docs = {
        "remember": memory_ops.REMEMBER_DOC,
        "recall": memory_ops.RECALL_DOC,
        "forget": memory_ops.FORGET_DOC,
    }
    return [
        function_tool(
            fn, name_override=fn.__name__, description_override=docs[fn.__name__], failure_error_function=None
        )
        for fn in (remember, recall, forget)
    ]


# -- items <-> turns --------------------------------------------------------------------------------------


IN_CONTENT = "_in_content"  # which field of the item the turn's content holds (its text)
TEXT_LEN = "_text_len"  # on a part whose "text" is the next slice of the turn's content: how long it is
_TEXT_FIELD = {"message": "content", "function_call_output": "output"}


def _moved_text(value: Any) -> tuple[Any, list[str]]:
    """(the value less its text, the texts taken out in order). A string is all text; in a list of parts
    (text, images, files) each part's "text" is taken out and its length left in its place, so the parts
    come back whole and the text is stored once, as the turn's content (what review and recall read)."""
    if isinstance(value, str):
        return None, [value]
    if not isinstance(value, list):
        return value, []
    parts: list[Any] = []
    texts: list[str] = []
    for part in value:
        if isinstance(part, Mapping) and isinstance(part.get("text"), str) and TEXT_LEN not in part:
            parts.append({**{k: v for k, v in part.items() if k != "text"}, TEXT_LEN: len(part["text"])})
            texts.append(part["text"])
        else:
            parts.append(part)
    return parts, texts


def _put_text_back(kept: Any, content: str) -> Any:
    if kept is None:
        return content
    out: list[Any] = []
    at = 0
    for part in kept:
        if isinstance(part, Mapping) and isinstance(part.get(TEXT_LEN), int):
            n = part[TEXT_LEN]
            out.append({**{k: v for k, v in part.items() if k != TEXT_LEN}, "text": content[at : at + n]})
            at += n + 1  # the "\n" between two texts
        else:
            out.append(part)
    return out


def item_turn(item: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(role, content, the item less its text) of one session item. Pure. `turn_item` gives the item back
    exactly: every field, every part (an image beside the text), the text as it was (not stripped)."""
    kind = item.get("type", "message")
    rest = dict(item)
    field = _TEXT_FIELD.get(kind)
    if kind == "message" and item.get("role") in ("user", "assistant", "system", "developer"):
        role = "system" if item["role"] == "developer" else str(item["role"])
    elif kind == "message":
        role, field = "assistant", None
    elif kind == "function_call":
        role = "assistant"
    elif kind == "function_call_output":
        role = "tool"
    else:
        role = "assistant"
    if field is not None:
        kept, texts = _moved_text(item.get(field, ""))
        text = "\n".join(texts)
        if text.strip():
            rest[field] = kept
            rest[IN_CONTENT] = field
            return role, text, rest
    if kind == "function_call":
        return role, f"called {item.get('name')}({item.get('arguments', '')})", rest
    return role, json.dumps(item, ensure_ascii=False)[:2000], rest


def turn_item(content: str, kept: Mapping[str, Any]) -> dict[str, Any]:
    """The session item back from its turn's content and the rest kept in metadata. Pure."""
    item = dict(kept)
    field = item.pop(IN_CONTENT, None)
    if isinstance(field, str):
        item[field] = _put_text_back(item.get(field), content)
    # Items stored before IN_CONTENT: the output, or a message's string content, was the turn's content.
    elif item.pop("_output_in_content", False):
        item["output"] = content
    elif item.get("type", "message") == "message" and "content" not in item:
        item["content"] = content
    return item


@dataclass(frozen=True, slots=True)
class _Written:
    turn_id: str
    ts: datetime
    item: dict[str, Any]


class HindsightSession:
    """An Agents SDK `Session` whose items are the turns of Hindsight session `session_id` in the scope
    (agent_id, user_id)."""

    session_settings = None

    def __init__(
        self, session_id: str, *, agent_id: str, user_id: str, client: AsyncMemoryClient | None = None
    ) -> None:
        if (
            len(session_id) > MAX_ID_CHARS
            or not session_id.isprintable()
            or session_id.split() != [session_id]
        ):
            raise ValueError(f"session_id: one word of printable characters, at most {MAX_ID_CHARS} long")
        self.session_id = session_id
        self.agent_id, self.user_id = agent_id, user_id
        self.client = client or AsyncMemoryClient()
        self.entity = ENTITY_PREFIX + session_id
        self._digest = hashlib.sha256(f"{agent_id}\0{user_id}\0{session_id}".encode()).hexdigest()[:16]
        self._written: list[_Written] = []  # this session's writes the pipeline may not have stored yet

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        now = utcnow()
        for i, raw in enumerate(items):
            item = cast(dict[str, Any], raw)
            role, content, rest = item_turn(item)
            ts = now + timedelta(microseconds=i)
            turn_id = f"as:{self._digest}:{int(ts.timestamp() * 1_000_000):x}"
            meta = {"entity": self.entity, "attribute": turn_id, "item": rest}
            if len(json.dumps(meta, ensure_ascii=False).encode()) > MAX_ITEM_META_BYTES:
                raise ValueError(
                    f"session item of type {item.get('type', 'message')!r}: more than {MAX_ITEM_META_BYTES} "
                    "bytes besides its text, too large to keep (pass an image or file by URL or file_id)"
                )
            await self.client.write_memory(
                self.agent_id, self.user_id, self.session_id, role, content,
                turn_id=turn_id, ts=ts.isoformat(), metadata=meta,
            )  # fmt: skip
            self._written.append(_Written(turn_id, ts, item))

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items, oldest first: every item given, whatever the screen made of it (screening
        decides what recall returns, not what the conversation was); the newest `limit` with a limit."""
        if limit is not None and limit <= 0:
            return []
        rows = await self._rows(limit)
        return [cast(TResponseInputItem, item) for _, _, item in rows]

    async def pop_item(self) -> TResponseInputItem | None:
        """Forget the newest item and return it. Atomic: the forget reads the row's status under its lock,
        so of two concurrent pops only the one that found the item unforgotten returns it; the other
        takes the next item."""
        waited = 0.0
        while True:
            rows = await self._rows(1)
            if not rows:
                return None
            memory_id, _, item = rows[-1]
            if memory_id is None:  # our own newest write is on its way: forget it once it is stored
                if waited >= POP_WAIT_S:
                    raise TimeoutError(f"pop_item: the newest item was not stored within {POP_WAIT_S} s")
                await asyncio.sleep(0.1)
                waited += 0.1
                continue
            answer = await self.client.update_memory(
                memory_id, agent_id=self.agent_id, user_id=self.user_id, status="forgotten",
                reason="Agents SDK session pop_item", actor="agents-session",
            )  # fmt: skip
            if answer["before"].get("status") != "forgotten":
                return cast(TResponseInputItem, item)

    async def clear_session(self) -> None:
        """End the Hindsight session (review it now) and start the history afresh; delete nothing."""
        await self.client.end_session(self.agent_id, self.user_id, self.session_id)
        ts = utcnow()
        turn_id = f"as:{self._digest}:{int(ts.timestamp() * 1_000_000):x}"
        await self.client.write_memory(
            self.agent_id, self.user_id, self.session_id, "system",
            f"Conversation session {self.session_id} was cleared; what was said stays remembered.",
            turn_id=turn_id, ts=ts.isoformat(), metadata={"entity": self.entity, "attribute": CLEARED},
        )  # fmt: skip
        self._written = [_Written(turn_id, ts, {"_cleared": True})]

    async def _rows(self, limit: int | None) -> list[tuple[str | None, datetime, dict[str, Any]]]:
        """The session's items since it was last cleared, oldest first: (memory_id or None while only
        this process knows it, ts, item)."""
        stored: list[tuple[str | None, datetime, dict[str, Any]]] = []
        seen: set[str] = set()
        cleared_at: datetime | None = None
        offset: int | None = 0
        while offset is not None and cleared_at is None and (limit is None or len(stored) < limit):
            page = await self.client.latest_turns(
                agent_id=self.agent_id, user_id=self.user_id, entity=self.entity, held="all",
                limit=PAGE if limit is None else min(PAGE, limit + 1), offset=offset,
            )  # fmt: skip
            for row in page["turns"]:
                seen.add(row["turn_id"])
                ts = datetime.fromisoformat(row["ts"])
                if row["attribute"] == CLEARED:
                    cleared_at = ts
                    break
                kept = (row.get("metadata") or {}).get("item") or {}
                stored.append((row["memory_id"], ts, turn_item(row["content"], kept)))
            offset = page["next_offset"]
        horizon = utcnow() - timedelta(seconds=PENDING_S)
        self._written = [w for w in self._written if w.turn_id not in seen and w.ts > horizon]
        for w in self._written:
            if w.item.get("_cleared"):
                cleared_at = max(cleared_at or w.ts, w.ts)
        rows = stored + [(None, w.ts, w.item) for w in self._written if not w.item.get("_cleared")]
        rows = sorted((r for r in rows if cleared_at is None or r[1] > cleared_at), key=lambda r: r[1])
        return rows[-limit:] if limit is not None else rows
