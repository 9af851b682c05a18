"""Issue 16, round 8 (speech acts and outcomes): a verdict that points back settles the pending idea it names, a
restatement of held facts is a repeat, a hedged reply to the assistant's offer is pending, a judgement of the rival
turned down is the choice's reason, an opinion request without its question mark still asks."""

from __future__ import annotations

import pytest

from extraction_support import P, by_key, firm, run
from z0_memory.offline.extractor import ExistingMemory


def _pending(key: str, value: str, local_id: int = 1) -> ExistingMemory:
    return ExistingMemory(local_id, f"{P} project: maybe {value}", f"{P}:{key}", value, pending=True)


def _held(key: str, value: str, local_id: int = 1) -> ExistingMemory:
    return ExistingMemory(local_id, f"{P} project: {value}", f"{P}:{key}", value)


# --- a verdict pointing back settles the pending idea it names ---------------------------------------------------

@pytest.mark.parametrize("text", [
    "Load test is done, Typesense handled it fine. We're going with it.",
    "We tried Typesense on the staging data, really fast. Locking it in.",
    "Typesense 压测过了，延迟很低，就它了。",
    "Typesense 过了安全评审，就是它了",
    "Typesense 评估完了，就用它吧",
])
def test_a_verdict_pointing_back_confirms_the_pending_idea(text):
    c = by_key(run(text, existing=(_pending("database:search", "Typesense"),)))[f"{P}:database:search"]
    assert c.value == "Typesense" and firm(c) and c.confirms


@pytest.mark.parametrize("text", [
    "Typesense looked fine. Maybe we'll go with it.",  # a hedged verdict settles nothing
    "Typesense 还行，要不就用它？",
    "Typesense was too slow on our data, so we're not going with it.",
    "Typesense 扛不住，就用它吧",  # judged badly right before the verdict
])
def test_a_verdict_that_is_hedged_refused_or_after_a_bad_judgement_settles_nothing(text):
    got = by_key(run(text, existing=(_pending("database:search", "Typesense"),)))
    assert not any(c.value == "Typesense" and firm(c) for c in got.values())


def test_a_verdict_points_back_only_to_a_pending_idea():
    # a name said in passing is no referent: "Mongo latency was fine ... going with it" settles nothing here
    assert run("The Mongo latency numbers were fine in the benchmark. We're going with it for sessions.") == []


@pytest.mark.parametrize("text", ["Typesense's in, set it up this morning.", "Typesense’s in. Wired it up last night."])
def test_a_name_said_to_be_in_is_chosen(text):
    c = by_key(run(text, existing=(_pending("database:search", "Typesense"),)))[f"{P}:database:search"]
    assert c.value == "Typesense" and firm(c)


# --- a restatement of held facts is a repeat -----------------------------------------------------------------------

HELD = (_held("stack:language", "Elixir", 1), _held("database:cache", "Valkey", 2),
        _held("stack:queue", "Oban", 3), _held("people:tech_lead", "Priya", 4), _held("tooling:analytics", "Umami", 5))


@pytest.mark.parametrize("text, ids", [
    ("and yes still Elixir, still Valkey, nothing changed", {1, 2}),
    ("still Umami for analytics btw", {5}),
    ("recap so I can paste it in the wiki: Elixir, Valkey, Oban", {1, 2, 3}),
    ("Valkey 还是 Valkey，这个不会变", {2}),
    ("技术栈确认一下：Elixir、Valkey、Oban，对吧？", {1, 2, 3}),
])
def test_a_restatement_of_held_facts_repeats_them(text, ids):
    got = run(text, existing=HELD)
    assert {c.same_as for c in got} == ids and all(firm(c) and not c.supersedes for c in got)


@pytest.mark.parametrize("text", [
    "is Elixir still the right call for the ingest side?",  # a question, not a restatement
    "Priya again: she asked for smaller PRs.",  # a person named in passing
    "Priya 还是希望 PR 小一点",
    "what was the reason we still run Valkey?",  # a wh-question
    "老王说 Valkey 的内存占用太多，还是换 Dragonfly 吧",  # a change, not a repeat
])
def test_no_repeat_where_the_held_value_is_asked_about_named_in_passing_or_changed(text):
    assert not any(c.same_as for c in run(text, existing=HELD))


# --- a hedged reply takes up the assistant's offer tentatively -----------------------------------------------------

@pytest.mark.parametrize("offer, reply, key, value", [
    ("Want me to add Valkey as the cache?", "hmm, maybe. not sure yet", "database:cache", "Valkey"),
    ("要不要上 Valkey 做缓存？", "可能吧，还没想好", "database:cache", "Valkey"),
    ("可以用 RabbitMQ，或者 NATS 也行。", "NATS 这个方向可以，先试试看", "stack:queue", "NATS"),
    ("Would you like Valkey as the cache?", "hmm, maybe. what are its memory limits?", "database:cache", "Valkey"),
])
def test_a_hedged_reply_to_an_offer_is_pending(offer, reply, key, value):
    c = by_key(run(f"A: {offer}", reply))[f"{P}:{key}"]
    assert c.value == value and c.hedged and not firm(c)


@pytest.mark.parametrize("offer, reply", [
    ("Want me to add Valkey as the cache?", "maybe not"),  # refused
    ("Should we add Valkey as the cache?", "I think we should finish the tests first"),  # about something else
    ("We could use Oban or Broadway for the jobs.", "hmm, let me think about it"),  # two offers, neither named
    ("数据量多大？百万级以内 Valkey 就够了。", "大概 3000 万条。"),  # an approximate answer, no hedge on the offer
])
def test_a_reply_takes_up_nothing_when_it_refuses_or_is_about_something_else(offer, reply):
    assert not any(c.hedged and c.value for c in run(f"A: {offer}", reply))


# --- what the rival turned down is judged by is the choice's reason ------------------------------------------------

@pytest.mark.parametrize("text, value, words", [
    ("服务端选 Fastify，不用 Koa，Koa 太老了", "Fastify", "太老"),
    ("flask. not django. way too much config for two people", "flask", "config"),
    ("Backend framework: Sanic. not Tornado. the callback style hurt us", "Sanic", "callback"),
])
def test_a_judgement_of_the_rival_turned_down_is_the_reason(text, value, words):
    c = by_key(run(text))[f"{P}:stack:backend_framework"]
    assert c.value.lower() == value.lower() and words in (c.rationale or "")


# --- a choice said before the rival it turns down, with no verb -----------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("Sanic rather than Tornado. The callback style wore everyone out.", "Sanic"),
    ("Litestar rather than Flask, mostly for the typed request bodies.", "Litestar"),
    ("服务端 Gin 而非 Beego", "Gin"),
])
def test_a_name_before_the_rival_it_turns_down_is_chosen(text, value):
    c = by_key(run(text))[f"{P}:stack:backend_framework"]
    assert c.value == value and firm(c)


# --- Chinese indefinites are no questions --------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("后端决定用 Sanic，不用 Tornado，因为 Tornado 什么都要自己写", "Sanic"),
    ("后端用 Sanic，Tornado 社区也不怎么活跃了", "Sanic"),
])
def test_an_indefinite_pronoun_does_not_make_a_statement_a_question(text, value):
    c = by_key(run(text))[f"{P}:stack:backend_framework"]
    assert c.value == value and firm(c)


def test_a_real_chinese_question_still_asks():
    assert run("后端用什么框架？") == []


# --- hedges in more shapes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    # a hedge word standing where the verb would
    ("数据库考虑一下 Oracle，运维那边还没表态", "database:database", "Oracle"),
    ("vector store: maybe Vespa? it might be enough", "database:vector_store", "Vespa"),
    ("thinking about Honeybadger for the crash reports, not decided", "tooling:monitoring", "Honeybadger"),
    ("CI 用 woodpecker 还是自建 runner？倾向于 woodpecker，还要再看看", "tooling:ci", "woodpecker"),
    # an opinion request without its question mark still asks
    ("包管理用 pdm 你觉得呢", "tooling:package_manager", "pdm"),
    ("队列用 NATS。你看呢", "stack:queue", "NATS"),
    ("Valkey for the cache, wdyt", "database:cache", "Valkey"),
])
def test_a_tentative_choice_binds_its_value_as_pending(text, key, value):
    c = by_key(run(text))[f"{P}:{key}"]
    assert c.value == value and c.hedged and not firm(c)


@pytest.mark.parametrize("text, key", [
    ("灰度开关可能用 Flagr，还没想好", "stack:灰度开关"),
    ("灰度开关考虑用 Flagr，先不定", "stack:灰度开关"),
])
def test_the_hedge_word_is_no_part_of_an_unknown_slot_name(text, key):
    c = by_key(run(text))[f"{P}:{key}"]
    assert c.value == "Flagr" and c.hedged


@pytest.mark.parametrize("text", [
    "Valkey 最近挺火的，我们要不要换过去？",
    "Valkey has been getting popular lately, should we move to it?",
])
def test_a_tentative_move_to_the_name_just_talked_about_is_pending(text):
    c = by_key(run(text, existing=(_held("database:cache", "Redis"),)))[f"{P}:database:cache"]
    assert c.value == "Valkey" and c.hedged and not c.supersedes


def test_tentative_talk_about_a_held_value_adds_nothing():
    assert run("thinking about adding Alpine on top of htmx, not sure",
               existing=(_held("stack:frontend_framework", "htmx"),)) == []


def test_a_verdict_after_a_topic_points_back():
    c = by_key(run("ClickHouse 的预算批下来了，数据仓库就用它。",
                   existing=(_pending("database:warehouse", "ClickHouse"),)))[f"{P}:database:warehouse"]
    assert c.value == "ClickHouse" and firm(c) and c.confirms


@pytest.mark.parametrize("text", [
    "Load test passed. Typesense is a go — we decided to use it for search. Can you write the indexer?",
    "Typesense is a go.",
])
def test_a_go_and_a_decision_about_it_settle_the_pending_idea(text):
    got = run(text, existing=(_pending("database:search", "Typesense"),))
    c = by_key(got)[f"{P}:database:search"]
    assert c.value == "Typesense" and firm(c) and c.confirms and all(g.key for g in got)


@pytest.mark.parametrize("text, key, value", [
    ("Also toying with the idea of NATS for events, nothing decided.", "stack:queue", "NATS"),
    ("May want BullMQ for the jobs down the line.", "stack:queue", "BullMQ"),
])
def test_a_tentative_idea_is_pending_and_nothing_decided_is_no_decision(text, key, value):
    got = run(text)
    c = by_key(got)[f"{P}:{key}"]
    assert c.value == value and c.hedged and all(g.key for g in got)


@pytest.mark.parametrize("text", [
    "后端决定用 Quarkus。之前有人提议用 Node，但公司其他系统都是 Java 的，统一技术栈更好维护。",
    "The backend is Quarkus. Someone suggested Micronaut for the backend too, but every other service here is Spring.",
])
def test_what_someone_else_proposed_is_a_rival_not_a_choice(text):
    values = [c.value for c in run(text)]
    assert "Quarkus" in values and not {"Node", "Micronaut"} & set(values)


# --- standing orders about what the assistant shows, and hedges said last ------------------------------------------

@pytest.mark.parametrize("text", [
    "always show me the shell commands you'd run before touching any file",
    "Please always add the module name as a comment at the top of every snippet you give me",
])
def test_a_standing_order_about_what_the_assistant_shows_is_an_instruction(text):
    ignored = []
    assert run(text, ignored=ignored) == [] and ignored


def test_a_convention_of_the_team_is_still_kept():
    assert run("We always run the linters before we merge, every branch, no exceptions.")
