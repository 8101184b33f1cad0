"""The ingress stream and its dead-letter stream (Redis Streams). Vendor errors become QueueUnavailable."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import redis

from pipeline.core.errors import QueueUnavailable, Unauthenticated

Entry = tuple[str, Mapping[bytes | str, bytes | str]]


@contextmanager
def translate_errors() -> Iterator[None]:
    try:
        yield
    except redis.AuthenticationError as exc:
        # Not retryable: Redis wants a password this process was not given. With API keys required the
        # embedded Redis has one, and a client is meant to come through the API with its key instead.
        raise Unauthenticated(
            f"Redis refused this connection ({exc}): it requires a password. Clients send turns and "
            "working memory through the API with an API key (MemoryClient(api_key=...) or "
            "HINDSIGHT_API_KEY); roles need HINDSIGHT_REDIS_URL with the password"
        ) from exc
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise QueueUnavailable(f"Redis unavailable: {exc}") from exc


def connect(url: str) -> redis.Redis:
    # health_check_interval: a connection left idle across a Redis restart is checked before reuse.
    return redis.Redis.from_url(url, health_check_interval=30, socket_keepalive=True)


@dataclass
class TurnStream:
    client: redis.Redis
    stream: str
    dead_stream: str

    def add(self, fields: Mapping[str, str]) -> str:
        with translate_errors():
            return _text(self.client.xadd(self.stream, dict(fields)))  # type: ignore[arg-type]

    def add_many(self, entries: Sequence[Mapping[str, str]]) -> list[str]:
        with translate_errors():
            pipe = self.client.pipeline(transaction=False)
            for fields in entries:
                pipe.xadd(self.stream, dict(fields))  # type: ignore[arg-type]
            return [_text(i) for i in pipe.execute()]

    def ensure_group(self, group: str) -> None:
        with translate_errors():
            try:
                self.client.xgroup_create(self.stream, group, id="0", mkstream=True)
            except redis.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

    def read(
        self, group: str, consumer: str, *, count: int, block_ms: int, pending: bool = False
    ) -> list[Entry]:
        """New entries (or, with `pending`, this consumer's delivered-but-unacked ones)."""
        with translate_errors():
            reply: Any = self.client.xreadgroup(
                group,
                consumer,
                {self.stream: "0" if pending else ">"},
                count=count,
                block=None if pending else block_ms,
            )
        return _entries(reply)

    def autoclaim(self, group: str, consumer: str, *, min_idle_ms: int, count: int) -> list[Entry]:
        """Take over entries another (presumably dead) consumer has held for `min_idle_ms`."""
        with translate_errors():
            reply: Any = self.client.xautoclaim(self.stream, group, consumer, min_idle_ms, "0-0", count=count)
        # reply: [next_start, [(id, fields) ...], deleted_ids]; deleted entries come back with no fields.
        return [(_text(i), f) for i, f in reply[1] if f]

    def ack(self, group: str, ids: Sequence[str]) -> None:
        if ids:
            with translate_errors():
                self.client.xack(self.stream, group, *ids)

    def dead_letter(self, entry_id: str, fields: Mapping[bytes | str, bytes | str], reason: str) -> None:
        """Keep a rejected entry with why it was rejected; bytes are kept as they came."""
        record: dict[bytes | str, bytes | str] = {**dict(fields), "reason": reason, "stream_id": entry_id}
        with translate_errors():
            self.client.xadd(self.dead_stream, record)  # type: ignore[arg-type]

    def trim_acknowledged(self, group: str) -> int:
        """Drop entries every consumer of `group` has acknowledged (older than the oldest pending one)."""
        with translate_errors():
            groups: Any = self.client.xinfo_groups(self.stream)
            info = next((g for g in groups if _text(g["name"]) == group), None)
            if info is None:
                return 0
            floor = _text(info["last-delivered-id"])
            pending: Any = self.client.xpending(self.stream, group)
            if pending and pending.get("pending"):
                floor = min(floor, _text(pending["min"]), key=_id_key)
            return int(self.client.xtrim(self.stream, minid=floor, approximate=False))

    def stats(self, group: str) -> dict[str, int]:
        with translate_errors():
            length = int(self.client.xlen(self.stream))
            dead = int(self.client.xlen(self.dead_stream))
            lag = pending = 0
            try:
                groups: Any = self.client.xinfo_groups(self.stream)
            except redis.ResponseError:
                groups = []
            for g in groups:
                if _text(g["name"]) == group:
                    pending = int(g.get("pending") or 0)
                    lag = int(g.get("lag") or 0)
        return {"length": length, "pending": pending, "lag": lag, "dead_letters": dead}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _entries(reply: Any) -> list[Entry]:
    out: list[Entry] = []
    for _stream, items in reply or []:
        for entry_id, fields in items:
            if fields is not None:
                out.append((_text(entry_id), fields))
    return out
