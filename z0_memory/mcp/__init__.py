"""z0-memory as an MCP server (``z0-memory mcp``): project memory for coding agents (Claude Code, Cursor, any client).

``project`` resolves which project a server serves, ``server`` builds the FastMCP server (tools, resources, the
prompt and the lifespan that owns one :class:`~z0_memory.memory.Z0Memory`), ``http`` serves it over streamable HTTP
behind a bearer token. Needs the ``mcp`` extra: ``pip install 'z0-memory[mcp]'``.
"""
