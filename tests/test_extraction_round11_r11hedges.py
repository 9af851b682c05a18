"""Round 11, hedges the offline rules stored as settled: a choice put off by a remark ("but let me sleep on it",
"pending X's ok", "老板还没点头"), a plan under a condition or for later ("if it gets slow we'll put Memcached in front",
"以后用户多了再迁 MySQL"), a trial ("let's try Cypress for a week and see"), a comparison still to make, and remarks
that weigh an option against the one held tentative. What is firm stays firm: "for now" / "先用", and a hedge in
one clause does not hedge another clause's choice. Sentences of our own, English and Chinese."""

from __future__ import annotations

import pytest

from extraction_support import P, firm, run


def _values(candidates, key):
    return [c for c in candidates if c.key == f"{P}:{key}"]


@pytest.mark.parametrize("text, key, value", [
    ("Bundler: I'd say esbuild, it's faster, but let me sleep on it.", "tooling:bundler", "esbuild"),
    ("For the message queue, RabbitMQ, pending Marco's ok.", "stack:queue", "RabbitMQ"),
    ("If the reports get slow we'll put Memcached in front of them, but not yet.", "database:cache", "Memcached"),
    ("Let's try Cypress for the e2e tests for a week and see if it holds up.", "tooling:e2e_testing", "Cypress"),
    ("Queue: we'll compare RabbitMQ and SQS next sprint; RabbitMQ is probably enough.", "stack:queue", "RabbitMQ"),
    ("搜索打算换成 Elasticsearch，不过要先跟 DBA 确认一下磁盘。", "database:search", "Elasticsearch"),
    ("消息队列打算用 RabbitMQ，老板还没点头。", "stack:queue", "RabbitMQ"),
])
def test_a_choice_put_off_is_pending_never_settled(text, key, value):
    found = _values(run(text), key)
    assert found, text
    assert all(not firm(c) for c in found), text
    assert any(c.value == value for c in found), text


@pytest.mark.parametrize("text, settled_key, settled, later_key, later", [
    ("数据库先用 SQLite，以后用户多了再迁 MySQL。", "database:database", "SQLite", "database:database", "MySQL"),
    ("消息队列先用 Redis Streams 顶着，量大了再换 RabbitMQ。", "stack:queue", "Redis Streams", "stack:queue", "RabbitMQ"),
])
def test_the_move_planned_for_later_is_pending_and_the_first_choice_holds(text, settled_key, settled, later_key, later):
    found = run(text)
    assert any(c.value == settled and firm(c) for c in _values(found, settled_key)), text
    assert any(c.value == later and not firm(c) for c in _values(found, later_key)), text
    assert not any(c.value == later and firm(c) for c in found), text


def test_options_weighed_against_the_tentative_one_are_no_fact():
    found = run("Orchestration: we're evaluating Prefect. Luigi is the safe pick but it's showing its age.")
    assert not any(c.value == "Luigi" for c in found)
    assert any(c.value == "Prefect" and not firm(c) for c in found)


@pytest.mark.parametrize("text, key, value", [
    ("ORM 先用 Prisma，有问题再换。", "database:orm", "Prisma"),  # revisable, still the choice
    ("We use Jenkins for CI for now, and if it gets painful we'll move to Drone.", "tooling:ci", "Jenkins"),
    ("数据库定了用 MySQL，队列还没想好，可能用 Kafka。", "database:database", "MySQL"),
    ("We use Postgres. I'll check the migration logs later.", "database:database", "Postgres"),
    ("Let's use pytest for the tests.", "tooling:testing", "pytest"),
])
def test_what_is_firm_stays_firm(text, key, value):
    assert any(c.value == value and firm(c) for c in _values(run(text), key)), text


def test_a_condition_for_later_does_not_hedge_the_choice_before_it():
    found = run("We use Jenkins for CI for now, and if it gets painful we'll move to Drone.")
    assert not any(c.value == "Drone" and firm(c) for c in found)
