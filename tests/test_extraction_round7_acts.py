"""Issue 16, round 7 (speech acts and precision): choices put as questions are pending, comparisons that pick a side
are choices, a reason in the next message reaches a choice the store holds even when the rules read none."""

from __future__ import annotations

import pytest

from extraction_support import P, by_key, firm, run
from z0_memory.offline.extractor import ExistingMemory, TurnMessage, extract_candidates


# --- a choice put as a question is tentative ---------------------------------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("Valkey for the cache, what do you think?", f"{P}:database:cache", "Valkey"),
    ("we'll put the jobs on RabbitMQ, thoughts?", f"{P}:stack:queue", "RabbitMQ"),
    ("消息队列用 Pulsar，你觉得呢？", f"{P}:stack:queue", "Pulsar"),
    ("缓存就用 Memcached 吧？", f"{P}:database:cache", "Memcached"),
    ("Typesense for search?", f"{P}:database:search", "Typesense"),
    ("open question: Algolia for search?", f"{P}:database:search", "Algolia"),
    ("待定：队列用 NATS", f"{P}:stack:queue", "NATS"),
])
def test_a_choice_put_as_a_question_is_pending(text, key, value):
    c = by_key(run(text))[key]
    assert c.value == value and c.hedged and not firm(c)


@pytest.mark.parametrize("first, then", [
    ("We'll use Kafka for the queue.", "What do you think?"),
    ("队列用 Kafka。", "你觉得呢？"),
    ("Typesense for search?", "I guess"),
])
def test_a_request_for_an_opinion_hedges_the_sentence_before(first, then):
    [c] = run(f"{first} {then}")
    assert c.hedged and not firm(c)


@pytest.mark.parametrize("text", [
    "what are the rate limits on Upstash Redis?",
    "Is Kafka what the other team uses?",
    "缓存用 Redis 吗？",
    "Redis or Memcached for the cache?",
    "你觉得 Rust 怎么样？",
    "部署是用 Docker Swarm 对吧？",
    "数据库我们用的是 CockroachDB 吧？",
    "Postgres on Neon, right?",
])
def test_a_real_question_still_states_nothing(text):
    assert run(text) == []


def test_a_firm_statement_stays_firm():
    c = by_key(run("We use Valkey for the cache."))[f"{P}:database:cache"]
    assert firm(c)


# --- a comparison that picks a side is a choice ------------------------------------------------------------------

@pytest.mark.parametrize("text, value, rival", [
    ("Hono > Express for this one. less ceremony", "Hono", "Express"),
    ("after the spike: Fastify over Koa for us", "Fastify", "Koa"),
    ("后端 Gin 比 Echo 更合适，中间件生态好", "Gin", "Echo"),
])
def test_a_comparison_that_picks_a_side_is_a_choice(text, value, rival):
    c = by_key(run(text))[f"{P}:stack:backend_framework"]
    assert c.value == value and firm(c) and rival not in (c.rationale or "")


def test_the_reason_after_a_comparison_is_kept_without_the_rival():
    c = by_key(run("Hono > Express for this one. less ceremony"))[f"{P}:stack:backend_framework"]
    assert c.rationale == "less ceremony"


@pytest.mark.parametrize("text", ["speed > features for the MVP", "I prefer RSpec over Minitest"])
def test_a_comparison_of_no_two_choices_is_left_alone(text):
    assert all(c.key != f"{P}:stack:backend_framework" for c in run(text))


def test_a_bare_refusal_is_no_reason():
    c = by_key(run("后端用 Gin，不用 Echo。"))[f"{P}:stack:backend_framework"]
    assert c.value == "Gin" and not c.rationale


# --- a reason in the next message reaches a choice the store holds ------------------------------------------------

_HELD = (ExistingMemory(1, "demo project, backend framework: Carter", key=f"{P}:stack:backend_framework",
                        value="Carter"),)


@pytest.mark.parametrize("before, reason", [
    ("tl;dr Carter for the service.", "reason: the routing is tiny and we need the DI container."),
    ("Carter 定了。", "原因是路由很少，我们又需要 DI 容器。"),
])
def test_a_reason_in_the_next_message_reaches_a_held_choice_the_rules_did_not_read(before, reason):
    out = extract_candidates([TurnMessage("user", reason, "u2")], project=P, existing=_HELD,
                             earlier=[TurnMessage("user", before, "u1")])
    c = by_key(out)[f"{P}:stack:backend_framework"]
    assert c.value == "Carter" and c.rationale


def test_a_question_that_names_a_held_choice_gets_no_reason():
    out = extract_candidates([TurnMessage("user", "because we need the DI container.", "u2")], project=P,
                             existing=_HELD, earlier=[TurnMessage("user", "how do I add auth to Carter?", "u1")])
    assert all(not c.rationale for c in out)


# --- fewer tentative writes where nothing is tentative, fewer choices where none is made --------------------------

@pytest.mark.parametrize("text, kept, dropped", [
    # a choice given up before it was made
    ("后端 Go + Kratos。本来想试试 go-zero，但团队没人用过。", "Kratos", "go-zero"),
    ("we were going to use MongoDB but the joins killed it, so Postgres for the db.", "Postgres", "MongoDB"),
    # a rival judged worse
    ("Hosting stays on Render, Heroku was way more expensive.", "Render", "Heroku"),
    ("部署继续用 Render，Heroku 更贵。", "Render", "Heroku"),
])
def test_a_choice_given_up_or_a_rival_judged_worse_is_not_chosen(text, kept, dropped):
    values = {c.value for c in run(text)}
    assert kept in values and dropped not in values


@pytest.mark.parametrize("text, value", [
    ("Frontend I'm torn between Svelte and Vue, probably Svelte.", "Svelte"),
    ("前端在 Svelte 和 Vue 之间纠结，我倾向 Svelte。", "Svelte"),
])
def test_options_weighed_are_not_chosen(text, value):
    [c] = [c for c in run(text) if c.key == f"{P}:stack:frontend_framework"]
    assert c.value == value and c.hedged


def test_a_remark_about_what_the_assistant_assumed_hedges_nothing():
    c = by_key(run("CI is Drone here, not Jenkins, I think you assumed Jenkins earlier"))[f"{P}:tooling:ci"]
    assert c.value == "Drone" and firm(c)


def test_saying_again_is_no_hedge():
    c = by_key(run("再说一下：后端是 Kratos，因为微服务工具链全。"))[f"{P}:stack:backend_framework"]
    assert c.value == "Kratos" and firm(c)
    assert all(not firm(c) for c in run("微信支付下个版本再说。"))  # "再说" alone still puts it off


@pytest.mark.parametrize("text, key", [
    ("CI 用 Drone，公司统一的。", f"{P}:tooling:ci"),
    ("Monitoring is Datadog, always has been.", f"{P}:tooling:monitoring"),
])
def test_a_convention_word_that_qualifies_a_choice_is_no_memory_apart(text, key):
    out = run(text)
    assert [c.key for c in out] == [key]


def test_a_convention_of_its_own_beside_a_choice_is_kept():
    out = run("We use Postgres, and all migrations are written by hand.")
    assert {c.key for c in out} == {f"{P}:database:database", None}


# --- what a correction replaces, what another team uses, what a name is like: no statement ------------------------

@pytest.mark.parametrize("text, kept, dropped", [
    ("纠正一下，之前说缓存是 Memcached，其实线上是 Redis。", "Redis", "Memcached"),
    ("I said Jenkins earlier, actually CI is Drone.", "Drone", "Jenkins"),
    ("我说错了，CI 是 Drone，Jenkins 是隔壁项目组的。", "Drone", "Jenkins"),
    ("we use Valkey for the cache, it's a drop-in for Redis", "Valkey", "Redis"),
])
def test_the_value_corrected_or_compared_to_is_not_stated(text, kept, dropped):
    values = {c.value for c in run(text)}
    assert kept in values and dropped not in values


def test_a_restatement_is_still_read():
    c = by_key(run("As I said before, the database is Postgres."))[f"{P}:database:database"]
    assert c.value == "Postgres"


@pytest.mark.parametrize("text", ["remember to always run the linter before you answer",
                                  "please always check the types before you reply"])
def test_a_standing_order_about_answering_is_an_instruction(text):
    ignored = []
    assert run(text, ignored=ignored) == [] and ignored


def test_a_team_habit_with_before_is_still_a_convention():
    [c] = run("We always run the linter before we merge.")
    assert c.key is None and c.value is None


# --- hedges in more wordings -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("We may adopt Pulsar as the message queue; this remains under discussion.", f"{P}:stack:queue", "Pulsar"),
    ("Memcached for the cache, tbd.", f"{P}:database:cache", "Memcached"),
])
def test_may_and_under_discussion_hedge(text, key, value):
    c = by_key(run(text))[key]
    assert c.value == value and c.hedged


def test_a_topic_that_leans_is_no_person_with_a_preference():
    # "消息队列这块倾向于 Pulsar": the project leans (pending), no one's liking is stored
    out = run("消息队列这块倾向于 Pulsar。")
    assert all(not firm(c) for c in out) and all(":preference:" not in (c.key or "") for c in out)
