"""The Python client agent services use (DESIGN §3).

`write_memory` and `end_session` validate, then XADD straight to the Redis stream: they return as
soon as Redis has the turn and never wait for review work. Session working memory is read and written
in Redis directly too (it changes every turn). `recall`, `reflect` and the memory commands ask the
HTTP API.

With an API key (`api_key=` or HINDSIGHT_API_KEY) every call goes through the HTTP API instead, writes
included: access rules are enforced there, and a service holding a key need not (and should not) be
able to reach Redis, which is not guarded by keys.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from pipeline.adapters.redis_stream import TurnStream, connect
from pipeline.adapters.working_memory_redis import RedisWorkingMemory
from pipeline.core.config import Settings, get_settings
from pipeline.core.errors import (
    Forbidden,
    HindsightError,
    InvalidTurn,
    NotFound,
    RetryableError,
    Unauthenticated,
)
from pipeline.core.models import EPISODE, SEMANTIC, Hit
from pipeline.ingest import session_end
from pipeline.ingest.validation import encode_event, parse_event, parse_ts, utcnow
from pipeline.ingest.working_memory import WorkingMemory, parse_change


class Recall(list[Hit]):
    """Recall hits (a list, as before) plus the session's working memory when recall named a session."""

    working_memory: WorkingMemory | None = None


class MemoryClient:
    def __init__(self, settings: Settings | None = None, *, api_key: str | None = None) -> None:
        self.settings = settings or get_settings()
        self.stream = TurnStream(
            connect(self.settings.broker_url), self.settings.stream_turns, self.settings.stream_dead
        )
        self.working = RedisWorkingMemory(self.stream.client, self.settings.working_memory)
        if api_key is None and self.settings.api_key is not None:
            api_key = self.settings.api_key.get_secret_value()
        self.via_api = api_key is not None  # redis connects lazily: never touched in this mode
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
            "metadata": _metadata(metadata),
        }
        event = parse_event(fields, now=utcnow())
        if self.via_api:
            self._send("POST", "/v1/turns", [{k: v for k, v in fields.items() if v is not None}])
        else:
            self.stream.add(encode_event(event))
        return str(fields["turn_id"])

    def end_session(self, agent_id: str, user_id: str, session_id: str) -> int:
        """End a session: its confirmed working-memory slots go to the light review as facts.
        Returns how many slots were handed over."""
        if self.via_api:
            body = {"agent_id": agent_id, "user_id": user_id, "session_id": session_id}
            return int(self._send("POST", "/v1/sessions/end", body)["slots_handed_over"])
        return session_end.end_session(
            self.stream, self.working, agent_id=agent_id, user_id=user_id, session_id=session_id, now=utcnow()
        )

    def get_working_memory(self, agent_id: str, user_id: str, session_id: str) -> WorkingMemory:
        """The session's working memory; an empty one (expires_in_s None) if none is stored or it expired."""
        _require_ids(agent_id=agent_id, user_id=user_id, session_id=session_id)
        if self.via_api:
            params = {"agent_id": agent_id, "user_id": user_id}
            return _working_memory(self._get(_wm_path(session_id), params))
        return self.working.get(agent_id, user_id, session_id)

    def set_working_memory(
        self,
        agent_id: str,
        user_id: str,
        session_id: str,
        *,
        task: str | None = None,
        slots: Mapping[str, str | None] | None = None,
        pending_questions: list[str] | None = None,
        replace: bool = False,
    ) -> WorkingMemory:
        """Merge into the session's working memory (a None slot value removes that slot, task "" clears the
        task, pending_questions replaces the list); `replace` starts from empty. Restarts the TTL."""
        _require_ids(agent_id=agent_id, user_id=user_id, session_id=session_id)
        # Validated here through either door: the API would refuse the same, and httpx or Redis would
        # raise a raw UnicodeEncodeError on a lone surrogate before anything is sent.
        change = parse_change(
            task=task,
            slots=slots,
            pending_questions=pending_questions,
            replace=replace,
            limits=self.working.limits,
        )
        if self.via_api:
            body: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "replace": replace}
            if task is not None:
                body["task"] = task
            if slots is not None:
                body["slots"] = dict(slots)
            if pending_questions is not None:
                body["pending_questions"] = pending_questions
            return _working_memory(self._send("PATCH", _wm_path(session_id), body))
        return self.working.change(agent_id, user_id, session_id, change, now=utcnow())

    def clear_working_memory(self, agent_id: str, user_id: str, session_id: str) -> bool:
        _require_ids(agent_id=agent_id, user_id=user_id, session_id=session_id)
        if self.via_api:
            params = {"agent_id": agent_id, "user_id": user_id}
            return bool(self._request("DELETE", _wm_path(session_id), params=params)["deleted"])
        return self.working.delete(agent_id, user_id, session_id)

    def recall(
        self,
        query: str,
        *,
        agent_id: str,
        user_id: str,
        k: int = 10,
        as_of: datetime | str | None = None,
        session_id: str | None = None,
        include_cold: bool = False,
        history: bool = False,
    ) -> Recall:
        """Ranked hits; with `session_id`, `.working_memory` holds that session's working memory;
        `history` keeps superseded versions (ranked below what replaced them)."""
        require_query(query)
        params: dict[str, Any] = {"q": query, "agent_id": agent_id, "user_id": user_id, "k": k}
        if as_of is not None:
            params["as_of"] = (
                as_of if isinstance(as_of, datetime) else parse_ts(as_of, field_name="as_of")
            ).isoformat()
        if session_id is not None:
            params["session_id"] = session_id
        if include_cold:
            params["include_cold"] = "true"
        if history:
            params["history"] = "true"
        body = self._get("/v1/recall", params)
        hits = Recall(_hit(r) for r in body["results"])
        if body.get("working_memory") is not None:
            hits.working_memory = _working_memory(body["working_memory"])
        return hits

    def reflect(
        self,
        goal: str,
        *,
        agent_id: str,
        user_id: str,
        session_id: str | None = None,
        k: int = 10,
        as_of: datetime | str | None = None,
    ) -> dict[str, Any]:
        """Review what is remembered against a goal: the LLM's structured review when one is configured,
        always the evidence (current facts, superseded versions, related memories)."""
        body: dict[str, Any] = {"goal": goal, "agent_id": agent_id, "user_id": user_id, "k": k}
        if session_id is not None:
            body["session_id"] = session_id
        if as_of is not None:
            body["as_of"] = as_of.isoformat() if isinstance(as_of, datetime) else as_of
        return self._send("POST", "/v1/reflect", body)

    def list_memories(
        self,
        *,
        agent_id: str,
        user_id: str,
        kind: str | None = None,
        status: str | None = None,
        session_id: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        """One page of a scope's memories, newest first: {"memories": [...], "next_offset": n | None}."""
        params: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "limit": limit, "offset": offset}
        for name, value in (("kind", kind), ("status", status), ("session_id", session_id)):
            if value is not None:
                params[name] = value
        return self._get("/v1/memories", params)

    def latest_turns(
        self,
        *,
        agent_id: str,
        user_id: str,
        entity: str | None = None,
        entity_prefix: str | None = None,
        attribute: str | None = None,
        turn_ids: list[str] | None = None,
        limit: int = 50,
        offset: int = 0,
        held: str = "none",
    ) -> dict[str, Any]:
        """The newest turn of each key (metadata entity + attribute) of a scope, most recent first:
        {"turns": [{"turn_id", "memory_id", "content", "metadata", "ts", "first_ts", "versions", ...}],
        "next_offset": n | None}. `turn_ids`: the keys those turns carry. `held`: which turns the screen
        held count: "none" (as recall), "pending" (also those awaiting review), "all" (every turn said)."""
        params: dict[str, Any] = {
            "agent_id": agent_id,
            "user_id": user_id,
            "limit": limit,
            "offset": offset,
            "held": held,
        }
        for name, value in (("entity", entity), ("entity_prefix", entity_prefix), ("attribute", attribute)):
            if value is not None:
                params[name] = value
        if turn_ids:
            params["turn_id"] = turn_ids
        return self._get("/v1/turns/latest", params)

    def recall_keyed(
        self,
        query: str,
        *,
        agent_id: str,
        user_id: str,
        k: int = 10,
        entity_prefix: str | None = None,
        held: str = "none",
    ) -> dict[str, Any]:
        """A recall answered with the keyed turns its hits are versions of, in one request:
        {"results": [{"id", "score", "source_turn_ids"}], "turns": [as latest_turns gives them]}.
        `held`: as for latest_turns."""
        require_query(query)
        params: dict[str, Any] = {"q": query, "agent_id": agent_id, "user_id": user_id, "k": k, "held": held}
        if entity_prefix is not None:
            params["entity_prefix"] = entity_prefix
        return self._get("/v1/turns/recall", params)

    def scopes(self) -> list[dict[str, Any]]:
        """Every (agent_id, user_id) with memories this client may read, most recently active first."""
        rows: list[dict[str, Any]] = self._get("/v1/scopes", {})["scopes"]
        return rows

    def tool_insights(
        self,
        *,
        agent_id: str,
        user_id: str,
        task: str | None = None,
        limit: int = 50,
        scope: str = "agent",
    ) -> dict[str, Any]:
        """What review learnt about the agent's tools: {"insights": [{"text", "tool", "arg_keys", "task",
        "success_rate", "calls", "ok", "median_latency_ms", "window", "source_turn_ids", "scope", "users",
        "user_calls", ...}]}, per task, the best success rate first (issue 30). `scope="agent"` (default):
        the agent's insights over all its users' calls, whose `source_turn_ids` are this user's calls
        only; `scope="user"`: this scope's own calls."""
        params: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "limit": limit, "scope": scope}
        if task is not None:
            params["task"] = task
        return self._get("/v1/tool-insights", params)

    def prompt(
        self,
        *,
        agent_id: str,
        user_id: str,
        task: str | None = None,
        budget_tokens: int = 400,
        scope: str = "agent",
    ) -> dict[str, Any]:
        """A block for the agent's system prompt: {"prompt": text, "tokens": estimated (characters / 4),
        ...}: current facts, preferences and the tool insights of `task` (the agent's across its users,
        or with `scope="user"` this scope's own), within `budget_tokens`."""
        params: dict[str, Any] = {
            "agent_id": agent_id,
            "user_id": user_id,
            "budget_tokens": budget_tokens,
            "scope": scope,
        }
        if task is not None:
            params["task"] = task
        return self._get("/v1/prompt", params)

    def _get(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        return self._request("GET", path, params=params)

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
        return self._send("POST", f"/v1/memories/{memory_segment(memory_id)}/forget", body)

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
        return self._send("PATCH", f"/v1/memories/{memory_segment(memory_id)}", body)

    def quarantined(
        self, *, agent_id: str | None = None, user_id: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Turns the review quarantined as instructions to the agent, with the detector's reason and score."""
        params: dict[str, Any] = {"limit": limit}
        if agent_id is not None:
            params["agent_id"] = agent_id
        if user_id is not None:
            params["user_id"] = user_id
        rows: list[dict[str, Any]] = self._get("/v1/quarantine", params)["quarantined"]
        return rows

    def release_quarantined(
        self, memory_id: str, *, agent_id: str, user_id: str, reason: str, actor: str = "client"
    ) -> dict[str, Any]:
        """Vouch for a quarantined turn: it is reviewed again without the detector. Audited."""
        body = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "actor": actor}
        return self._send(
            "POST", f"/v1/quarantine/{memory_segment(memory_id, kinds=(EPISODE,))}/release", body
        )

    def reject_quarantined(
        self, memory_id: str, *, agent_id: str, user_id: str, reason: str, actor: str = "client"
    ) -> dict[str, Any]:
        """Confirm a quarantine: the turn stays as evidence and is never recalled. Audited."""
        body = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "actor": actor}
        return self._send(
            "POST", f"/v1/quarantine/{memory_segment(memory_id, kinds=(EPISODE,))}/reject", body
        )

    def supersessions(
        self, *, agent_id: str, user_id: str, episode_id: int | None = None, include_undone: bool = True
    ) -> list[dict[str, Any]]:
        """Which statement superseded which in this scope (issue 39), newest first, with why; undone ones too."""
        params: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "include_undone": include_undone}
        if episode_id is not None:
            params["episode_id"] = episode_id
        rows: list[dict[str, Any]] = self._get("/v1/supersessions", params)["supersessions"]
        return rows

    def undo_supersession(
        self, link_id: int, *, agent_id: str, user_id: str, reason: str, actor: str = "client"
    ) -> dict[str, Any]:
        """Undo a wrong supersession: the older statement holds again, and review never re-links the pair."""
        body = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "actor": actor}
        return self._send("POST", f"/v1/supersessions/{link_segment(link_id)}/undo", body)

    def _send(self, method: str, path: str, body: Any) -> dict[str, Any]:
        return self._request(method, path, json=body)

    def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """One API call; raises NotFound, Unauthenticated (401), Forbidden (403), InvalidTurn (422),
        RetryableError (unreachable) or HindsightError."""
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise RetryableError(f"API unreachable at {self.settings.api_url}: {exc}") from exc
        status = response.status_code
        failed = f"{method} {path} failed ({status}): {_message(response)}"
        error = {404: NotFound, 401: Unauthenticated, 403: Forbidden}.get(status)
        if error is not None:
            raise error(failed)
        if status == 422:
            raise InvalidTurn(failed)
        if status >= 400:
            raise HindsightError(failed)
        result: dict[str, Any] = response.json()
        return result

    def close(self) -> None:
        self.http.close()
        self.stream.client.close()


def _metadata(metadata: object) -> dict[str, Any] | None:
    """The metadata argument as a dict; anything but a mapping is the caller's error, said as such (dict()
    of a list or a JSON string raised TypeError or ValueError)."""
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise InvalidTurn(
            f"metadata: must be a mapping (a dict of JSON values), got {type(metadata).__name__}"
        )
    return dict(metadata)


def _wm_path(session_id: str) -> str:
    return f"/v1/sessions/{quote(session_id, safe='')}/working-memory"


# A memory id as the API gives it (recall's "id", a keyed turn's "memory_id"): its kind, a colon, its number.
_MEMORY_ID = re.compile(r"(episode|semantic):[0-9]{1,18}")


def memory_segment(memory_id: object, *, kinds: tuple[str, ...] = (EPISODE, SEMANTIC)) -> str:
    """`memory_id` as one URL path segment, refused unless it is a memory id of one of `kinds`. An id goes
    into a path: unchecked, "../quarantine/episode:1/release?" sent a forget to the release route, so a
    tool an LLM drives could do what its name does not say. Checked, and escaped besides."""
    if (
        not isinstance(memory_id, str)
        or _MEMORY_ID.fullmatch(memory_id) is None
        or memory_id.partition(":")[0] not in kinds
    ):
        shown = repr(memory_id)[:80]
        expected = " or ".join(f"'{k}:<n>'" for k in kinds)
        raise InvalidTurn(
            f"memory_id: expected {expected} (e.g. '{kinds[0]}:12', as recall shows it), got {shown}"
        )
    return quote(memory_id, safe="")


def link_segment(link_id: object) -> str:
    """A supersession link id (a positive integer) as one URL path segment; anything else refused."""
    if not isinstance(link_id, int) or isinstance(link_id, bool) or link_id < 1:
        raise InvalidTurn(f"link_id: expected a positive integer, got {repr(link_id)[:80]}")
    return str(link_id)


def require_query(query: object) -> str:
    """A recall query: a non-empty string (None or a list from a tool call is the caller's error, said so)."""
    if not isinstance(query, str):
        raise InvalidTurn(f"query: must be a string, got {type(query).__name__}")
    if not query.strip():
        raise InvalidTurn("query: empty")
    return query


def _require_ids(**ids: str) -> None:
    for name, value in ids.items():
        if not isinstance(value, str) or not value.strip():
            raise InvalidTurn(f"{name}: missing")


def _working_memory(r: Mapping[str, Any]) -> WorkingMemory:
    return WorkingMemory(
        task=r.get("task"),
        slots=dict(r.get("slots") or {}),
        pending_questions=tuple(r.get("pending_questions") or ()),
        updated_at=datetime.fromisoformat(r["updated_at"]) if r.get("updated_at") else None,
        expires_in_s=r.get("expires_in_s"),
    )


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
        reviewed=bool(r.get("reviewed", True)),
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


def end_session(agent_id: str, user_id: str, session_id: str) -> int:
    return _client().end_session(agent_id, user_id, session_id)


def recall(
    query: str,
    *,
    agent_id: str,
    user_id: str,
    k: int = 10,
    as_of: datetime | str | None = None,
    session_id: str | None = None,
) -> Recall:
    return _client().recall(
        query, agent_id=agent_id, user_id=user_id, k=k, as_of=as_of, session_id=session_id
    )
