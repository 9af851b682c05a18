"""Serving the MCP server: stdio (one client, the default) or streamable HTTP (``--http``).

Over HTTP the server binds to 127.0.0.1 unless told otherwise; binding to any other address exposes the project's
memory to the network, so it is refused without a bearer token (``--token`` or ``Z0_MCP_TOKEN``), and with one every
request must carry ``Authorization: Bearer <token>`` (else 401). Over stdio, stdout is the protocol channel: the
process's file descriptor 1 is pointed at stderr for everything else (a library's print, a child process), and the
protocol writes to a private copy of the original stdout.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import sys
from io import TextIOWrapper
from typing import TYPE_CHECKING

from z0_memory.binding import refuse_open_bind
from z0_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP
    from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV = "Z0_MCP_TOKEN"
TOKEN_MIN_CHARS = 16
DEFAULT_PORT = 8765


def check_bind(host: str, token: str | None) -> None:
    """Refuse a network-reachable bind without a token, and a token too short to be one."""
    if token is not None and len(token) < TOKEN_MIN_CHARS:
        raise ConfigurationError(f"the MCP bearer token must be at least {TOKEN_MIN_CHARS} characters "
                                 "(e.g. `openssl rand -hex 24`)")
    refuse_open_bind(host, token, service="project memory",
                     how=f"pass --token or set {TOKEN_ENV} (clients then send 'Authorization: Bearer <token>')")


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (compared in constant time)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"error": "unauthorized",
                                   "error_description": "send 'Authorization: Bearer <token>' (the server's "
                                                        f"--token / {TOKEN_ENV})"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="z0-memory"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: FastMCP, token: str | None) -> ASGIApp:
    """The streamable HTTP ASGI app (at ``/mcp``), behind the bearer check when a token is set."""
    app = server.streamable_http_app()
    return BearerAuth(app, token) if token else app


async def serve_http(server: FastMCP, host: str, port: int, token: str | None) -> None:
    import uvicorn

    check_bind(host, token)
    if logging.getLogger().getEffectiveLevel() > logging.INFO:  # the SDK logs a client's disconnect as an ERROR
        logging.getLogger("mcp.server.streamable_http").setLevel(logging.CRITICAL)  # with a traceback; -v shows it
    config = uvicorn.Config(http_app(server, token), host=host, port=port, log_level="warning")
    await uvicorn.Server(config).serve()


async def serve_stdio(server: FastMCP) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray output can no longer corrupt the protocol stream
    stdout = anyio.wrap_file(TextIOWrapper(protocol_out, encoding="utf-8"))
    lowlevel = server._mcp_server  # FastMCP.run_stdio_async, with the protocol's own stdout
    async with stdio_server(stdout=stdout) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
