"""The door of MCP over streamable HTTP: every remote client brings its own API key.

Over stdio the client is the process that launched the server, so the server's own key
(HINDSIGHT_API_KEY) is the caller's. Over HTTP anyone who reaches the port is a client: lending them the
server's key (an admin key would make every caller an operator) is exactly the escalation to avoid. So
this ASGI layer refuses, with 401 and a message that says what to send:
- an Authorization header that is not `Bearer <key>` (Basic, Token, an empty value);
- a request without `Authorization: Bearer` or `X-API-Key` when keys are required.
What a well-formed key may do is still decided by the HTTP API the tools call (pipeline/mcp/gateway.py).
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

MISSING = (
    "this MCP server requires each client's own API key: send 'Authorization: Bearer <key>' or "
    "'X-API-Key: <key>' (operators create keys with `hindsight keys create`); the server's own key "
    "is used over stdio only"
)
MALFORMED = (
    "Authorization header: expected 'Bearer <API key>' (or send the key as 'X-API-Key: <key>'); "
    "other schemes such as Basic or Token are not accepted"
)


def key_problem(headers: dict[str, str], *, keys_required: bool) -> str | None:
    """Why these request headers are refused, or None when they may go on to the tools."""
    auth = headers.get("authorization")
    if auth is not None:
        scheme, _, value = auth.strip().partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return MALFORMED
        return None
    if (headers.get("x-api-key") or "").strip():
        return None
    return MISSING if keys_required else None


class RequireClientKey:
    """ASGI middleware applying `key_problem` to every HTTP request of the MCP app."""

    def __init__(self, app: ASGIApp, *, keys_required: bool) -> None:
        self.app = app
        self.keys_required = keys_required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            problem = key_problem(headers, keys_required=self.keys_required)
            if problem is not None:
                refusal = JSONResponse(
                    {"detail": problem},
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="hindsight"'},
                )
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)
