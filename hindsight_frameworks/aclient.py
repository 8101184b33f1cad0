"""The asynchronous twin of the parts of `pipeline.client.MemoryClient` the framework adapters use.

Every call is one request over `httpx.AsyncClient` (no thread pool, no retries: an unreachable API is
one clear `RetryableError`, never a storm of attempts). Errors are the client's: NotFound (404),
Unauthenticated (401), Forbidden (403, naming the key and what it may not do), InvalidTurn (422) and
HindsightError for anything else. Writes go through `POST /v1/turns`, validated here first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import httpx

from pipeline.client import MemoryClient, memory_segment, require_query
from pipeline.core.config import get_settings
from pipeline.core.errors import (
    Forbidden,
    HindsightError,
    InvalidTurn,
    NotFound,
    RetryableError,
    Unauthenticated,
)
from pipeline.ingest.validation import parse_event, utcnow

_ERRORS: dict[int, type[HindsightError]] = {
    404: NotFound,
    401: Unauthenticated,
    403: Forbidden,
    422: InvalidTurn,
}


class AsyncMemoryClient:
    """`api_url` defaults to HINDSIGHT_API_URL (http://127.0.0.1:8700), `api_key` to HINDSIGHT_API_KEY."""

    def __init__(
        self, api_url: str | None = None, *, api_key: str | None = None, timeout_s: float = 30.0
    ) -> None:
        settings = get_settings()
        if api_key is None and settings.api_key is not None:
            api_key = settings.api_key.get_secret_value()
        self.api_url = api_url or settings.api_url
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout_s = timeout_s
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        """The connection pool of the running event loop: a pool cannot outlive its loop, so a client used
        from one `asyncio.run` and then another gets a fresh pool instead of "Event loop is closed"."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            self._http = httpx.AsyncClient(
                base_url=self.api_url, timeout=self._timeout_s, headers=self._headers
            )
            self._loop = loop
        return self._http

    @classmethod
    def like(cls, client: MemoryClient) -> AsyncMemoryClient:
        """One that reaches the same API with the same key as `client`."""
        auth = client.http.headers.get("Authorization")
        key = auth.removeprefix("Bearer ") if auth else None
        return cls(str(client.http.base_url), api_key=key, timeout_s=30.0)

    async def write_memory(
        self,
        agent_id: str,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        turn_id: str,
        ts: str | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Queue one turn (returns once Redis has it, as the sync client does); returns its turn_id."""
        fields: dict[str, Any] = {
            "kind": "turn",
            "turn_id": turn_id,
            "agent_id": agent_id,
            "user_id": user_id,
            "session_id": session_id,
            "role": role,
            "content": content,
            "ts": ts,
            "source": source,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        parse_event(fields, now=utcnow())  # the client's own validation, before anything is sent
        await self._request("POST", "/v1/turns", json=[{k: v for k, v in fields.items() if v is not None}])
        return turn_id

    async def end_session(self, agent_id: str, user_id: str, session_id: str) -> int:
        body = {"agent_id": agent_id, "user_id": user_id, "session_id": session_id}
        return int((await self._request("POST", "/v1/sessions/end", json=body))["slots_handed_over"])

    async def recall(self, query: str, *, agent_id: str, user_id: str, k: int = 10) -> list[dict[str, Any]]:
        """Ranked hits as the API returns them (the JSON of DESIGN §3)."""
        require_query(query)
        params = {"q": query, "agent_id": agent_id, "user_id": user_id, "k": k, "explain": "false"}
        hits: list[dict[str, Any]] = (await self._request("GET", "/v1/recall", params=params))["results"]
        return hits

    async def recall_keyed(
        self,
        query: str,
        *,
        agent_id: str,
        user_id: str,
        k: int = 10,
        entity_prefix: str | None = None,
        held: str = "none",
    ) -> dict[str, Any]:
        """GET /v1/turns/recall (see MemoryClient.recall_keyed)."""
        require_query(query)
        params: dict[str, Any] = {"q": query, "agent_id": agent_id, "user_id": user_id, "k": k, "held": held}
        if entity_prefix is not None:
            params["entity_prefix"] = entity_prefix
        return await self._request("GET", "/v1/turns/recall", params=params)

    async def latest_turns(self, *, agent_id: str, user_id: str, **filters: Any) -> dict[str, Any]:
        """GET /v1/turns/latest (see MemoryClient.latest_turns)."""
        params: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id}
        for name, value in filters.items():
            if value is not None and value != []:
                params["turn_id" if name == "turn_ids" else name] = value
        return await self._request("GET", "/v1/turns/latest", params=params)

    async def forget(
        self,
        memory_id: str,
        *,
        agent_id: str,
        user_id: str,
        reason: str,
        hard: bool = False,
        actor: str = "client",
    ) -> dict[str, Any]:
        body = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "hard": hard, "actor": actor}
        return await self._request("POST", f"/v1/memories/{memory_segment(memory_id)}/forget", json=body)

    async def update_memory(
        self,
        memory_id: str,
        *,
        agent_id: str,
        user_id: str,
        reason: str,
        status: str | None = None,
        actor: str = "client",
    ) -> dict[str, Any]:
        """PATCH /v1/memories/{id} (see MemoryClient.update_memory): the answer says the status `before`,
        read under the row's lock, so of two callers forgetting one memory exactly one sees it unforgotten."""
        body: dict[str, Any] = {"agent_id": agent_id, "user_id": user_id, "reason": reason, "actor": actor}
        if status is not None:
            body["status"] = status
        return await self._request("PATCH", f"/v1/memories/{memory_segment(memory_id)}", json=body)

    async def scopes(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = (await self._request("GET", "/v1/scopes"))["scopes"]
        return rows

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise RetryableError(f"API unreachable at {self.api_url}: {exc!r}") from exc
        status = response.status_code
        if status >= 400:
            try:
                detail = str(response.json().get("detail", response.text))
            except ValueError:
                detail = response.text[:500]
            raise _ERRORS.get(status, HindsightError)(f"{method} {path} failed ({status}): {detail}")
        result: dict[str, Any] = response.json()
        return result

    async def aclose(self) -> None:
        if self._http is not None and self._loop is asyncio.get_running_loop():
            await self._http.aclose()
        self._http = None
