"""`hindsight mcp`: serve the tools over stdio (a desktop client launches it) or streamable HTTP."""

from __future__ import annotations

import sys
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer

from pipeline.core.config import Settings
from pipeline.mcp.gateway import ApiGateway
from pipeline.mcp.server import build_server


def run_mcp(settings: Settings, *, transport: Literal["stdio", "http"], host: str, port: int) -> None:
    # The MCP server speaks for whoever holds its key (HINDSIGHT_API_KEY): the API enforces what it may do.
    key = settings.api_key.get_secret_value() if settings.api_key else None
    gateway = ApiGateway(settings.api_url, api_key=key)
    server = build_server(gateway)
    try:
        if transport == "stdio":
            server.run("stdio")  # stdout is the protocol: logs go to stderr (pipeline/core/logging.py)
        else:
            anyio.run(_serve_http, server, host, port)
    finally:
        gateway.close()


async def _serve_http(server: MCPServer[Any], host: str, port: int) -> None:
    """Uvicorn on host:port (0 = any free port), announcing the bound address on stderr once listening."""
    import uvicorn

    app = server.streamable_http_app(host=host)
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
