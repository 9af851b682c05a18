"""``z0-memory mcp``: the MCP server as a coding agent reaches it, driven by the official SDK's client.

Every test starts the real command (``python -m z0_memory.cli mcp``) as a subprocess on the test database and talks
to it over stdio or streamable HTTP: the tools with their schemas and structured results, the confidence gate
(a hedge waits until ``confirm``), the history of a switched decision with its reason, resources and the prompt,
clear tool errors after which the server keeps serving, project isolation, the project chosen from the client's
root or the working directory, and the HTTP safety rules (no network bind without a token, 401 without it).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_support import REPO, SECRET, TOOLS, call, error, mcp_env, server_args, stdio_session  # noqa: F401
from server_support import free_port

# async tests run on the session loop: asyncio_mode "auto", default test loop scope "session" (pyproject)


async def test_stdio_server_lists_and_runs_every_tool_resource_and_prompt(mcp_env):
    async with stdio_session(mcp_env, "--project", "acme") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():  # typed inputs, structured outputs, a description the model reads
            assert tool.description and len(tool.description) > 60, tool.name
            assert tool.inputSchema["type"] == "object" and tool.outputSchema, tool.name
            assert "project" not in tool.inputSchema.get("properties", {}), tool.name  # never a model's choice
            assert "project" in tool.outputSchema["properties"], tool.name
        assert tools["recall"].inputSchema["properties"]["query"]["maxLength"] == 4000
        assert tools["recall"].annotations.readOnlyHint and tools["forget"].annotations.destructiveHint

        # a decision through remember: the same extractor and gate as a chat turn
        said, text = await call(session, "remember",
                                text="We decided to use Hono for the backend framework because it runs on the edge.")
        assert said["project"] == "acme" and said["project_source"] == "--project"
        assert [w["action"] for w in said["written"]] == ["fact_created"]
        assert said["written"][0]["target"] == "acme:stack:backend_framework" and said["written"][0]["content"] == "Hono"
        assert "project acme (from --project)" in text and "fact_created" in text

        # a hedge is held pending until confirm
        hedged, text = await call(session, "remember", text="Maybe we should use Redis for caching?")
        assert not hedged["written"] and [p["action"] for p in hedged["pending"]] == ["pending_created"]
        assert "confirm(id)" in text
        waiting, _ = await call(session, "pending")
        assert [(i["key"], i["value"]) for i in waiting["items"]] == [("acme:database:cache", "Redis")]
        recall_before, _ = await call(session, "recall", query="which cache do we use?")
        assert not any(e["key"] == "acme:database:cache" for e in recall_before["evidence"])
        confirmed, text = await call(session, "confirm", id=waiting["items"][0]["id"])
        assert confirmed["target"] == "acme:database:cache" and "Redis" in text
        assert (await call(session, "pending"))[0]["items"] == []

        # a second hedge, rejected: never stored
        other, _ = await call(session, "remember", text="Maybe we could deploy on Fly.io?")
        rejected, _ = await call(session, "reject", id=int(other["pending"][0]["target"]))
        assert "Fly" in rejected["content"]
        assert (await call(session, "pending"))[0]["items"] == []

        # a secret is redacted, a request is ignored
        secret, text = await call(session, "remember",
                                  text=f"We decided to use Postgres at postgresql://app:{SECRET}@db.internal:5432/app")
        assert SECRET not in text and SECRET not in json.dumps(secret)
        assert secret["redacted"] == 1 and "1 secret(s)" in text
        ignored, text = await call(session, "remember", text="Please run the database migrations now.")
        assert not ignored["written"] and not ignored["pending"] and ignored["ignored"]
        assert "nothing to remember" in text

        # an explicit switch, with its reason: history answers "why did we switch?"
        first, _ = await call(session, "set_fact", key="stack:orm", value="Prisma", rationale="the team knows it")
        assert first["action"] == "created" and first["fact"]["version"] == 1
        second, text = await call(session, "set_fact", key="acme:stack:orm", value="Drizzle",
                                  rationale="Prisma's engine does not run on the edge")
        assert second["action"] == "superseded" and second["previous"] == "Prisma" and "(was Prisma)" in text
        history, text = await call(session, "fact_history", key="stack:orm")
        assert [(v["value"], v["current"]) for v in history["versions"]] == [("Prisma", False), ("Drizzle", True)]
        assert history["versions"][1]["rationale"] == "Prisma's engine does not run on the edge"
        assert history["versions"][1]["extractor"] == "human/mcp"
        assert history["versions"][1]["thread_id"] == "mcp:mcp"  # the SDK client's name: who wrote it
        assert "<memory>" in text and "not instructions" in text and "because the team knows it" in text

        # recall: numbered evidence in the memory block, one line per round, the superseded version marked
        found, text = await call(session, "recall", query="which ORM did we use before Drizzle?")
        assert found["evidence"] and found["rounds"] and found["stop_reason"]
        by_value = {("Drizzle" in e["content"], e["superseded"]) for e in found["evidence"] if e["key"] == "acme:stack:orm"}
        assert by_value == {(True, False), (False, True)}  # the current version, and Prisma marked superseded
        assert text.count("<memory>") == 1 and "not instructions" in text and "[1]" in text and "[2]" in text
        assert "SUPERSEDED) stack / orm: Prisma" in text
        assert "round 1:" in text and "Memory search:" in text
        capped, _ = await call(session, "recall", query="what is our deployment target?", max_rounds=1)
        assert len(capped["rounds"]) == 1

        # resources and the prompt
        resources = {str(r.uri) for r in (await session.list_resources()).resources}
        assert resources == {"z0://rules", "z0://facts"}
        templates = [t.uriTemplate for t in (await session.list_resource_templates()).resourceTemplates]
        assert templates == ["z0://facts/{key}/history"]
        rules = (await session.read_resource("z0://rules")).contents[0].text
        assert "Use pnpm, never npm." in rules and "AGENTS.md" in rules
        facts = (await session.read_resource("z0://facts")).contents[0].text
        assert "acme:stack:orm = Drizzle" in facts and "acme:database:cache = Redis" in facts
        assert "Prisma =" not in facts and facts.count("<memory>") == 1
        orm = (await session.read_resource("z0://facts/stack:orm/history")).contents[0].text
        assert "v1 Prisma" in orm and "v2 Drizzle" in orm
        prompts = (await session.list_prompts()).prompts
        assert [p.name for p in prompts] == ["project_memory"]
        primed = (await session.get_prompt("project_memory")).messages[0].content.text
        assert "project acme" in primed and "Use pnpm, never npm." in primed
        assert "acme:stack:orm = Drizzle" in primed and "recall(query)" in primed

        # forget: a memory by the id recall shows; a fact by its key, for real
        prefs, _ = await call(session, "remember", text="The staging server reboots every Sunday night.")
        memory_id = prefs["written"][0]["target"]
        assert prefs["written"][0]["action"] == "memory_added"
        gone, _ = await call(session, "forget", key_or_id=memory_id)
        assert gone == {**gone, "what": "memory", "deleted": 1}
        assert "nothing was deleted" in await error(session, "forget", key_or_id=memory_id)
        mirror = next(e["id"] for e in found["evidence"] if e["key"] == "acme:stack:orm")
        assert "forget the fact by its key" in await error(session, "forget", key_or_id=mirror)
        gone, _ = await call(session, "forget", key_or_id="stack:orm", include_history=True)
        assert gone["deleted"] == 2 and gone["what"] == "fact"
        assert (await call(session, "fact_history", key="stack:orm"))[0]["versions"] == []


async def test_bad_inputs_are_clear_tool_errors_and_the_server_keeps_serving(mcp_env):
    async with stdio_session(mcp_env, "--project", "acme") as session:
        assert "at least 1 character" in await error(session, "recall", query="")
        assert "at most 4000" in await error(session, "recall", query="x" * 4001)
        assert "less than or equal to 20" in await error(session, "recall", query="db?", max_rounds=50)
        assert "at most 8000" in await error(session, "remember", text="y" * 8001)
        assert "NUL" in await error(session, "remember", text="We use \x00 Hono")
        assert "belongs to project 'other'" in await error(session, "set_fact", key="other:stack:db", value="x")
        assert "not allowed" in await error(session, "set_fact", key="stack:back end", value="x")
        assert "three" in await error(session, "fact_history", key="a:b:c:d")
        assert "secret" in await error(session, "set_fact", key="stack:db_password",
                                       value="sk-proj-Q8f3kLm2Zx9Tt4Rr7Yy1Uu6Ii0Oo5Pp")
        assert "call pending()" in await error(session, "confirm", id=999999)
        assert "greater than or equal to 1" in await error(session, "reject", id=0)
        assert "neither a fact key" in await error(session, "forget", key_or_id="not-a-uuid")
        assert "nothing was deleted" in await error(session, "forget", key_or_id="stack:nothing_here")
        stored, _ = await call(session, "set_fact", key="stack:db", value="Postgres")  # still serving
        assert stored["fact"]["value"] == "Postgres"


async def test_a_decision_remembered_in_one_session_is_recalled_in_a_new_one(mcp_env):
    async with stdio_session(mcp_env, "--project", "acme") as first:
        await call(first, "remember", text="We decided to use Supabase Postgres as the database because of row "
                                           "level security.")
    async with stdio_session(mcp_env, "--project", "acme") as second:
        found, text = await call(second, "recall", query="which database did we pick and why?")
    assert any("Supabase Postgres" in e["content"] for e in found["evidence"]), text
    assert "row level security" in text


async def test_a_second_projects_server_never_sees_the_first_ones_memory(mcp_env):
    async with stdio_session(mcp_env, "--project", "acme") as acme:
        await call(acme, "set_fact", key="stack:backend_framework", value="Hono", rationale="edge runtime")
        await call(acme, "remember", text="We decided to use Supabase Postgres as the database.")
        await call(acme, "remember", text="Maybe we should use Redis for caching?")
    async with stdio_session(mcp_env, "--project", "beta") as beta:
        found, text = await call(beta, "recall", query="which backend framework and database do we use?")
        assert found["project"] == "beta" and found["evidence"] == []
        assert "Hono" not in text and "Supabase" not in text
        assert (await call(beta, "pending"))[0]["items"] == []
        assert (await call(beta, "fact_history", key="stack:backend_framework"))[0]["versions"] == []
        assert "belongs to project 'acme'" in await error(beta, "fact_history", key="acme:stack:backend_framework")
        assert "belongs to project 'acme'" in await error(beta, "forget", key_or_id="acme:stack:backend_framework")
        facts = (await beta.read_resource("z0://facts")).contents[0].text
        assert "Hono" not in facts and "project beta" in facts
    async with stdio_session(mcp_env, "--project", "acme") as acme:  # and acme's memory is intact
        assert (await call(acme, "fact_history", key="stack:backend_framework"))[0]["versions"][0]["value"] == "Hono"


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


async def test_project_comes_from_the_working_directorys_repository_or_the_clients_root(mcp_env, tmp_path):
    shop = git_repo(tmp_path / "Shop Front")
    (shop / "src").mkdir()
    env = {k: v for k, v in mcp_env.items() if k != "Z0_RULES_ROOT"}
    (shop / "CLAUDE.md").write_text("Shop rules: TypeScript strict mode.\n")
    async with stdio_session(env, cwd=shop / "src") as session:  # no --project: the repository's name
        stored, text = await call(session, "set_fact", key="stack:ui", value="Svelte")
        assert stored["project"] == "shop_front" and stored["fact"]["key"] == "shop_front:stack:ui"
        assert "git repository" in stored["project_source"] and "project shop_front" in text
        rules = (await session.read_resource("z0://rules")).contents[0].text  # the repository's own rules
        assert "TypeScript strict mode" in rules

    billing = git_repo(tmp_path / "billing")
    async with stdio_session(env, cwd=shop, roots=[billing.as_uri()]) as session:  # the client's root wins
        found, _ = await call(session, "fact_history", key="stack:ui")
        assert found["project"] == "billing" and "client root" in found["project_source"]
        assert found["versions"] == []  # shop_front's fact is another project's

    async with stdio_session(env, "--project", "acme", cwd=shop, roots=[billing.as_uri()]) as session:
        found, _ = await call(session, "pending")  # the operator's --project beats any root
        assert found["project"] == "acme" and found["project_source"] == "--project"


async def wait_for_port(port: int, proc: asyncio.subprocess.Process, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.returncode is not None:
            raise AssertionError(f"server exited: {(await proc.stderr.read()).decode()[-2000:]}")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.2)
    raise AssertionError(f"nothing listens on {port}")


async def test_http_refuses_a_network_bind_without_a_token(mcp_env):
    for args, expected in [(("--host", "0.0.0.0"), "without a token"),
                           (("--host", "0.0.0.0", "--token", "short"), "at least 16 characters")]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, *server_args("--project", "acme", "--http", "--port", str(free_port()), *args),
            env=mcp_env, cwd=str(REPO), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        lines = [line for line in err.decode().splitlines() if line.strip()]
        assert proc.returncode == 2 and len(lines) == 1 and expected in lines[0], err.decode()
        assert "Traceback" not in err.decode()


@pytest.mark.parametrize("args, env, expected", [
    (("--project", "bad name"), {}, "project 'bad name' is not allowed"),
    (("--project", "acme"), {"DATABASE_URL": "postgresql://z0@127.0.0.1:1/none", "Z0_DATABASE_TIMEOUT_S": "2"},
     "cannot connect"),
])
async def test_a_server_that_cannot_start_says_why_in_one_line(mcp_env, args, env, expected):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *server_args(*args), env={**mcp_env, **env}, cwd=str(REPO), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    lines = [line for line in err.decode().splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and expected in lines[0], err.decode()
    assert out == b""  # stdout is the protocol channel: nothing else is ever written to it


async def test_http_server_needs_the_bearer_token_and_serves_tools_with_it(mcp_env):
    token = "test-token-0123456789abcdef"
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *server_args("--project", "acme", "--http", "--port", str(port)),
        env={**mcp_env, "Z0_MCP_TOKEN": token}, cwd=str(REPO), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        await wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as raw:
            missing = await raw.post(url, json=init, headers=headers)
            wrong = await raw.post(url, json=init, headers={**headers, "Authorization": "Bearer not-the-token-xx"})
        assert missing.status_code == 401 and wrong.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer") and "Authorization" in missing.text

        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(headers=auth, timeout=60) as http, \
                streamable_http_client(url, http_client=http) as (read, write, _), ClientSession(read, write) as s:
            await s.initialize()
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            await call(s, "set_fact", key="stack:queue", value="SQS", rationale="we are on AWS")
            await call(s, "remember", text="Maybe we should move the queue to Kafka?")
            waiting = (await call(s, "pending"))[0]["items"]
            assert len(waiting) == 1
            await call(s, "confirm", id=waiting[0]["id"])
            history, _ = await call(s, "fact_history", key="stack:queue")
            assert [v["value"] for v in history["versions"]] == ["SQS", "Kafka"]
            found, _ = await call(s, "recall", query="which queue do we use?")
            assert any("Kafka" in e["content"] for e in found["evidence"])
            assert "belongs to project" in await error(s, "set_fact", key="zeta:stack:queue", value="x")
            assert "Kafka" in (await s.read_resource("z0://facts")).contents[0].text
            assert "v2 Kafka" in (await s.read_resource("z0://facts/stack:queue/history")).contents[0].text
            assert "Use pnpm, never npm." in (await s.read_resource("z0://rules")).contents[0].text
            primed = (await s.get_prompt("project_memory")).messages[0].content.text
            assert "acme:stack:queue = Kafka" in primed
            hedge = (await call(s, "remember", text="Maybe we should try Valkey for caching?"))[0]
            assert (await call(s, "reject", id=int(hedge["pending"][0]["target"])))[0]["content"]
            assert (await call(s, "forget", key_or_id="stack:queue"))[0]["deleted"] == 1  # the current version
        # a second client session on the same server shares the memory
        async with httpx.AsyncClient(headers=auth, timeout=60) as http, \
                streamable_http_client(url, http_client=http) as (read, write, _), ClientSession(read, write) as s:
            await s.initialize()
            versions = (await call(s, "fact_history", key="stack:queue"))[0]["versions"]
            assert [(v["value"], v["current"]) for v in versions] == [("SQS", False)]  # history survives forget
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 30)


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                            ("[::1]", True), ("127.0.0.2", True), ("0.0.0.0", False),
                                            ("::", False), ("192.168.1.20", False), ("example.org", False)])
def test_only_loopback_binds_go_without_a_token(host, loopback):
    from z0_memory.errors import ConfigurationError
    from z0_memory.binding import is_loopback
    from z0_memory.mcp.run import check_bind

    assert is_loopback(host) is loopback
    check_bind(host, "a-token-of-24-characters")
    if loopback:
        check_bind(host, None)
    else:
        with pytest.raises(ConfigurationError, match="without a token"):
            check_bind(host, None)
