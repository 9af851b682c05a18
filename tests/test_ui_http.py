"""The memory inspector over HTTP (httpx against the ASGI app, on the real database): every page, confirm / reject /
forget / edit, the CSRF and token guards, escaping of stored text, and that no URL reaches another project."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from starlette.applications import Starlette
from starlette.routing import Mount
from typer.testing import CliRunner

from fakes import configured

from z0_memory.cli import app as cli_app
from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.graphs.extraction import build_extraction_graph
from z0_memory.schemas import Candidate, Provenance, WriteOutcome
from z0_memory.ui import create_app
from z0_memory.ui.security import CSRF_COOKIE, TOKEN_COOKIE

pytestmark = pytest.mark.asyncio(loop_scope="session")

BASE = "http://127.0.0.1"
SCRIPT = "<script>alert('pwned')</script>"
KEY = "acme:stack:backend_framework"


def client(app: Any, base: str = BASE) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base, follow_redirects=False)


@pytest_asyncio.fixture(loop_scope="session")
async def web(memory, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    rules = tmp_path / "rules"
    (rules / ".z0" / "rules").mkdir(parents=True)
    (rules / "AGENTS.md").write_text("Prefer small pull requests.\n")
    (rules / ".z0" / "rules" / "style.md").write_text("Use tabs.\n")
    app = create_app(configured(memory, rules_root=str(rules)), context=Context(project="acme"), projects=["acme"])
    async with client(app) as c:
        yield c


async def csrf(c: httpx.AsyncClient, path: str = "/p/acme/") -> str:
    response = await c.get(path)
    assert response.status_code == 200, response.text
    return c.cookies[CSRF_COOKIE]


def hedge(content: str = "Maybe use Redis for caching", key: str = "acme:stack:cache") -> Candidate:
    return Candidate(kind="decision", key=key, value="Redis", content=content, confidence=0.35, hedged=True)


async def switch(pm) -> None:
    await pm.facts.put(KEY, "Express", Provenance(thread_id="t1", message_ids=["m1"], extractor="offline-rules/1",
                                                  confidence=0.9, rationale="the team knows it"))
    await pm.facts.put(KEY, "Hono", Provenance(thread_id="t2", message_ids=["m7"], extractor="offline-rules/1",
                                               confidence=0.92, rationale="edge runtime support"),
                       statement="Let's switch to Hono, not Express")


async def extract(memory, text: str, thread: str = "ui-thread") -> list[WriteOutcome]:
    graph = build_extraction_graph().compile(store=memory.store("acme"))
    out = await graph.ainvoke({"messages": [("user", text)]}, {"configurable": {"thread_id": thread}},
                              context=Context(project="acme"))
    return out["extraction"]


# ---- pages ---------------------------------------------------------------------------------------------------


async def test_overview_and_project_page_count_and_chart(memory, web):
    pm = memory.scope("acme")
    await switch(pm)
    await pm.pending.add(hedge(), Provenance(extractor="test", confidence=0.35))
    await pm.semantic.add("The staging database is reset every Monday", kind="context")
    outcomes = await extract(memory, "For the backend we'll use Hono, not Express")
    assert outcomes and outcomes[0].action in {"fact_confirmed", "fact_superseded"}

    home = await web.get("/")
    assert home.status_code == 200 and 'href="/p/acme/"' in home.text
    row = re.search(r'href="/p/acme/">acme</a></td>(.*?)</tr>', home.text, re.S).group(1)
    assert re.findall(r'class="n">(?:<a [^>]+>)?(\d+)', row) == ["1", "1", "1", "1"]  # facts, memories, pending, turns

    page = await web.get("/p/acme/")
    assert page.status_code == 200
    assert "<svg" in page.text and 'class="g-confirmed"' in page.text  # today's bar: one confirmed fact
    assert "For the backend we&#39;ll use Hono, not Express" in page.text


async def test_facts_filter_and_timeline(memory, web):
    pm = memory.scope("acme")
    await switch(pm)
    await pm.facts.put("acme:team:lead", "Alice", Provenance(extractor="test", rationale="named in standup"))
    everything = await web.get("/p/acme/facts")
    assert KEY in everything.text and "acme:team:lead" in everything.text
    assert "edge runtime support" in everything.text and "thread t2" in everything.text and "m7" in everything.text
    team = await web.get("/p/acme/facts", params={"category": "team"})
    assert "acme:team:lead" in team.text and KEY not in team.text

    fact = await web.get(f"/p/acme/facts/{KEY}")
    assert fact.status_code == 200
    timeline = fact.text[fact.text.index('class="timeline"'):]
    # newest first: v2 Hono (current, why: edge runtime), then v1 Express (closed)
    assert timeline.index("v2:") < timeline.index("v1:")
    assert "changed from &#39;Express&#39; to &#39;Hono&#39;" in timeline
    assert "why: edge runtime support" in timeline and "why: the team knows it" in timeline
    assert "Let&#39;s switch to Hono, not Express" in timeline
    assert (await web.get("/p/acme/facts/acme:stack:nothing_here")).status_code == 404
    assert (await web.get("/p/acme/facts", params={"category": "Not A Segment!"})).status_code == 400


async def test_edit_writes_a_new_version_with_the_editor_as_provenance(memory, web):
    pm = memory.scope("acme")
    await switch(pm)
    token = await csrf(web, f"/p/acme/facts/{KEY}")
    response = await web.post(f"/p/acme/facts/{KEY}/edit",
                              data={"csrf": token, "value": "Fastify", "reason": "benchmarks"})
    assert response.status_code == 303 and response.headers["location"].startswith(f"/p/acme/facts/{KEY}")
    history = await pm.facts.history(KEY)
    assert [v.value for v in history] == ["Express", "Hono", "Fastify"]
    assert history[-1].provenance.extractor == "human/ui" and history[-1].provenance.rationale == "benchmarks"
    page = await web.get(response.headers["location"])
    assert "Fastify" in page.text and "by human/ui" in page.text
    empty = await web.post(f"/p/acme/facts/{KEY}/edit", data={"csrf": token, "value": "  "})
    assert empty.status_code == 400 and len(await pm.facts.history(KEY)) == 3


async def test_pending_confirm_and_reject(memory, web):
    pm = memory.scope("acme")
    redis = (await pm.pending.add(hedge(), Provenance(extractor="test", confidence=0.35))).item
    other = (await pm.pending.add(hedge("Perhaps keep a changelog", key="acme:process:changelog"),
                                  Provenance(extractor="test", confidence=0.35))).item
    listing = await web.get("/p/acme/pending")
    assert "Maybe use Redis for caching" in listing.text and f'id="pending-{redis.id}"' in listing.text
    token = web.cookies[CSRF_COOKIE]

    confirmed = await web.post(f"/p/acme/pending/{redis.id}/confirm", data={"csrf": token})
    assert confirmed.status_code == 303
    fact = await pm.facts.get("acme:stack:cache")
    assert fact is not None and fact.value == "Redis" and fact.provenance.extractor == "human/ui"
    after = await web.get(confirmed.headers["location"])
    assert "confirmed: Redis" in after.text and f'id="pending-{redis.id}"' not in after.text

    rejected = await web.post(f"/p/acme/pending/{other.id}/reject", data={"csrf": token})
    assert rejected.status_code == 303 and await pm.pending.list() == []
    assert await pm.facts.get("acme:process:changelog") is None
    gone = await web.post(f"/p/acme/pending/{other.id}/reject", data={"csrf": token})
    assert gone.status_code == 404


async def test_semantic_memories_search_filters_and_superseded_apart(memory, web):
    pm = memory.scope("acme")
    old = await pm.semantic.add("Deploys happen on Fridays", kind="context")
    await pm.semantic.add("Deploys happen on Tuesdays after the review", kind="decision")
    await pm.semantic.add("Alice prefers small pull requests", kind="preference")
    await pm.semantic.supersede(old.id)

    found = await web.get("/p/acme/memories", params={"q": "when do deploys happen"})
    current = found.text[found.text.index("<h2>Current"):found.text.index("<h2>Superseded")]
    superseded = found.text[found.text.index("<h2>Superseded"):]
    assert "Tuesdays" in current and "Fridays" not in current and "Fridays" in superseded

    decisions = await web.get("/p/acme/memories", params={"q": "deploys", "kind": "decision"})
    assert "Tuesdays" in decisions.text and "Fridays" not in decisions.text
    listed = await web.get("/p/acme/memories", params={"kind": "preference"})
    assert "Alice prefers small pull requests" in listed.text and "Tuesdays" not in listed.text
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    later = await web.get("/p/acme/memories", params={"since": tomorrow})
    assert "Tuesdays" not in later.text and "Alice" not in later.text
    today = datetime.now(UTC).date()
    for since, until, shown in [(today, today, True), (today + timedelta(days=1), None, False),
                                (None, today - timedelta(days=1), False)]:
        period = {"q": "deploys", "since": since.isoformat() if since else "",
                  "until": until.isoformat() if until else ""}
        assert ("Tuesdays" in (await web.get("/p/acme/memories", params=period)).text) is shown, period
    assert (await web.get("/p/acme/memories", params={"since": "yesterday"})).status_code == 400
    assert (await web.get("/p/acme/memories", params={"kind": "secret"})).status_code == 400


async def test_recall_shows_rounds_and_score_parts(memory, web):
    pm = memory.scope("acme")
    await switch(pm)
    await pm.semantic.add("The CI pipeline runs on GitHub Actions", kind="context")
    page = await web.get("/p/acme/recall", params={"q": "which backend framework did we choose and why?"})
    assert page.status_code == 200
    assert "Round 1:" in page.text and "which backend framework did we choose and why?" in page.text
    assert re.search(r"judge: <b>(sufficient|insufficient)</b>", page.text)
    assert "stopped: <b>" in page.text and "strategies:" in page.text
    results = page.text[page.text.index('class="grid results"'):]
    body = results[results.index("<tbody>"):]
    first = body[:body.index("</tr>")]
    assert "Hono" in first and KEY in first  # the fact is recalled first, with its parts
    assert "kv_exact #1 (round 1)" in first  # the recipe that found it, at its rank
    assert re.search(r'class="n">0\.\d{3}</td>', first)  # its confidence factor
    assert (await web.get("/p/acme/recall")).status_code == 200
    assert (await web.get("/p/acme/recall", params={"q": "x", "mode": "turbo"})).status_code == 400


async def test_rules_page_lists_files_in_order_with_sizes(web):
    page = await web.get("/p/acme/rules")
    assert page.status_code == 200
    files = re.findall(r"<td><code>([^<]+)</code></td><td class=\"n\">(\d+)</td>", page.text)
    assert files == [("AGENTS.md", "28"), (".z0/rules/style.md", "10")]
    assert "Prefer small pull requests." in page.text


async def test_extraction_log_says_what_each_turn_did(memory, web):
    await extract(memory, "For the backend we'll use Hono, not Express", thread="t-a")
    await extract(memory, "Maybe we could try Redis for the cache", thread="t-b")
    await extract(memory, "Hello there!", thread="t-c")
    entries = await memory.scope("acme").extraction_log.recent()
    assert [e.thread_id for e in entries] == ["t-c", "t-b", "t-a"]
    assert entries[1].excerpt == "Maybe we could try Redis for the cache" and len(entries[1].message_ids) == 1
    assert [e.counts() for e in entries] == [
        {"written": 0, "confirmed": 0, "pending": 0, "ignored": 1},
        {"written": 0, "confirmed": 0, "pending": 1, "ignored": 0},
        {"written": 1, "confirmed": 0, "pending": 0, "ignored": 0}]
    page = await web.get("/p/acme/log")
    assert page.status_code == 200
    assert "fact_created" in page.text and "pending_created" in page.text
    assert "the extractor found nothing worth remembering" in page.text
    assert "Maybe we could try Redis for the cache" in page.text


async def test_forget_needs_confirmation(memory, web):
    pm = memory.scope("acme")
    await switch(pm)
    note = await pm.semantic.add("Temporary note to forget", kind="context")
    ask = await web.get("/p/acme/forget", params={"target": KEY})
    assert ask.status_code == 200 and "2 version(s)" in ask.text
    token = web.cookies[CSRF_COOKIE]
    unconfirmed = await web.post("/p/acme/forget", data={"csrf": token, "target": KEY})
    assert unconfirmed.status_code == 400 and len(await pm.facts.history(KEY)) == 2
    done = await web.post("/p/acme/forget", data={"csrf": token, "target": KEY, "confirm": "yes", "history": "yes"})
    assert done.status_code == 303 and await pm.facts.history(KEY) == []

    ask = await web.get("/p/acme/forget", params={"target": note.id})
    assert "Temporary note to forget" in ask.text
    done = await web.post("/p/acme/forget", data={"csrf": token, "target": note.id, "confirm": "yes"})
    assert done.status_code == 303 and await pm.semantic.get(note.id) is None
    assert (await web.get("/p/acme/forget", params={"target": note.id})).status_code == 404


# ---- safety --------------------------------------------------------------------------------------------------


async def test_stored_script_renders_as_text_everywhere(memory, web):
    pm = memory.scope("acme")
    await pm.facts.put("acme:stack:frontend", SCRIPT, Provenance(extractor="test", rationale=SCRIPT))
    memory_row = await pm.semantic.add(f"note {SCRIPT}", kind="context")
    await pm.pending.add(hedge(f"Maybe {SCRIPT}"), Provenance(extractor="test", confidence=0.35))
    await extract(memory, f"Remember this: {SCRIPT}")
    pages = ["/p/acme/", "/p/acme/facts", "/p/acme/facts/acme:stack:frontend", "/p/acme/pending",
             "/p/acme/memories", "/p/acme/memories?q=alert+pwned", "/p/acme/log",
             f"/p/acme/forget?target={memory_row.id}", "/p/acme/recall?q=" + SCRIPT, "/p/acme/recall?q=frontend"]
    for path in pages:
        page = await web.get(path)
        assert page.status_code == 200, path
        assert "<script>alert" not in page.text, path
    escaped = (await web.get("/p/acme/facts")).text
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in escaped
    reflected = await web.get("/p/acme/facts", params={"done": SCRIPT})
    assert "<script>alert" not in reflected.text and "&lt;script&gt;" in reflected.text
    assert "script-src 'self'" in reflected.headers["content-security-policy"]


async def test_every_post_needs_the_csrf_token(memory, web):
    pm = memory.scope("acme")
    await switch(pm)
    item = (await pm.pending.add(hedge(), Provenance(extractor="test", confidence=0.35))).item
    token = await csrf(web)
    posts = [(f"/p/acme/pending/{item.id}/confirm", {}), (f"/p/acme/pending/{item.id}/reject", {}),
             (f"/p/acme/facts/{KEY}/edit", {"value": "Koa"}), ("/p/acme/forget", {"target": KEY, "confirm": "yes"})]
    for path, data in posts:
        assert (await web.post(path, data=data)).status_code == 403, path
        assert (await web.post(path, data={**data, "csrf": "forged"})).status_code == 403, path
        cross = await web.post(path, data={**data, "csrf": token}, headers={"origin": "http://evil.example"})
        assert cross.status_code == 403, path
    async with client(web._transport.app) as stranger:  # another browser: its own cookie, not the victim's token
        await stranger.get("/p/acme/")
        assert (await stranger.post(posts[0][0], data={"csrf": token})).status_code == 403
    assert [i.id for i in await pm.pending.list()] == [item.id]
    assert [v.value for v in await pm.facts.history(KEY)] == ["Express", "Hono"]


async def test_no_url_reaches_another_project(memory, web):
    other = memory.scope("other")
    await other.facts.put("other:stack:db", "MySQL", Provenance(extractor="test"))
    secret = await other.semantic.add("other project's secret plan", kind="context")
    waiting = (await other.pending.add(hedge(key="other:stack:cache"), Provenance(extractor="test"))).item
    await other.extraction_log.add([WriteOutcome(action="fact_created", content="MySQL")], thread_id="other-thread")
    token = await csrf(web)

    for path in ["/p/other/", "/p/other/facts", "/p/other/facts/other:stack:db", "/p/other/pending",
                 "/p/other/memories", "/p/other/recall?q=db", "/p/other/rules", "/p/other/log",
                 f"/p/other/forget?target={secret.id}"]:
        response = await web.get(path)
        assert response.status_code == 404 and "MySQL" not in response.text, path
    # the selected project's URLs naming another project's rows
    assert (await web.get("/p/acme/facts/other:stack:db")).status_code == 404
    assert (await web.get("/p/acme/forget", params={"target": secret.id})).status_code == 404
    assert (await web.get("/p/acme/forget", params={"target": "other:stack:db"})).status_code == 404
    assert (await web.post(f"/p/acme/pending/{waiting.id}/confirm", data={"csrf": token})).status_code == 404
    assert (await web.post(f"/p/acme/pending/{waiting.id}/reject", data={"csrf": token})).status_code == 404
    assert (await web.post("/p/acme/forget", data={"csrf": token, "target": secret.id, "confirm": "yes"})
            ).status_code == 404
    assert (await web.post("/p/acme/facts/other:stack:db/edit", data={"csrf": token, "value": "x"})).status_code == 404
    assert (await web.post("/p/other/pending/1/reject", data={"csrf": token})).status_code == 404
    for path in ["/", "/p/acme/", "/p/acme/log", "/p/acme/memories?q=secret+plan", "/p/acme/recall?q=secret+plan"]:
        page = await web.get(path)
        assert "project&#39;s secret plan" not in page.text and "other-thread" not in page.text and "MySQL" not in page.text, path
    assert [i.id for i in await other.pending.list()] == [waiting.id]
    assert (await other.facts.get("other:stack:db")).value == "MySQL"
    assert await other.semantic.get(secret.id) is not None


async def test_token_required_off_the_loopback(memory):
    with pytest.raises(ConfigurationError, match="--token or Z0_UI_TOKEN"):
        create_app(memory, projects=["acme"], host="0.0.0.0")
    result = CliRunner().invoke(cli_app, ["ui", "--host", "0.0.0.0", "--port", "1"], env={"Z0_UI_TOKEN": ""})
    assert result.exit_code == 2 and "--token or Z0_UI_TOKEN" in result.output
    result = CliRunner().invoke(cli_app, ["ui", "--project", "no such/project", "--port", "1"])
    assert result.exit_code == 2 and "project" in result.output

    app = create_app(memory, projects=["acme"], host="0.0.0.0", token="s3cret-token")
    async with client(app, "http://192.0.2.10:8765") as c:
        assert (await c.get("/p/acme/")).status_code == 401
        assert (await c.get("/p/acme/", params={"token": "wrong"})).status_code == 401
        assert (await c.get("/p/acme/facts", headers={"authorization": "Bearer s3cret-token"})).status_code == 200
        opened = await c.get("/p/acme/facts", params={"token": "s3cret-token", "category": "stack"})
        assert opened.status_code == 303 and opened.headers["location"] == "/p/acme/facts?category=stack"
        assert c.cookies[TOKEN_COOKIE] == "s3cret-token"
        assert (await c.get("/p/acme/facts")).status_code == 200  # the cookie carries it from now on
        token = c.cookies[CSRF_COOKIE]
        c.cookies.delete(TOKEN_COOKIE)
        assert (await c.post("/p/acme/forget", data={"csrf": token, "target": KEY, "confirm": "yes"})
                ).status_code == 401


async def test_loopback_server_refuses_other_host_headers(memory, web):
    rebound = await web.get("/p/acme/", headers={"host": "attacker.example:8765"})
    assert rebound.status_code == 421
    assert (await web.get("/p/acme/", headers={"host": "localhost:8765"})).status_code == 200


async def test_mounted_in_another_app_links_carry_the_prefix(memory):
    outer = Starlette(routes=[Mount("/inspect", app=create_app(memory, projects=["acme"]))])
    async with client(outer) as c:
        page = await c.get("/inspect/p/acme/")
        assert page.status_code == 200
        assert 'href="/inspect/static/ui.css"' in page.text and 'href="/inspect/p/acme/facts"' in page.text
        assert (await c.get("/inspect/static/ui.js")).status_code == 200


async def test_forget_everything_clears_the_extraction_log(memory):
    acme, other = memory.scope("acme"), memory.scope("other")
    await acme.extraction_log.add([WriteOutcome(action="memory_added", content="x")])
    await other.extraction_log.add([WriteOutcome(action="memory_added", content="y")])
    assert await acme.forget_everything() >= 1
    assert await acme.extraction_log.count() == 0 and await other.extraction_log.count() == 1



async def test_outcome_chart_stacks_each_days_groups_to_scale():
    from datetime import date

    from z0_memory.stores.extraction_log import LogEntry
    from z0_memory.ui.security import check_bind
    from z0_memory.ui.views import outcome_chart

    def entry(day: int, *actions: str, month: int = 3) -> LogEntry:
        return LogEntry(day, None, [], "", [WriteOutcome(action=a) for a in actions],
                        datetime(2026, month, day, 12, tzinfo=UTC))

    chart = outcome_chart([entry(10, "fact_created", "pending_created", "dropped", "memory_added"),
                           entry(12, "fact_confirmed"), entry(20, "fact_created", month=2)],  # outside the 14 days
                          days=14, today=date(2026, 3, 12), height=120)
    assert chart.top == 4 and len(chart.bars) == 14 and chart.bars[-1].label == "03-12"
    busiest = chart.bars[-3]
    assert busiest.total == 4 and [s["group"] for s in busiest.segments] == ["written", "pending", "ignored"]
    assert [s["h"] for s in busiest.segments] == [50.0, 25.0, 25.0]  # 2, 1, 1 of 4 on a 100-pixel plot
    assert chart.bars[-1].segments == [{"group": "confirmed", "y": 75.0, "h": 25.0, "n": 1}]
    assert sum(b.total for b in chart.bars) == 5
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        check_bind(host, None)
    with pytest.raises(ConfigurationError):
        check_bind("192.168.1.5", None)


async def test_the_extraction_log_is_scoped_by_row_level_security(memory):
    import psycopg

    from z0_memory.stores.scope import Scope

    await memory.scope("beta").extraction_log.add([WriteOutcome(action="fact_created", content="beta's turn")])
    assert memory.db.app_role == "z0_app"
    async with memory.db.connection(Scope("acme")) as conn:  # SQL naming beta, in a transaction bound to acme
        row = await (await conn.execute("SELECT count(*) AS n FROM z0_extraction_log WHERE project = 'beta'")
                     ).fetchone()
        assert row["n"] == 0
        assert (await conn.execute("DELETE FROM z0_extraction_log WHERE project = 'beta'")).rowcount == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
        async with memory.db.connection(Scope("acme")) as conn:
            await conn.execute("INSERT INTO z0_extraction_log (project, user_id, outcomes) "
                               "VALUES ('beta', '', '[]'::jsonb)")
    assert await memory.scope("beta").extraction_log.count() == 1
    async with memory.db.connection() as conn:
        forced = await (await conn.execute("SELECT relrowsecurity AND relforcerowsecurity AS on FROM pg_class "
                                           "WHERE relname = 'z0_extraction_log'")).fetchone()
    assert forced["on"]


async def test_migration_9_upgrades_a_database_at_version_8(memory):
    from z0_memory.stores.schema import setup

    async with memory.db.connection() as conn:
        await conn.execute("DROP TABLE z0_extraction_log")
        await conn.execute("DELETE FROM z0_schema_version WHERE version = 9")
    assert await setup(memory.db, memory._embedding) == [9]
    acme = memory.scope("acme")
    await acme.extraction_log.add([WriteOutcome(action="memory_added", content="after the upgrade")], thread_id="t")
    assert [e.outcomes[0].content for e in await acme.extraction_log.recent()] == ["after the upgrade"]
    assert await setup(memory.db, memory._embedding) == []


async def test_the_extraction_log_never_holds_a_secret_said_in_the_turn(memory, web):
    secret = "ghp_Qw3rTy7uIo9pAs1dFg5hJk8lZx2cVb4nM6q0"
    await extract(memory, f"We'll use Hono for the backend. My GitHub token is {secret}")
    async with memory.db.connection() as conn:
        rows = await (await conn.execute("SELECT excerpt, outcomes::text AS o FROM z0_extraction_log")).fetchall()
    assert len(rows) == 1 and "Hono" in rows[0]["excerpt"]
    assert secret not in rows[0]["excerpt"] and secret not in rows[0]["o"]
    assert secret not in (await web.get("/p/acme/log")).text
