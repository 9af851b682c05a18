"""Issue 16, round 11 (values stated without a decision verb): recaps and bare lists of the stack, a value named with
what it is for, and short answers to the assistant's question about one slot ("用。", "Ztest 吧", "Vue 3 那个，就那么
办吧"). Sentences of our own, English and Chinese; each group also says what must not be stored."""

from __future__ import annotations

import pytest

from extraction_support import P, by_key, firm, run
from z0_memory.offline.extractor import ExistingMemory


def _held(*pairs: tuple[str, str]) -> tuple[ExistingMemory, ...]:
    return tuple(ExistingMemory(n, f"{key} {value}", f"{P}:{key}", value) for n, (key, value) in enumerate(pairs, 1))


# --- a recap says the held values again: a repeat in the store's own spelling, never a new version ----------------

def test_a_recap_in_another_spelling_repeats_the_held_fact_in_its_spelling():
    held = _held(("database:database", "PostgreSQL"), ("stack:backend_framework", "Django"))
    got = by_key(run("quick recap for the wiki: django, postgres, nothing else changed", existing=held))
    db = got[f"{P}:database:database"]
    assert db.same_as == 1 and db.value == "PostgreSQL" and not db.supersedes
    assert got[f"{P}:stack:backend_framework"].same_as == 2


def test_a_recap_naming_the_held_value_in_more_words_repeats_it():
    held = _held(("process:merge_strategy", "squash merges"), ("process:deploy", "GKE"))
    got = by_key(run("recap so we're aligned: Rust, squash merges only, GKE Autopilot", existing=held))
    merge, deploy = got[f"{P}:process:merge_strategy"], got[f"{P}:process:deploy"]
    assert merge.same_as == 1 and not merge.supersedes and merge.value == "squash merges"
    assert deploy.same_as == 2 and not deploy.supersedes and deploy.value == "GKE"


def test_a_recap_naming_a_shorter_name_is_no_repeat_of_the_longer_one():
    held = _held(("database:migrations", "Prisma Migrate"),)
    c = by_key(run("reminder: Prisma Migrate stays, Fastify, Postgres", existing=held))[f"{P}:database:migrations"]
    assert c.same_as == 1
    got = by_key(run("提醒一下：ORM 是 Prisma", existing=_held(("database:orm", "Prisma Migrate"),)))
    assert got[f"{P}:database:orm"].value == "Prisma"


def test_a_recap_asked_back_changes_no_held_value():
    held = _held(("database:database", "MySQL"),)
    got = by_key(run("回顾一下：Laravel、Postgres、Redis 做队列，对吧？", existing=held))
    db = got.get(f"{P}:database:database")
    assert db is None or not db.supersedes


def test_a_recap_that_states_a_change_with_its_own_verb_still_changes_it():
    held = _held(("database:database", "MySQL"),)
    got = by_key(run("recap: Laravel, Redis. and we switched to Postgres last week", existing=held))
    assert got[f"{P}:database:database"].supersedes == [1]


# --- a value named with what it is for ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("omg yes valkey for lobbies", "database:cache", "valkey"),
    ("and mysql for player profiles + inventories", "database:database", "mysql"),
    ("Mosquitto for device telemetry.", "stack:mqtt_broker", "Mosquitto"),
    ("so Qdrant on the cluster we already run.", "database:vector_store", "Qdrant"),
])
def test_a_value_for_a_purpose_is_its_slots_value(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value and firm(c)


@pytest.mark.parametrize("text", [
    "Redis for caching is overkill",  # a judgement goes on after the purpose
    "dbt for the transforms inside BigQuery",  # the value named is where the other one runs
    "Postgres for the analytics would be too slow",
])
def test_a_purpose_followed_by_a_judgement_is_no_choice(text):
    assert not [c for c in run(text) if c.key and firm(c)]


def test_an_mqtt_broker_is_no_job_queue():
    got = by_key(run("the mqtt broker is EMQX. not sure yet whether to add Oban for jobs"))
    assert got[f"{P}:stack:mqtt_broker"].value == "EMQX"
    queue = got.get(f"{P}:stack:queue")
    assert queue is None or not firm(queue)


def test_assent_before_a_verdict_is_no_value():
    got = run("A: Drift（基于 SQLite）更稳。要不要用 Drift？", "有道理，那就它吧")
    assert not [c for c in got if c.value == "有道理"]


def test_schema_drift_is_no_orm():
    assert f"{P}:database:orm" not in by_key(run("we keep an eye on schema drift after every deploy"))


# --- short answers to the assistant's question about one slot -----------------------------------------------------

@pytest.mark.parametrize("question, reply", [
    ("缓存用 Redis 吗？", "用。"),
    ("要不要上 Redis 做缓存？", "上吧"),
    ("要不要上 Redis 做缓存？", "要。"),
])
def test_a_chinese_yes_echoing_the_questions_verb_accepts_its_value(question, reply):
    c = by_key(run(f"A: {question}", reply)).get(f"{P}:database:cache")
    assert c is not None and c.value == "Redis" and firm(c)


@pytest.mark.parametrize("question, reply", [
    ("缓存用 Redis 吗？", "不用。"),  # a no
    ("缓存用什么？", "用。"),  # a wh-question: the echo names nothing
    ("缓存用 Redis 吗？", "再说吧"),  # no echo of its verb (a hedged reply: pending at most)
])
def test_an_echo_that_is_no_yes_accepts_nothing(question, reply):
    c = by_key(run(f"A: {question}", reply)).get(f"{P}:database:cache")
    assert c is None or not firm(c)


@pytest.mark.parametrize("offer, reply, key, value", [
    ("测试可以用 Ztest，或者 Unity/Ceedling。", "Ztest 吧，和 Zephyr 集成好。", "tooling:testing", "Ztest"),
    ("For the jobs you could run Celery or Dramatiq.", "Dramatiq. simpler.", "stack:queue", "Dramatiq"),
])
def test_a_reply_picking_one_of_the_offered_alternatives_is_an_answer(offer, reply, key, value):
    c = by_key(run(f"A: {offer}", reply)).get(f"{P}:{key}")
    assert c is not None and c.value == value


def test_a_reply_to_a_statement_offering_nothing_is_no_answer():
    assert not [c for c in run("A: I added the Dockerfile. Tests or docs next.", "Cool.") if c.key]


def test_that_way_then_confirms_the_pending_value_it_names():
    pending = (ExistingMemory(1, "前端用 Svelte", f"{P}:stack:frontend_framework", "Svelte", pending=True),)
    c = by_key(run("A: 收到。", "Svelte 那个，就那么办吧。", existing=pending))[f"{P}:stack:frontend_framework"]
    assert c.value == "Svelte" and c.confirms and firm(c)
