"""`hindsight mcp`: serve the tools over stdio (a desktop client launches it) or streamable HTTP."""

from __future__ import annotations

import sys
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer

from pipeline.core.authz import auth_required
from pipeline.core.config import Settings
from pipeline.mcp.gateway import ApiGateway
from pipeline.mcp.http_auth import RequireClientKey
from pipeline.mcp.server import build_server


def run_mcp(settings: Settings, *, transport: Literal["stdio", "http"], host: str, port: int) -> None:
    # Over stdio the server speaks for whoever holds its key (HINDSIGHT_API_KEY): the launching process.
    # Over HTTP the server's key is never lent to a remote client: each sends its own (http_auth.py).
    # Either way the API enforces what the key may do.
    key = settings.api_key.get_secret_value() if settings.api_key else None
    gateway = ApiGateway(settings.api_url, api_key=key if transport == "stdio" else None)
    server = build_server(gateway)
    try:
        if transport == "stdio":
            server.run("stdio")  # stdout is the protocol: logs go to stderr (pipeline/core/logging.py)
        else:
            # A server given a key belongs to a deployment that uses keys, whatever it binds to.
            keys_required = key is not None or auth_required(settings.auth.mode, host)
            anyio.run(_serve_http, server, host, port, keys_required)
    finally:
        gateway.close()


async def _serve_http(server: MCPServer[Any], host: str, port: int, keys_required: bool) -> None:
    """Uvicorn on host:port (0 = any free port), announcing the bound address on stderr once listening."""
    import uvicorn

    app = RequireClientKey(server.streamable_http_app(host=host), keys_required=keys_required)
    uv = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))

    async def announce() -> None:
        while not uv.started:
            await anyio.sleep(0.05)
        bound = uv.servers[0].sockets[0].getsockname()[1]
        print(f"MCP (streamable HTTP) listening on http://{host}:{bound}/mcp", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await uv.serve()
        tg.cancel_scope.cancel()
