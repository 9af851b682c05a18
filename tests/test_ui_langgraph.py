"""``langgraph dev`` serves the memory inspector through langgraph.json's ``http.app`` (under ``/memory``)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import httpx

from test_langgraph_dev import serve
from z0_memory.ui.security import CSRF_COOKIE


def test_langgraph_dev_serves_the_inspector_under_memory(database_url: str, tmp_path: Path):
    """langgraph.json's ``http.app``: the dev server answers /memory/ beside its API, on the same database."""
    argv = ["langgraph", "dev", "--host", "127.0.0.1", "--no-browser", "--no-reload"]
    with contextmanager(serve)(argv, {"Z0_PROJECT": "devui"}, database_url, tmp_path) as url:
        with httpx.Client(base_url=url, timeout=60) as c:
            page = c.get("/memory/p/devui/facts")
            assert page.status_code == 200, page.text[-2000:]
            assert "<h1>Facts</h1>" in page.text and 'href="/memory/static/ui.css"' in page.text
            assert c.get("/memory/static/ui.css").status_code == 200
            assert c.get("/memory/p/acme/facts").status_code == 404  # only the server's project
            token = c.cookies[CSRF_COOKIE]
            assert c.post("/memory/p/devui/pending/1/reject", data={}).status_code == 403
            assert c.post("/memory/p/devui/pending/1/reject", data={"csrf": token}).status_code == 404
            assert c.get("/ok").status_code == 200  # the server's own API is still there
