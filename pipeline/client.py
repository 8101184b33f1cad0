"""The Python client agent services use (DESIGN §3).

`write_memory` and `end_session` validate, then XADD straight to the Redis stream: they return as
soon as Redis has the turn and never wait for review work. `recall` asks the HTTP API.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import httpx

from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.config import Settings, get_settings
from pipeline.errors import HindsightError, InvalidTurn, NotFound, RetryableError
from pipeline.models import Hit
from pipeline.validation import encode_event, parse_event, parse_ts, utcnow


class MemoryClient:
    def __init__(self, settings: Settings | None = None, *, api_key: str | None = None) -> None:
        self.settings = settings or get_settings()
        self.stream = TurnStream(
            connect(self.settings.broker_url), self.settings.stream_turns, self.settings.stream_dead
        )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=self.settings.api_url, timeout=30.0, headers=headers)

    def write_memory(
        self,
        agent_id: str,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        ts: datetime | str | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> str:
        """Push one turn; returns its turn_id (made here when not given). Raises InvalidTurn on bad input."""
        fields: dict[str, Any] = {
            "kind": "turn",
            "turn_id": turn_id or uuid.uuid4().hex,
            "agent_id": agent_id,
            "user_id": user_id,
            "session_id": session_id,
            "role": role,
            "content": content,
            "ts": ts.isoformat() if isinstance(ts, datetime) else ts,
            "source": source,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        event = parse_event(fields, now=utcnow())
        self.stream.add(encode_event(event))
        return str(fields["turn_id"])

    def end_session(self, agent_id: str, user_id: str, session_id: str) -> None:
        event = parse_event(
            {"kind": "session_end", "agent_id": agent_id, "user_id": user_id, "session_id": session_id},
            now=utcnow(),
        )
        self.stream.add(encode_event(event))

    def recall(
        self, query: str, *, agent_id: str, user_id: str, k: int = 10, as_of: datetime | str | None = None
    ) -> list[Hit]:
        if not query.strip():
            raise InvalidTurn("query: empty")
        params: dict[str, Any] = {"q": query, "agent_id": agent_id, "user_id": user_id, "k": k}
        if as_of is not None:
            params["as_of"] = (
                as_of if isinstance(as_of, datetime) else parse_ts(as_of, field_name="as_of")
            ).isoformat()
        try:
            response = self.http.get("/v1/recall", params=params)
        except httpx.TransportError as exc:
            raise RetryableError(f"API unreachable at {self.settings.api_url}: {exc}") from exc
        if response.status_code >= 400:
            raise HindsightError(f"recall failed ({response.status_code}): {_message(response)}")
        return [_hit(r) for r in response.json()["results"]]

    def forget(
        self,
        memory_id: str,
        *,
        agent_id: str,
        user_id: str,
        reason: str,
        hard: bool = False,
        actor: str = "client",
    ) -> dict[str, Any]:
        """Soft forget (out of recall, reversible) or hard forget (purged everywhere: the right to erasure)."""
        body = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "hard": hard, "actor": actor}
        return self._send("POST", f"/v1/memories/{memory_id}/forget", body)

    def update_memory(
        self,
        memory_id: str,
        *,
        agent_id: str,
        user_id: str,
        reason: str,
        weight: float | None = None,
        tags: list[str] | None = None,
        core: bool | None = None,
        status: str | None = None,
        actor: str = "client",
    ) -> dict[str, Any]:
        """Change weight, tags, the core flag or status; status "kept" undoes a soft forget."""
        body: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "actor": actor}
        for key, value in (("weight", weight), ("tags", tags), ("core", core), ("status", status)):
            if value is not None:
                body[key] = value
        return self._send("PATCH", f"/v1/memories/{memory_id}", body)

    def _send(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self.http.request(method, path, json=body)
        except httpx.TransportError as exc:
            raise RetryableError(f"API unreachable at {self.settings.api_url}: {exc}") from exc
        if response.status_code == 404:
            raise NotFound(_message(response))
        if response.status_code >= 400:
            raise HindsightError(f"{method} {path} failed ({response.status_code}): {_message(response)}")
        result: dict[str, Any] = response.json()
        return result

    def close(self) -> None:
        self.http.close()
        self.stream.client.close()


def _message(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text[:500]


def _hit(r: Mapping[str, Any]) -> Hit:
    return Hit(
        id=r["id"],
        kind=r["kind"],
        text=r["text"],
        score=float(r["score"]),
        weight=float(r["weight"]),
        valid_from=datetime.fromisoformat(r["valid_from"]) if r.get("valid_from") else None,
        valid_to=datetime.fromisoformat(r["valid_to"]) if r.get("valid_to") else None,
        source_turn_ids=tuple(r.get("source_turn_ids") or ()),
        session_id=r.get("session_id"),
        cold=bool(r.get("cold", False)),
        event_time=datetime.fromisoformat(r["event_time"]) if r.get("event_time") else None,
        superseded=bool(r.get("superseded", False)),
        explain=r.get("explain"),
    )


_default: MemoryClient | None = None


def _client() -> MemoryClient:
    global _default
    if _default is None:
        _default = MemoryClient()
    return _default


def write_memory(
    agent_id: str,
    user_id: str,
    session_id: str,
    role: str,
    content: str,
    *,
    ts: datetime | str | None = None,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    turn_id: str | None = None,
) -> str:
    return _client().write_memory(
        agent_id, user_id, session_id, role, content, ts=ts, source=source, metadata=metadata, turn_id=turn_id
    )


def end_session(agent_id: str, user_id: str, session_id: str) -> None:
    _client().end_session(agent_id, user_id, session_id)


def recall(
    query: str, *, agent_id: str, user_id: str, k: int = 10, as_of: datetime | str | None = None
) -> list[Hit]:
    return _client().recall(query, agent_id=agent_id, user_id=user_id, k=k, as_of=as_of)
