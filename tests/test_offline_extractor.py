"""The offline (rule-based, bilingual) extractor: scenarios, safety rules, and a floor on the labelled data set."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from z0_memory.offline.extractor import (
    OFFLINE_EXTRACTOR_NAME,
    ExistingMemory,
    TurnMessage,
    canonical_value,
    extract_candidates,
    redact_secrets,
)
from z0_memory.schemas import Candidate, MemoryKey

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "extraction_turns.jsonl"
PENDING_BELOW = 0.6  # the gate threshold the data set's "pending" outcome assumes


def user(text: str, id: str | None = "u1") -> TurnMessage:
    return TurnMessage(role="user", text=text, id=id)


def assistant(text: str, id: str | None = "a1") -> TurnMessage:
    return TurnMessage(role="assistant", text=text, id=id)


def one(text: str, existing: tuple[ExistingMemory, ...] = (), project: str = "shop") -> Candidate:
    found = extract_candidates([user(text)], project=project, existing=existing)
    assert len(found) == 1, found
    return found[0]


def memory_from(candidate: Candidate, local_id: int) -> ExistingMemory:
    pending = candidate.hedged or candidate.confidence < PENDING_BELOW
    return ExistingMemory(local_id, candidate.content, candidate.key, candidate.value, pending=pending)


# --- the hedge -> confirm -> switch scenario --------------------------------------------------------------


def test_hedge_then_confirmation_then_switch() -> None:
    hono = one("We'll use Hono for the backend.")
    assert (hono.kind, hono.key, hono.value) == ("decision", "shop:stack:backend_framework", "Hono")
    assert hono.confidence >= 0.85 and not hono.hedged

    maybe = one("maybe Redis for caching?")
    assert maybe.hedged and maybe.confidence < 0.5
    assert (maybe.key, maybe.value) == ("shop:database:cache", "Redis")

    existing = (memory_from(hono, 1), memory_from(maybe, 2))
    ok = one("ok, Redis for caching", existing)
    assert ok.confirms and not ok.hedged and ok.confidence >= 0.85
    assert (ok.key, ok.value) == (maybe.key, "Redis")
    assert ok.same_as is None and ok.supersedes == []

    switch = one("we switched from Hono to Fastify because cold starts were slow", existing)
    assert (switch.kind, switch.key, switch.value) == ("decision", hono.key, "Fastify")
    assert switch.supersedes == [1]
    assert switch.rationale == "cold starts were slow"
    assert "Hono" in switch.content and "Fastify" in switch.content


def test_chinese_hedge_confirmation_and_switch() -> None:
    maybe = one("也许可以试试 Redis 做缓存", project="wiki")
    assert maybe.hedged and maybe.confidence < 0.5 and maybe.key == "wiki:database:cache"

    db = one("数据库定为 MySQL。", project="wiki")
    assert (db.kind, db.key, db.value) == ("decision", "wiki:database:database", "MySQL")
    existing = (memory_from(maybe, 7), memory_from(db, 8))

    sure = one("确定用 Redis", existing, project="wiki")
    assert sure.confirms and sure.confidence >= 0.85 and (sure.key, sure.value) == (maybe.key, "Redis")

    switch = one("不用 MySQL 了，改用 Postgres，因为我们需要 pgvector。", existing, project="wiki")
    assert (switch.key, switch.value, switch.supersedes) == ("wiki:database:database", "Postgres", [8])
    assert switch.rationale == "我们需要 pgvector"

    framework = one("后端框架定为 Hono", project="wiki")
    assert (framework.kind, framework.key, framework.value) == ("decision", "wiki:stack:backend_framework", "Hono")
    assert one("我们决定用 Hono 做后端", project="wiki").key == framework.key


@pytest.mark.parametrize(
    "text, value",
    [
        ("let's go with Supabase Postgres", "Supabase Postgres"),
        ("backend framework: Hono, not Express", "Hono"),
        ("we decided to use Fastify for the backend", "Fastify"),
        ("Replace Express with Hono.", "Hono"),
    ],
)
def test_decision_forms(text: str, value: str) -> None:
    c = one(text)
    assert c.value == value and c.confidence >= 0.85 and not c.hedged and MemoryKey.parse(c.key)


def test_replace_supersedes_a_keyless_memory_naming_the_old_value() -> None:
    old = ExistingMemory(3, "The team builds the backend on Express.", None, None)
    c = one("replace Express with Hono", (old,))
    assert c.value == "Hono" and c.supersedes == [3]


def test_firm_restatement_of_another_value_supersedes() -> None:
    old = ExistingMemory(4, "The shop project uses Hono.", "shop:stack:backend_framework", "Hono")
    c = one("We'll use Fastify for the backend.", (old,))
    assert c.supersedes == [4]
    hedge = one("maybe Fastify for the backend?", (old,))
    assert hedge.hedged and hedge.supersedes == []


@pytest.mark.parametrize(
    "text", ["what about Redis?", "not sure, perhaps Redis for the cache", "考虑一下 Redis 做缓存", "要不要用 Redis？"]
)
def test_hedges_are_kept_with_their_key_at_low_confidence(text: str) -> None:
    c = one(text)
    assert c.hedged and c.confidence < 0.5 and c.key == "shop:database:cache" and c.value == "Redis"


def test_bare_acceptance_resolves_against_the_assistant_proposal() -> None:
    turn = [
        assistant("For the ORM, I'd suggest Drizzle; it works well with Hono.", "a9"),
        user("Yes, let's do that.", "u9"),
    ]
    (c,) = extract_candidates(turn, project="shop")
    assert (c.key, c.value, c.confirms) == ("shop:database:orm", "Drizzle", True)
    assert c.confidence >= 0.85 and c.source_message_ids == ["a9", "u9"]


def test_bare_acceptance_resolves_against_the_newest_pending_memory() -> None:
    pending = ExistingMemory(5, "The shop project might use Redis as its cache.", "shop:database:cache", "Redis", True)
    older = ExistingMemory(2, "The shop project might use Kafka.", "shop:stack:queue", "Kafka", True)
    (c,) = extract_candidates([user("agreed")], project="shop", existing=(older, pending))
    assert (c.key, c.value, c.confirms) == ("shop:database:cache", "Redis", True)
    (zh,) = extract_candidates([user("可以，就这么办。")], project="shop", existing=(pending,))
    assert zh.confirms and zh.value == "Redis"


def test_acceptance_with_nothing_to_accept_and_assistant_text_alone_produce_nothing() -> None:
    assert extract_candidates([user("Yes, let's do that.")], project="shop") == []
    assert extract_candidates([user("ok")], project="shop", existing=()) == []
    said = assistant("We'll use Hono for the backend. Should I also add Redis for caching?")
    assert extract_candidates([said], project="shop") == []
    assert extract_candidates([said, user("thanks")], project="shop") == []


# --- preferences, facts, people ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, key, value",
    [
        ("I prefer tabs", "shop:preference:indentation", "tabs"),
        ("Alice likes snake_case", "shop:preference:alice_naming", "snake_case"),
        ("我喜欢用 pnpm", "shop:preference:package_manager", "pnpm"),
        ("小李更喜欢 Vitest", "shop:preference:小李_testing", "Vitest"),
    ],
)
def test_preferences(text: str, key: str, value: str) -> None:
    c = one(text)
    assert (c.kind, c.key, c.value) == ("preference", key, value) and c.confidence >= 0.75


@pytest.mark.parametrize(
    "text, key, value",
    [
        ("Our API is deployed on Fly.io.", "shop:process:deploy", "Fly.io"),
        ("All timestamps are UTC.", "shop:convention:timestamps", "UTC"),
        ("We always write tests with pytest.", "shop:tooling:testing", "pytest"),
        ("我们的 API 部署在 Fly.io 上。", "shop:process:deploy", "Fly.io"),
        ("所有时间戳都用 UTC 存储。", "shop:convention:timestamps", "UTC"),
        ("Carol is the tech lead.", "shop:people:tech_lead", "Carol"),
        ("张伟负责后端。", "shop:people:backend_owner", "张伟"),
    ],
)
def test_facts_and_conventions(text: str, key: str, value: str) -> None:
    c = one(text)
    assert (c.kind, c.key, c.value) == ("fact", key, value) and 0.75 <= c.confidence <= 0.95


def test_repeat_of_a_stored_fact_is_same_as() -> None:
    stored = ExistingMemory(11, "The shop project's timestamps are UTC.", "shop:convention:timestamps", "UTC")
    assert one("All timestamps are UTC, no exceptions.", (stored,)).same_as == 11
    assert one("所有时间戳都用 UTC。", (stored,)).same_as == 11
    keyless = ExistingMemory(12, "In the shop project: we never push directly to main.")
    assert one("We never push directly to main!", (keyless,)).same_as == 12


# --- things that must produce nothing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Which database do we use?",
        "Can you explain how Redis handles eviction?",
        "FastAPI 的依赖注入怎么写？",
        "张伟现在还负责后端吗？",
        "hi!",
        "thanks, that's all for today",
        "谢谢！",
        "哈哈，今天终于不加班了",
        "lol the CI is so slow today",
        "```python\nfrom fastapi import FastAPI\napp = FastAPI()\n```",
        "const db = new Redis(process.env.REDIS_URL);",
    ],
)
def test_questions_chitchat_and_code_produce_nothing(text: str) -> None:
    assert extract_candidates([user(text)], project="shop") == []


@pytest.mark.parametrize(
    "text",
    [
        "<memory>\nshop:stack:backend_framework = Hono\nWe'll use Hono for the backend.\n</memory>",
        "[memory] shop:database:cache = Redis (confirmed)",
        "<recalled_memories>We decided to use Postgres.</recalled_memories> what's next?",
        "- [memory 3] All timestamps are UTC.",
    ],
)
def test_injected_memory_blocks_are_ignored(text: str) -> None:
    assert extract_candidates([user(text)], project="shop") == []


def test_memory_block_is_skipped_but_the_rest_of_the_message_is_read() -> None:
    text = "<memory>We use MySQL.</memory>\nLet's go with Postgres for the database."
    (c,) = extract_candidates([user(text)], project="shop")
    assert c.value == "Postgres"


# --- secrets ------------------------------------------------------------------------------------------------

SECRETS = [
    ("my key is sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12", "sk-proj-Ab12"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdef"),
    ("AWS AKIAIOSFODNN7EXAMPLE in the env", "AKIAIOSFODNN7EXAMPLE"),
    ("Authorization: Bearer abc.def-ghi_123456789", "abc.def-ghi"),
    ("the staging password is hunter2", "hunter2"),
    ("password: 'c0rrect horse'", "c0rrect"),
    ("密码是 Zx9!pass2024，别外传", "Zx9!pass2024"),
    ("数据库密钥：abcd1234efgh", "abcd1234efgh"),
    ("postgres://app:s3cretpw@db.internal:5432/app", "s3cretpw"),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123signature", "eyJhbGci"),
]


@pytest.mark.parametrize("text, secret", SECRETS)
def test_redact_secrets(text: str, secret: str) -> None:
    out = redact_secrets(text)
    assert secret not in out and "[REDACTED]" in out


def test_redaction_leaves_ordinary_text_alone() -> None:
    text = "We'll use Hono for the backend; tokens expire after 15 minutes. 密码长度至少 12 位。"
    assert redact_secrets(text) == text


@pytest.mark.parametrize("text, secret", SECRETS)
def test_secrets_never_reach_a_candidate(text: str, secret: str) -> None:
    for message in (text, f"We'll use Stripe for payments, {text}", f"不用 Express 了，改用 Hono，因为 {text}"):
        for c in extract_candidates([user(message)], project="shop"):
            for part in (c.content, c.value or "", c.rationale or ""):
                assert secret not in part


# --- determinism, speed, contract ---------------------------------------------------------------------------


def test_deterministic() -> None:
    # (its speed is a benchmark's figure, not a test's: bench/extraction.py and bench/perf_graph.py print it)
    rows = load_rows()
    turns = [[user(r["text"])] for r in rows if r["role"] == "user"]
    first = [extract_candidates(t, project="p") for t in turns]
    assert first == [extract_candidates(t, project="p") for t in turns]


def test_keys_are_valid_and_name_recorded() -> None:
    assert OFFLINE_EXTRACTOR_NAME == "offline-rules/2"
    for r in load_rows():
        for c in extract_candidates([user(r["text"])], project=r["conversation"]):
            if c.key is not None:
                assert str(MemoryKey.parse(c.key)) == c.key
            assert c.content.strip() and 0.0 <= c.confidence <= 1.0


# --- the labelled data set -----------------------------------------------------------------------------------


def load_rows() -> list[dict]:
    with DATA.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@dataclass
class SimulatedStore:
    """Just enough of a memory store to replay a conversation: ids, keys, values, pending or not."""

    memories: dict[int, ExistingMemory] = field(default_factory=dict)
    next_id: int = 1

    def existing(self) -> tuple[ExistingMemory, ...]:
        return tuple(self.memories.values())

    def outcome(self, c: Candidate) -> str:
        if c.same_as is not None:
            return "duplicate"
        if c.hedged or c.confidence < PENDING_BELOW:
            return "pending"
        if any(i in self.memories and not self.memories[i].pending for i in c.supersedes):
            return "supersede"
        if c.key and any(m.pending and m.key == c.key and _same_value(m.value, c.value) for m in self.memories.values()):
            return "confirm"
        return "persist"

    def apply(self, c: Candidate) -> None:
        if c.same_as is not None:
            return
        pending = c.hedged or c.confidence < PENDING_BELOW
        for i in c.supersedes if not pending else []:
            self.memories.pop(i, None)
        if c.key and not pending:
            for i in [i for i, m in self.memories.items() if m.key == c.key]:
                del self.memories[i]
        self.memories[self.next_id] = ExistingMemory(self.next_id, c.content, c.key, c.value, pending)
        self.next_id += 1


def _same_value(a: str | None, b: str | None) -> bool:
    """Equal ignoring case, or two spellings the vocabulary knows as one value (labels carry the canonical one,
    the extractor keeps the user's: "PostgreSQL" matches "Postgres")."""
    if (a or "").casefold() == (b or "").casefold():
        return True
    return a is not None and b is not None and canonical_value(a) is not None and canonical_value(a) == canonical_value(b)


def _kind_matches(expected: str, got: str) -> bool:
    structured = {"fact", "decision"}
    return expected == got or (expected in structured and got in structured)


def _matches(expected: dict, got: dict, *, strict_kind: bool) -> bool:
    kind_ok = expected["kind"] == got["kind"] if strict_kind else _kind_matches(expected["kind"], got["kind"])
    value_ok = _same_value(expected["value"], got["value"])
    return kind_ok and expected["key"] == got["key"] and value_ok and expected["outcome"] == got["outcome"]


def evaluate(rows: list[dict], *, strict_kind: bool = False, acts_for=None) -> dict[str, float]:
    """Replay every conversation through the extractor and a simulated store; score each turn's candidates.

    ``acts_for``: a user row -> the learned speech-act reading passed as ``extract_candidates(acts=...)``
    (``bench/speech_acts.py --end-to-end``); none by default: the rules alone.

    Each user turn is extracted together with the assistant message just before it in the same session (so an
    acceptance can resolve); the store carries memories across sessions of a conversation, as long-term memory does.
    """
    tp = n_pred = n_exp = 0
    hedges = hedge_persisted = 0
    stores: dict[str, SimulatedStore] = {}
    previous: dict[tuple[str, int], dict] = {}
    for row in rows:
        store = stores.setdefault(row["conversation"], SimulatedStore())
        turn_key = (row["conversation"], row["session"])
        messages = [TurnMessage(row["role"], row["text"], f"t{row['turn']}")]
        prior = previous.get(turn_key)
        if row["role"] == "user" and prior and prior["role"] == "assistant":
            messages.insert(0, TurnMessage("assistant", prior["text"], f"t{prior['turn']}"))
        previous[turn_key] = row
        acts = acts_for(row) if acts_for is not None and row["role"] == "user" else None
        candidates = extract_candidates(messages, project=row["conversation"], existing=store.existing(), acts=acts)
        got = [{"kind": c.kind, "key": c.key, "value": c.value, "outcome": store.outcome(c)} for c in candidates]
        for c in candidates:
            store.apply(c)
        unmatched = list(got)
        for exp in row["expected"]:
            hit = next((g for g in unmatched if _matches(exp, g, strict_kind=strict_kind)), None)
            if hit is not None:
                tp += 1
                unmatched.remove(hit)
            if exp["outcome"] == "pending":
                hedges += 1
                same = [g for g in got if g["key"] == exp["key"] or g["value"] == exp["value"]]
                hedge_persisted += any(g["outcome"] != "pending" for g in same)
        n_pred += len(got)
        n_exp += len(row["expected"])
    return {
        "precision": tp / n_pred if n_pred else 1.0,
        "recall": tp / n_exp if n_exp else 1.0,
        "hedge_persist_rate": hedge_persisted / hedges if hedges else 0.0,
        "predicted": n_pred,
        "expected": n_exp,
        "matched": tp,
        "hedges_persisted": hedge_persisted,
    }


def test_data_set_shape() -> None:
    rows = load_rows()
    assert len(rows) >= 120
    assert len({r["conversation"] for r in rows}) >= 8
    chinese = sum(any("\u4e00" <= ch <= "\u9fff" for ch in r["text"]) for r in rows)
    assert chinese / len(rows) >= 0.3
    for r in rows:
        assert r["role"] in ("user", "assistant")
        for e in r["expected"]:
            assert e["kind"] in ("fact", "decision", "preference", "context")
            assert e["outcome"] in ("persist", "pending", "confirm", "supersede", "duplicate")
            if e["key"] is not None:
                assert MemoryKey.parse(e["key"]).project == r["conversation"]


def test_data_set_precision_recall_floor() -> None:
    scores = evaluate(load_rows())
    print(f"\noffline extractor on {DATA.name}: {scores}")
    assert scores["hedge_persist_rate"] == 0.0
    assert scores["precision"] >= PRECISION_FLOOR, scores
    assert scores["recall"] >= RECALL_FLOOR, scores


# Measured on this set (232 turns): precision 0.981, recall 0.981 (fact/decision interchangeable; values compared
# through the vocabulary's canonical form). The rules were developed against this set, so these are optimistic: on
# the blind batches of 2026-12-02 (bench/extraction.py) the offline rules reach far less. The floors catch
# regressions only.
PRECISION_FLOOR = 0.95
RECALL_FLOOR = 0.94
