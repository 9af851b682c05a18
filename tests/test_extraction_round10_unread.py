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
    ("Noor is on call this week", "people:on_call", "Noor"),
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
