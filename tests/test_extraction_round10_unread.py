"""Issue 16, round 10 (statements the rules did not read at all): a line-length limit given by its setting's name or
its unit, people named by the work their role does, by the role said first or in the passive, and a one-word reply
that picks an alternative the assistant's either-or question offered."""

from __future__ import annotations

import pytest

from extraction_support import P, by_key, firm, run


# --- a line-length limit: the setting's name or the number's unit files it ---------------------------------------

@pytest.mark.parametrize("text, value", [
    ("ruff, with line-length = 99 in pyproject", "99"),
    ("black handles formatting, 79 col limit because the reviewers read diffs side by side", "79"),
    ("keep lines under 110 characters please", "110"),
    ("printWidth: 90 in the prettier config", "90"),
    ("我们的 rustfmt 里 max_width 设成 96", "96"),
    ("每行最多 110 个字符，超了 CI 会报错", "110"),
    ("行宽统一 90", "90"),
])
def test_a_line_length_is_read_from_its_setting_or_its_unit(text, value):
    c = by_key(run(text)).get(f"{P}:convention:line_length")
    assert c is not None and c.value == value and firm(c)


@pytest.mark.parametrize("text", [
    "the report table has 14 columns max",  # columns of a table, no width
    "the importer reads 500 lines per batch",  # lines counted, not a width
    "行宽不是 100",  # a number turned down
])
def test_numbers_that_are_no_line_length_are_not_filed_there(text):
    assert f"{P}:convention:line_length" not in by_key(run(text))


# --- people: the work a role does, the role said first, the area in the passive -----------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("Wren handles releases, ask her before tagging", "people:release_manager", "Wren"),
    ("felix does the designs for the landing page", "people:designer", "felix"),
    ("if the pager goes off it rings Bram, hes on call", "people:on_call", "Bram"),
    ("designer is Ilse btw", "people:designer", "Ilse"),
    ("the billing module is owned by Tamsin", "people:billing_owner", "Tamsin"),
    ("the search team is led by Oskar Lind", "people:search_owner", "Oskar Lind"),
    ("上线前记得找阿峰，阿峰管发版", "people:release_manager", "阿峰"),
    ("负责模型的是钱博士，有问题问他", "people:model_owner", "钱博士"),
    ("支付负责人现在是小蔓了", "people:payments_owner", "小蔓"),
])
def test_a_person_is_read_in_more_shapes(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value


@pytest.mark.parametrize("text", [
    "GitHub Actions handles releases",  # a product's work is no person's role
    "the cache is managed by Redis itself",  # a known product is no person
    "负责模型的是他",  # a pronoun is no one's name
])
def test_tools_and_pronouns_are_no_people(text):
    assert not [c for c in run(text) if c.key and ":people:" in c.key]


# --- a one-word reply picking an alternative the question offered ------------------------------------------------

@pytest.mark.parametrize("question, reply, key, value", [
    ("For auth, do you want signed cookies or something like iron-session?", "iron-session.", "stack:auth",
     "iron-session"),
    ("Nice. Zig or Odin for the engine core?", "odin. the build story is simpler", "stack:language", "odin"),
    ("鉴权用 sa-token 还是 shiro？", "shiro。", "stack:auth", "shiro"),
])
def test_a_one_word_reply_picks_an_offered_alternative(question, reply, key, value):
    c = by_key(run(f"A: {question}", reply)).get(f"{P}:{key}")
    assert c is not None and c.value == value and firm(c)


@pytest.mark.parametrize("question, reply", [
    ("Postgres or MySQL?", "yes."),  # no alternative
    ("Do you want tabs or spaces?", "either."),  # not offered
    ("Which queue do you want?", "rabbit."),  # no either-or
])
def test_a_one_word_reply_that_picks_nothing_offered_stores_nothing(question, reply):
    assert not [c for c in run(f"A: {question}", reply) if c.value]


# --- where things go: a known value after "go to / go through / land in", a Chinese 放 / 存 before a name ---------

@pytest.mark.parametrize("text, key, value", [
    ("crash reports go to Bugsnag", "tooling:monitoring", "Bugsnag"),
    ("releases go through Argo CD", "process:deploy", "Argo CD"),
    ("nightly exports land in s3 as csv", "database:object_storage", "s3"),
    ("附件都存 MinIO", "database:object_storage", "MinIO"),
])
def test_a_known_value_where_things_go_is_stated(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value and firm(c)


@pytest.mark.parametrize("text", ["we go to the office on mondays", "I go on leave next week", "文件存一下"])
def test_going_somewhere_without_a_value_stores_nothing(text):
    assert not run(text)


# --- a convention followed: Chinese "按 X 来 / 走"; a known value inside a longer value is no value of its own ------

@pytest.mark.parametrize("text, key, value", [
    ("提交信息按 Conventional Commits 来", "convention:commit_messages", "Conventional Commits"),
    ("编码规范按腾讯 C++ 编码规范来", "convention:style", "腾讯 C++ 编码规范"),
    ("代码风格按 PEP 8 走", "convention:style", "PEP 8"),
])
def test_a_convention_followed_is_stated(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value and firm(c)


@pytest.mark.parametrize("text", ["部署按老流程来", "发布按计划走"])
def test_following_a_plain_chinese_phrase_names_no_value(text):
    assert not [c for c in run(text) if c.value]


def test_a_known_value_inside_a_followed_guide_is_not_stated_apart():
    keys = by_key(run("编码规范按腾讯 C++ 编码规范来"))
    assert f"{P}:stack:language" not in keys


# --- well-known products of slots the labels use: query generators, issue trackers, release tools ------------------

@pytest.mark.parametrize("text, key, value", [
    ("数据访问直接写 SQL，用 sqlc 生成", "database:orm", "sqlc"),
    ("we use YouTrack for issues", "tooling:issue_tracker", "YouTrack"),
    ("we cut releases with release-please", "process:release", "release-please"),
    ("我们的版本号遵循语义化版本", "convention:versioning", "语义化版本"),
])
def test_well_known_products_of_more_slots_are_known(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value


# --- a number turning down a number: "X 16 not 15", "行宽是 96 不是 80" ---------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("sorry, it's MariaDB 11 not 10", "database:database", "MariaDB 11"),
    ("max line length is 96 not 80", "convention:line_length", "96"),
    ("行宽是 96 不是 80", "convention:line_length", "96"),
])
def test_a_number_turned_down_leaves_the_value_before_it(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value


def test_a_version_turned_down_after_a_bare_name_is_no_choice_of_the_name():
    assert f"{P}:stack:language" not in by_key(run("ruby 不是 3.2"))


# --- people: an affiliation or a full name in brackets, "还是", a role in brackets, the speaker's own role ------------

@pytest.mark.parametrize("text, key, value", [
    ("Ines from infra is the deploy owner, ask her for access", "people:deploy_owner", "Ines"),
    ("Bo (bo.k on slack) owns the billing side", "people:billing_owner", "Bo"),
    ("阿东（王东）负责支付这块", "people:payments_owner", "王东"),
    ("Mira 还是 tech lead，别搞混了", "people:tech_lead", "Mira"),
    ("Kai (ops, also our release manager) signs off the tags", "people:release_manager", "Kai"),
    ("hey, I'm Zola, the designer on this", "people:designer", "Zola"),
    ("测试找周宁。我是前端的负责人，我叫韩梅", "people:frontend_owner", "韩梅"),
])
def test_people_with_brackets_affiliations_and_the_speaker(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value


def test_the_speaker_saying_what_they_dislike_names_no_role():
    assert not [c for c in run("I'm Tom, and I hate Jira") if c.key and ":people:" in c.key]


def test_a_negation_inside_an_aside_in_brackets_leaves_the_choice_stated():
    c = by_key(run("db: MariaDB 11 (the host requires it, not our pick)")).get(f"{P}:database:database")
    assert c is not None and c.value == "MariaDB 11"
