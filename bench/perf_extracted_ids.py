"""How long the extraction node takes to learn which user turns of a thread are already extracted.

After every turn of the chat and code graphs the node is given the whole thread and asks, in one query
(``stores.provenance.extracted_message_ids``), which of the thread's user messages the scope has extracted: the
extraction log, or a fact, pending item, semantic memory or queued turn citing them. This times that query for
threads of 1, 100 and 500 user messages against a scope holding ``--logged`` extracted turns (two message ids each,
as a user message and its reply), on a temporary embedded Postgres. Latency is noisy on a shared machine.

    python bench/perf_extracted_ids.py [--logged 2000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_common import machine, p50_p95, temp_data_dir, timed  # noqa: E402

from z0_memory.memory import Z0Memory  # noqa: E402
from z0_memory.settings import Settings  # noqa: E402
from z0_memory.stores.extraction_log import INSERT_SQL  # noqa: E402
from z0_memory.stores.provenance import extracted_message_ids  # noqa: E402

THREADS = (1, 100, 500)


async def main(logged: int, repeat: int, data_dir: str | None) -> None:
    print(machine())
    async with Z0Memory(Settings(data_dir=temp_data_dir(data_dir), embedding_model="hash")) as memory:
        pm = memory.scope("bench")
        turns = [[f"m-{uuid.uuid4().hex}", f"m-{uuid.uuid4().hex}"] for _ in range(logged)]
        async with memory.db.connection(pm.scope) as conn:
            for ids in turns:
                await conn.execute(INSERT_SQL, {**pm.scope.params, "thread": "t", "message_ids": ids,
                                                "excerpt": "", "outcomes": "[]"})
        print(f"scope: {logged} extracted turns in the log; query repeated {repeat} times per thread length")
        for n in THREADS:
            asked = [ids[0] for ids in turns[-n:]][:-1] + [f"m-new-{uuid.uuid4().hex}"]  # the last turn is new
            found = await extracted_message_ids(memory.db, pm.scope, asked)
            assert len(found) == n - 1, (len(found), n)
            times = await timed(lambda asked=asked: extracted_message_ids(memory.db, pm.scope, asked), repeat)
            print(f"thread of {n:>3} user messages: {p50_p95(times)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logged", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    asyncio.run(main(args.logged, args.repeat, args.data_dir))
