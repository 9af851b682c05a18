"""Issue 16, round 11: values that were never the user's choice. A Chinese value never opens with a particle; a
whole cloud is the deploy platform only where the clause says where the project runs; a part ("那块") said to be
settled is no name; a connector in words ends at a space; a reply's interjection is no value. Sentences of our own,
with guards that the choices around them stay."""

from __future__ import annotations

import re

import pytest

from extraction_support import P, by_key, run


def _values(text: str, *before: str) -> set[str]:
    return {c.value for c in run(*before, text) if c.value}


@pytest.mark.parametrize("text, key, value", [
    ("消息推送换成了极光，之前那家老掉线。", "stack:push_notifications", "极光"),
    ("工单系统从 Jira 换成了禅道，便宜。", "tooling:issue_tracker", "禅道"),
])
def test_a_chinese_value_does_not_take_the_aspect_particle(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value


@pytest.mark.parametrize("text", [
    "做一个给门店用的排班工具，替代大家乱用的各种表格。后端定了用 Express。",
    "这个模块主要是给运营用的报表页面。后端定了用 Express。",
])
def test_a_use_inside_another_word_binds_nothing(text):
    assert not any(v.startswith(("的", "了")) for v in _values(text))
    assert by_key(run(text))[f"{P}:stack:backend_framework"].value == "Express"


@pytest.mark.parametrize("text", [
    "消息队列定了 RocketMQ，阿里云有托管版，省事。",
    "视频通话那块定了，腾讯云 TRTC，另一家太贵。",
    "短信就用华为云的短信服务。",
])
def test_a_cloud_named_as_the_vendor_of_something_else_is_not_the_deploy_platform(text):
    assert f"{P}:process:deploy" not in by_key(run(text))


@pytest.mark.parametrize("text, value", [
    ("部署在阿里云 ACK 上，用 helm 发布。", "阿里云 ACK"),
    ("We're on AWS, everything in eu-west-1.", "AWS"),
    ("Deploys go to GCP.", "GCP"),
    ("生产环境在华为云。", "华为云"),
])
def test_a_cloud_the_clause_says_the_project_runs_on_is_the_deploy_platform(text, value):
    c = by_key(run(text)).get(f"{P}:process:deploy")
    assert c is not None and c.value == value


@pytest.mark.parametrize("text", ["报表那块定了，周报每周一发。", "这边定了，下周上线。"])
def test_a_part_or_a_pointer_then_settled_is_no_name(text):
    assert not any(re.search("[这那]", v) for v in _values(text))


@pytest.mark.parametrize("text", [
    "the CI runner has no docker, so no Testcontainers.",
    "The release runner builds every tag.",
])
def test_a_connector_in_words_ends_at_a_space(text):
    assert not any(len(v) <= 4 and v.islower() for v in _values(text))
    assert f"{P}:tooling:ci" not in by_key(run(text))


@pytest.mark.parametrize("text, key, value", [
    ("the frontend is gonna be sveltekit", "stack:frontend_framework", "sveltekit"),
    ("Search is gonna be Meilisearch.", "database:search", "Meilisearch"),
    ("CI is Buildkite.", "tooling:ci", "Buildkite"),
    ("testing: testify", "tooling:testing", "testify"),
])
def test_slot_connectors_still_bind(text, key, value):
    c = by_key(run(text)).get(f"{P}:{key}")
    assert c is not None and c.value == value


@pytest.mark.parametrize("reply", ["Ooh, USWDS. Saves us a ton.", "Oh nice, USWDS then.", "Perfect, USWDS."])
def test_an_interjection_leading_a_reply_is_not_its_answer(reply):
    found = by_key(run("A: Which CSS approach do you want for the forms?", reply))
    assert {c.value for c in found.values() if c.value} == {"USWDS"}
