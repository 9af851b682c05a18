"""examples/embed_in_your_graph.py runs as a script on the test database and does what it says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from checkout.sitecustomize import subprocess_env

pytestmark = pytest.mark.asyncio(loop_scope="session")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "embed_in_your_graph.py"


async def test_example_embeds_retrieval_subgraph_and_extraction(memory, database_url, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "Z0_"))}
    env.update(DATABASE_URL=database_url, LANGSMITH_TRACING="false")
    done = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, env=subprocess_env(env), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    session_1, session_2 = out.split("session 2 (a new thread", 1)
    assert "memory:    fact_created embed-example:stack:backend_framework 'Hono'" in session_1
    assert "memory:    fact_created embed-example:database:database 'Supabase Postgres'" in session_1
    assert "recall:    round 1 " in session_1 and "recall:    round 4 " not in out  # chat-mode guard: 3 rounds
    answer = next(line for line in session_2.splitlines() if line.startswith("  assistant:"))
    assert "Hono (stack)" in answer and "Supabase Postgres (database)" in answer and "?" not in answer
    assert "recall:    round 1 kv_exact" in session_2  # the subgraph's trace reached the user's state
    facts = {str(f.key): f.value for f in await memory.scope("embed-example").facts.list()}
    assert facts == {"embed-example:stack:backend_framework": "Hono",
                     "embed-example:database:database": "Supabase Postgres"}
