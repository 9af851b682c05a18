"""Round 6 of issue 16: reasons in more shapes, standing orders to the assistant never stored; sentences of our own
(English and Chinese), none from the labelled data sets.
"""

from __future__ import annotations

from z0_memory.schemas import Candidate

from extraction_support import P, run

CACHE = f"{P}:database:cache"
QUEUE = f"{P}:infra:message_queue"


def only(candidates: list[Candidate], value: str) -> Candidate:
    hits = [c for c in candidates if c.value == value]
    assert len(hits) == 1, candidates
    return hits[0]


# A reason said before the choice, tied to it by "so" / "所以" ----------------------------------------------------


def test_a_reason_before_so_explains_the_choice() -> None:
    got = only(run("Memcached keeps evicting our sessions, so we'll use Redis for the cache."), "Redis")
    assert "evicting" in (got.rationale or "") and not got.hedged
    zh = only(run("Memcached 老是把会话挤掉，所以缓存用 Redis。"), "Redis")
    assert "会话" in (zh.rationale or "")


def test_so_after_a_decision_is_no_reason_for_the_next_one() -> None:
    # the clause before "so" states a choice of its own: it is no reason, both choices stand
    got = run("We use Postgres, so the cache will be Redis.")
    assert {c.value for c in got} >= {"Postgres", "Redis"}
    assert only(got, "Redis").rationale is None


# "for X reasons", "出于 X 考虑", "鉴于 X" --------------------------------------------------------------------------


def test_for_x_reasons_is_a_reason() -> None:
    got = only(run("We're going with Redis for the cache for latency and cost reasons."), "Redis")
    assert "latency" in (got.rationale or "")
    zh = only(run("出于成本考虑，缓存用 Redis。"), "Redis")
    assert "成本" in (zh.rationale or "")
    zh2 = only(run("鉴于团队已经熟悉它，缓存用 Redis。"), "Redis")
    assert "团队" in (zh2.rationale or "")


# Labelled lines: "reason = ...", "rejected: X", "备选：X" ---------------------------------------------------------


def test_labelled_lines_give_the_reason_and_turn_the_rival_down() -> None:
    got = run("- cache: Redis\n- rejected: Memcached\n- reason = we need persistence for sessions")
    assert [c.value for c in got if c.key == CACHE] == ["Redis"]
    assert "persistence" in (got[0].rationale or "")
    one_line = run("decision log: cache = Redis; alternative considered = Memcached; reason = we need persistence")
    redis = only(one_line, "Redis")
    assert "persistence" in (redis.rationale or "")
    assert not any(c.value == "Memcached" for c in one_line)
    zh = run("- 缓存：Redis\n- 备选：Memcached\n- 理由：需要持久化会话")
    assert [c.value for c in zh if c.key == CACHE] == ["Redis"]
    assert "持久化" in (zh[0].rationale or "")


# Standing orders about the assistant's own output, however polite -------------------------------------------------


def test_polite_standing_orders_are_never_stored() -> None:
    for text in ("please always use Postgres in your examples",
                 "make sure you always use snake_case for db columns in your answers",
                 "Going forward, default to Vitest whenever you write tests for me.",
                 "记得每次都用 TypeScript 写示例",
                 "以后回答请都用 pytest 写测试"):
        ignored: list[str] = []
        assert run(text, ignored=ignored) == [], text
        assert ignored, text


def test_an_acceptance_keeps_its_proposal_without_the_order_after_it() -> None:
    ignored: list[str] = []
    got = run("A: Want me to use Redis for the cache?", "yes please, and please always show code in Go",
              ignored=ignored)
    assert [c.value for c in got] == ["Redis"] and ignored
    zh = run("A: 缓存用 Redis 可以吗？", "可以，以后给我的代码都用 Go 写", ignored=(zh_ignored := []))
    assert [c.value for c in zh] == ["Redis"] and zh_ignored


def test_a_project_rule_is_still_a_fact() -> None:
    # no "your", "for me", "whenever you": a convention of the project, not an order about the answers
    assert only(run("We always use snake_case for database columns."), "snake_case")
    assert only(run("以后都用 pytest 写测试。"), "pytest")
