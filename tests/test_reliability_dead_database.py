"""The database dies under an interactive session: the CLI says so in one line and exits 2, within seconds.

Before: kill -9 of the embedded server during a CLI chat turn took 246 s of successive 30 s pool timeouts, then about
400 lines of traceback ending in ``PoolTimeout`` (exit 1), and closing raised ``psutil.NoSuchProcess`` over the real
error. Now a wait for a connection is bounded by ``database_timeout_s`` (5 s), later statements of the same turn
fail at once while the server stays unreachable, errors are typed (:class:`DatabaseError`), and closing never
replaces the error on its way out.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import pytest
from reliability_support import record

from z0_memory.stores.embedded import temporary_data_dir

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def read_until(stream: asyncio.StreamReader, marker: bytes, count: int, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while seen.count(marker) < count:
        chunk = await asyncio.wait_for(stream.read(4096), max(0.1, deadline - time.monotonic()))
        if not chunk:
            break
        seen += chunk
    return seen


async def test_cli_chat_fails_fast_in_one_line_when_the_server_is_killed(tmp_path):
    data_dir = temporary_data_dir("z0-dead-")
    env = {**os.environ, "Z0_DATA_DIR": data_dir, "Z0_EMBEDDING_MODEL": "hash", "Z0_RULES_ROOT": str(tmp_path),
           "COLUMNS": "200"}
    env.pop("DATABASE_URL", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "z0_memory.cli", "--project", "acme", "chat", env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        await read_until(proc.stdout, b"you> ", 1, 120)
        proc.stdin.write(b"We decided to use Hono for the backend.\n")
        await proc.stdin.drain()
        first = await read_until(proc.stdout, b"you> ", 1, 120)
        assert b"Hono" in first or b"offline" in first.lower(), first
        with open(os.path.join(data_dir, "postmaster.pid")) as f:
            postmaster = int(f.readline())
        os.kill(postmaster, signal.SIGKILL)
        killed = time.monotonic()
        proc.stdin.write(b"which backend do we use?\n")
        await proc.stdin.drain()
        proc.stdin.close()
        _, stderr = await asyncio.wait_for(proc.communicate(), 90)
        elapsed = time.monotonic() - killed
    finally:
        if proc.returncode is None:
            proc.kill()
    text = stderr.decode()
    lines = [line for line in text.splitlines() if line.strip() and "created its embedded database" not in line]
    assert proc.returncode == 2, text[-3000:]
    assert "Traceback" not in text and len(lines) == 1, text[-3000:]
    assert lines[0].startswith("error:") and ("unreachable" in lines[0] or "connection" in lines[0]), lines
    assert elapsed < 30, elapsed
    record("faults.server_killed_mid_session", operations=2, faults=1, lost=0)
