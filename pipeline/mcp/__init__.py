"""The MCP server (`hindsight mcp`): memory tools for MCP clients, over stdio or streamable HTTP."""
