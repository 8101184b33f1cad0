"""Session working memory in Redis: one hash per session, expiring `ttl_s` after its last change.

Fields: `task`, `questions` (a JSON list), `updated_at`, and `slot:<name>` per confirmed slot. A change
is one MULTI (HSET/HDEL/EXPIRE), so concurrent changes to different slots never overwrite each other
and no read-modify-write race exists.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import redis

from pipeline.adapters.redis_stream import translate_errors
from pipeline.core.config import WorkingMemorySettings
from pipeline.ingest.working_memory import Change, Limits, WorkingMemory

PREFIX = "hindsight:wm:"
_SLOT = "slot:"


def key(agent_id: str, user_id: str, session_id: str) -> str:
    # JSON keeps the three ids apart whatever characters they contain.
    return PREFIX + json.dumps([agent_id, user_id, session_id], ensure_ascii=False, separators=(",", ":"))


class RedisWorkingMemory:
    def __init__(self, client: redis.Redis, settings: WorkingMemorySettings) -> None:
        self.client = client
        self.ttl_s = settings.ttl_s
        self.limits = Limits(settings.max_slots, settings.max_questions, settings.max_chars)

    def get(self, agent_id: str, user_id: str, session_id: str) -> WorkingMemory:
        """The stored state, or an empty one (expires_in_s None) when nothing is stored or it expired."""
        k = key(agent_id, user_id, session_id)
        with translate_errors():
            pipe = self.client.pipeline(transaction=True)
            pipe.hgetall(k)
            pipe.ttl(k)
            raw, ttl = pipe.execute()
        return _decode(raw, ttl)

    def change(
        self, agent_id: str, user_id: str, session_id: str, change: Change, *, now: datetime
    ) -> WorkingMemory:
        """Apply a validated change and restart the TTL; returns the state after it."""
        k = key(agent_id, user_id, session_id)
        mapping: dict[str, str] = {"updated_at": now.isoformat()}
        if change.task is not None:
            mapping["task"] = change.task
        if change.pending_questions is not None:
            mapping["questions"] = json.dumps(list(change.pending_questions), ensure_ascii=False)
        mapping |= {_SLOT + name: value for name, value in change.set_slots.items()}
        drop = [_SLOT + name for name in change.drop_slots] + (["task"] if change.clear_task else [])
        with translate_errors():
            pipe = self.client.pipeline(transaction=True)
            if change.replace:
                pipe.delete(k)
            elif drop:
                pipe.hdel(k, *drop)
            pipe.hset(k, mapping=mapping)  # type: ignore[arg-type]
            pipe.expire(k, self.ttl_s)
            pipe.hgetall(k)
            pipe.ttl(k)
            *_, raw, ttl = pipe.execute()
        return _decode(raw, ttl)

    def delete(self, agent_id: str, user_id: str, session_id: str) -> bool:
        with translate_errors():
            return bool(self.client.delete(key(agent_id, user_id, session_id)))


def _decode(raw: dict[Any, Any], ttl: int) -> WorkingMemory:
    if not raw:
        return WorkingMemory()
    fields = {_str(k): _str(v) for k, v in raw.items()}
    questions = json.loads(fields["questions"]) if "questions" in fields else []
    updated = fields.get("updated_at")
    return WorkingMemory(
        task=fields.get("task"),
        slots={k[len(_SLOT) :]: v for k, v in fields.items() if k.startswith(_SLOT)},
        pending_questions=tuple(str(q) for q in questions),
        updated_at=datetime.fromisoformat(updated) if updated else None,
        expires_in_s=ttl if ttl >= 0 else None,
    )


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
