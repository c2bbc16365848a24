"""The transports: MCP over stdio and over streamable HTTP."""
