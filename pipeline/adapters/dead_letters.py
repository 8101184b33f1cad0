"""Read-only view of the dead-letter stream: what was rejected, and why."""

from __future__ import annotations

from typing import Any

import redis

from pipeline.adapters.redis_stream import translate_errors

MAX_FIELD_CHARS = 2000  # a rejected entry may be huge (that may be why it was rejected)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def read_dead_letters(
    client: redis.Redis, stream: str, *, count: int, before: str | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Newest first; page on with `before` (the last id of the previous page). Also returns the total."""
    upper = f"({before}" if before else "+"
    with translate_errors():
        raw: Any = client.xrevrange(stream, max=upper, min="-", count=count)
        total = int(client.xlen(stream))
    letters = []
    for entry_id, fields in raw:
        decoded = {_text(k): _text(v)[:MAX_FIELD_CHARS] for k, v in fields.items()}
        letters.append(
            {
                "id": _text(entry_id),
                "reason": decoded.pop("reason", ""),
                "stream_id": decoded.pop("stream_id", None),
                "fields": decoded,
            }
        )
    return letters, total
