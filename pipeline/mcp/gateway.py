"""How the MCP server reaches the stack: the HTTP API, like the CLI (HINDSIGHT_API_URL).

Why not in-process: in embedded mode only one process may open the in-process Qdrant (DESIGN §4), and
that process is the API; an MCP server launched by a desktop client on demand must not compete for it.
Going through the API also keeps one place that validates, scopes and audits every change.
"""

from __future__ import annotations

from typing import Any

import httpx

from pipeline.core.errors import HindsightError, InvalidTurn, NotFound, RetryableError


class ApiGateway:
    def __init__(self, base_url: str, *, api_key: str | None = None, timeout_s: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=timeout_s, headers=headers)

    def call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
        api_key: str | None = None,
    ) -> dict[str, Any]:
        """One API call; raises InvalidTurn (4xx input), NotFound, RetryableError (down) or HindsightError.
        `api_key` (a remote MCP client's own) replaces the gateway's key for this call."""
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        try:
            response = self.http.request(method, path, params=clean, json=body, headers=headers)
        except httpx.TransportError as exc:
            raise RetryableError(f"the Hindsight API at {self.base_url} is unreachable: {exc}") from exc
        if response.status_code == 404:
            raise NotFound(_detail(response))
        if response.status_code in (400, 413, 422):
            raise InvalidTurn(_detail(response))
        if response.status_code in (401, 403):
            raise HindsightError(f"access denied ({response.status_code}): {_detail(response)}")
        if response.status_code >= 500:
            raise RetryableError(f"the Hindsight API failed ({response.status_code}): {_detail(response)}")
        if response.status_code >= 400:
            raise HindsightError(f"{method} {path}: {response.status_code} {_detail(response)}")
        result: dict[str, Any] = response.json()
        return result

    def close(self) -> None:
        self.http.close()


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))[:1000]
    except ValueError:
        return response.text[:1000]
