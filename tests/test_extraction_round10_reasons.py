"""Issue 16, round 10 (the seed's reason): the rest of a message that settles one choice explains it. A later
sentence or clause that only talks about the choice or its rivals is its reason, not another statement of the key;
an agreement opening a clause ("就这么定了") is no part of the reason; with two choices, a sentence after both
explains neither by this rule; a sentence stating another slot explains nothing."""

from __future__ import annotations

import pytest

from extraction_support import P, by_key, firm, run
from z0_memory.offline.extractor import ExistingMemory, TurnMessage, extract_candidates


@pytest.mark.parametrize("text, key, value, reason_word", [
    # a rival described after the choice, with the reason in the same sentence
    ("Phoenix it is. Rails was the other candidate, but channels make the live feed trivial.",
     "stack:backend_framework", "Phoenix", "channels"),
    ("Backend: Sinatra. Rails was considered. We only have four webhook routes, so anything bigger is overhead.",
     "stack:backend_framework", "Sinatra", "webhook"),
    # the chosen name again, in a clause that explains it
    ("后端定 Gin，Echo 不考虑了，Gin 的中间件生态更成熟。", "stack:backend_framework", "Gin", "中间件"),
    ("队列定 RabbitMQ，Kafka 不考虑了，RabbitMQ 的延迟队列插件我们用惯了。", "stack:queue", "RabbitMQ", "延迟队列"),
    # an agreement before the reason
    ("缓存用 Redis 吧，就这么定了，运维简单。", "database:cache", "Redis", "运维"),
])
def test_what_else_the_message_says_about_its_one_choice_is_the_reason(text, key, value, reason_word):
    got = by_key(run(text))
    c = got[f"{P}:{key}"]
    assert c.value == value and firm(c)
    assert reason_word in (c.rationale or "")


def test_a_rival_in_the_reason_is_no_pending_memory_of_its_own():
    got = run("Phoenix it is. Rails was the other candidate, but channels make the live feed trivial.")
    assert [c.value for c in got if c.key == f"{P}:stack:backend_framework"] == ["Phoenix"]


def test_two_choices_share_no_reason_said_after_both():
    got = by_key(run("Backend: Sinatra. Queue: Sidekiq. The team has run both for years."))
    assert "years" not in (got[f"{P}:stack:backend_framework"].rationale or "")


@pytest.mark.parametrize("text, key", [
    ("Backend is Fastify. Might try Prisma as the ORM.", "stack:backend_framework"),
    ("后端用 Fastify。ORM 也许试试 Prisma。", "stack:backend_framework"),
])
def test_a_sentence_stating_another_slot_explains_nothing(text, key):
    c = by_key(run(text))[f"{P}:{key}"]
    assert c.value == "Fastify" and not c.rationale


def _held(key: str, value: str) -> tuple[ExistingMemory, ...]:
    return (ExistingMemory(local_id=1, content=f"{value}.", key=f"{P}:{key}", value=value),)


def _next_message(first: str, second: str, held: tuple[ExistingMemory, ...]):
    return extract_candidates([TurnMessage("user", second, "u2")], project=P, existing=held,
                              earlier=[TurnMessage("user", first, "u1")])


@pytest.mark.parametrize("first, second, key, value, reason_word", [
    ("So the backend question is settled: Ktor.",
     "Micronaut was tempting but nobody here has shipped it and the pilot starts in May.",
     "stack:backend_framework", "Ktor", "pilot"),
    ("后端框架定了：Laravel。", "Symfony 我们也评估过，不过团队里三个人写了好几年 Laravel。",
     "stack:backend_framework", "Laravel", "好几年"),
])
def test_the_next_message_talking_about_a_rival_explains_the_held_choice(first, second, key, value, reason_word):
    got = by_key(_next_message(first, second, _held(key, value)))
    c = got[f"{P}:{key}"]
    assert c.value == value and reason_word in (c.rationale or "")


def test_a_correction_in_the_next_message_is_no_reason_for_the_held_choice():
    got = _next_message("DB will be Postgres 15.", "sorry, I meant Postgres 16 not 15.",
                        _held("database:database", "Postgres 15"))
    assert not any(c.value == "Postgres 15" and c.rationale for c in got)
