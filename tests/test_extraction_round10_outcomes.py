"""Issue 16, round 10 (outcomes and writes nobody wanted): a keyless clause beside a keyed choice elaborates it, the
details of a request for work are no project fact, a lean among tentative options is the pending idea, a question
someone else asked is no idea of the user's (and what the user restates around it is a repeat), and a bare yes to
the assistant's check of a held fact says that fact again."""

from __future__ import annotations

import pytest

from extraction_support import P, by_key, firm, run
from z0_memory.offline.extractor import ExistingMemory


def _held(key: str, value: str, *, pending: bool = False) -> tuple[ExistingMemory, ...]:
    return (ExistingMemory(1, f"{P} project: {value}", f"{P}:{key}", value, pending),)


# --- a keyless clause in the sentence of a keyed choice is part of that choice ----------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("包管理用 uv，这个老王比较喜欢", "tooling:package_manager", "uv"),
    ("Mia is our designer, she wants every icon outlined", "people:designer", "Mia"),
    ("检查用 ruff，这个我个人比较喜欢，规则严一点也没关系", "tooling:linter", "ruff"),
    ("we test with Vitest, it must always finish under a minute", "tooling:testing", "Vitest"),
])
def test_a_keyless_clause_beside_a_keyed_choice_is_not_stored_apart(text, key, value):
    out = run(text)
    assert by_key(out)[f"{P}:{key}"].value == value
    assert [c for c in out if c.key is None] == []


@pytest.mark.parametrize("text", [
    "We use Kafka, and all topics are created by hand.",
    "All public endpoints are prefixed with /api/v3. The queue is Kafka.",
    "We never log raw card numbers. Tests run on Jest.",
])
def test_a_keyless_statement_in_a_sentence_of_its_own_stays(text):
    assert any(c.key is None for c in run(text))


# --- the details of a request for work ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "ok now write me the retry helper, three attempts max, back off every 2 seconds",
    "帮我写一个导出脚本，导出的文件统一放到 exports 目录",
])
def test_the_clauses_after_a_request_for_work_specify_the_task(text):
    assert run(text) == []


# --- a lean among tentative options ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("队列可能用 Kafka，也可能用 RabbitMQ，倾向于 RabbitMQ", "stack:queue", "RabbitMQ"),
    ("for the queue maybe RabbitMQ, maybe SQS, leaning towards SQS", "stack:queue", "SQS"),
])
def test_a_lean_among_tentative_options_is_the_pending_idea(text, key, value):
    c = by_key(run(text))[f"{P}:{key}"]
    assert c.value == value and not firm(c)


def test_tentative_options_without_a_lean_stay_one_pending_list():
    c = by_key(run("搜索也许用 Meilisearch，也许用 Typesense"))[f"{P}:database:search"]
    assert c.value == "Meilisearch or Typesense" and not firm(c)


# --- a question someone else asked ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, held, asked", [
    ("still on pytest, Priya asked if we could move to nose2 but no", "tooling:testing", "pytest", "nose2"),
    ("yarn stays. someone in the channel asked whether we'd switch to npm, nope", "tooling:package_manager", "yarn",
     "npm"),
    ("前端还是 Vue 3，有人问要不要换 React，不换", "stack:frontend_framework", "Vue 3", "React"),
])
def test_a_question_someone_else_asked_is_no_idea_and_the_held_value_is_repeated(text, key, held, asked):
    out = run(text, existing=_held(key, held))
    assert all(c.value != asked for c in out)
    c = by_key(out)[f"{P}:{key}"]
    assert c.value == held and c.same_as == 1


def test_a_question_the_user_asks_still_is_tentative():
    c = by_key(run("should we move to Vitest?"))[f"{P}:tooling:testing"]
    assert c.value == "Vitest" and not firm(c)


@pytest.mark.parametrize("text, key", [
    ("still Drizzle. dont use Prisma in the examples", "database:orm"),
    ("orm: dont use Prisma", "database:orm"),
])
def test_an_apostrophe_less_negation_refuses(text, key):
    out = run(text, existing=_held(key, "Drizzle"))
    assert all(c.value not in ("Prisma", "dont use") and not c.supersedes for c in out)


# --- a bare yes to the assistant's check of a held fact -------------------------------------------------------------

@pytest.mark.parametrize("assistant, reply, key, value", [
    ("A: For the nightly job: you're on Render, right? Then a Render cron is simplest.", "yes", "process:deploy",
     "Render"),
    ("A: Keep UUIDv7 as the primary key and index the email. Agreed?", "agreed", "convention:ids", "UUIDv7"),
    ("A: 部署还是在 Render 上吧？", "对", "process:deploy", "Render"),
])
def test_a_yes_to_the_assistants_check_of_a_held_fact_repeats_it(assistant, reply, key, value):
    c = by_key(run(assistant, reply, existing=_held(key, value)))[f"{P}:{key}"]
    assert c.value == value and c.same_as == 1


def test_a_yes_to_a_question_about_something_else_repeats_nothing():
    out = run("A: I deployed it to Render. Want me to add a cron?", "ok",
              existing=_held("process:deploy", "Render"))
    assert all(c.same_as is None for c in out)


# --- an acceptance word followed by a hedge accepts nothing ---------------------------------------------------------

@pytest.mark.parametrize("assistant, reply", [
    ("A: Backblaze B2 has no egress fees with Cloudflare, which suits an image-heavy site.", "ok, let me think about it"),
    ("A: Backblaze B2 没有出口流量费，对图片多的站点比较划算。", "嗯 再看看吧"),
])
def test_an_acceptance_word_then_a_hedge_settles_nothing(assistant, reply):
    assert all(not firm(c) for c in run(assistant, reply))


# --- a yes to the assistant's question about a change makes the change ----------------------------------------------

@pytest.mark.parametrize("assistant, reply", [
    ("A: 那支付也一起换成 Stripe 吗？", "对，payments 也换了"),
    ("A: So the payments move to Stripe too, right?", "yes"),
])
def test_a_yes_to_a_question_about_a_change_supersedes_the_held_value(assistant, reply):
    c = by_key(run(assistant, reply, existing=_held("stack:payments", "Adyen")))[f"{P}:stack:payments"]
    assert c.value == "Stripe" and c.supersedes == [1] and firm(c)


def test_a_yes_to_the_assistants_restatement_of_another_value_changes_nothing():
    out = run("A: You take payments with Stripe, right?", "yes", existing=_held("stack:payments", "Adyen"))
    assert all(c.value != "Stripe" for c in out)


@pytest.mark.parametrize("text", ["Wen is tech lead btw i dont think i mentioned", "Wen is tech lead, I don't think I ever mentioned it"])
def test_not_remembering_having_said_it_negates_nothing(text):
    c = by_key(run(text))[f"{P}:people:tech_lead"]
    assert c.value == "Wen" and firm(c)


# --- a concession about a detail is no hedge on the choice before it ------------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("分支策略用 GitHub Flow，分支名写中文也行", "process:branching", "GitHub Flow"),
    ("提交信息用 Gitmoji，正文用英文也可以", "convention:commit_messages", "Gitmoji"),
])
def test_a_concession_about_a_detail_leaves_the_choice_firm(text, key, value):
    c = by_key(run(text))[f"{P}:{key}"]
    assert c.value == value and firm(c)


def test_a_concession_about_the_value_itself_still_hedges():
    c = by_key(run("队列用 Kafka 也可以，再看看"))[f"{P}:stack:queue"]
    assert c.value == "Kafka" and not firm(c)


# --- a sentence that takes the idea back ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, key, floated", [
    ("缓存要不要上 Dragonfly？算了，不折腾了", "database:cache", "Dragonfly"),
    ("queue is SQS? no wait, that's the other client.", "stack:queue", "SQS"),
    ("maybe switch search to Typesense... actually no, forget it", "database:search", "Typesense"),
])
def test_a_retraction_withdraws_the_idea_just_floated(text, key, floated):
    out = run(text, existing=_held("database:cache", "Redis"))
    assert all(c.value != floated for c in out)


def test_a_request_to_look_at_something_is_no_hedge_on_the_fact_before_it():
    c = by_key(run("我们部署在 Render 上，你帮我看看构建为啥老超时"))[f"{P}:process:deploy"]
    assert c.value == "Render" and firm(c)


def test_a_yes_that_goes_on_to_other_things_repeats_no_held_fact():
    out = run("A: 调度还是用 Airflow 吗？", "嗯。另外 DBA 是老刘。", existing=_held("tooling:orchestration", "Airflow"))
    assert all(c.key != f"{P}:tooling:orchestration" for c in out)


def test_the_repeat_keeps_the_stored_spelling():
    c = by_key(run("A: Keep ULID as the primary key. Agreed?", "agreed", existing=_held("convention:ids", "ULIDs")))
    assert c[f"{P}:convention:ids"].value == "ULIDs"


def test_a_keyless_statement_with_a_pronoun_and_no_choice_beside_it_stays():
    assert any(c.key is None for c in run("invoice numbers must never be reused, accounting reads them aloud"))
