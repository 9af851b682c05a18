"""Round 11 (issue 16): what the project is, read as one keyless ``context`` memory in the user's words
(``projects.project_description``); questions, requests for work, hedges and negations describe nothing."""

from __future__ import annotations

from extraction_support import P

from z0_memory.offline.extraction.model import Statement
from z0_memory.offline.extraction.projects import project_description, without_product_names


def described(text: str) -> str | None:
    s = project_description(text, P)
    assert s is None or (s.kind == "context" and s.slot is None and s.value is None)
    return None if s is None else s.text


def test_an_announced_project_is_described_without_its_stack():
    text = described("hey, starting a new thing — booking app for small yoga studios. Backend is Django.")
    assert text is not None and "yoga studios" in text and "Django" not in text


def test_a_chinese_description_keeps_its_clauses_up_to_the_stack_talk():
    text = described("我们要做一个给健身房用的会员管理系统，会员可以在线约课，前端用 Vue 3，分布式任务用 Celery。")
    assert text == "我们要做一个给健身房用的会员管理系统，会员可以在线约课"


def test_the_project_named_as_a_kind_of_product_is_described():
    assert described(f"{P} 是一个给社区团购团长用的小程序，后端就我一个人写") is not None
    assert described("side project: habit tracker app for remote teams.") is not None
    assert described("We're building the ingest side of a drone telemetry service. Go 1.22.") is not None
    assert described("工厂巡检 App，主要跑在安卓平板上，巡检员拍照、填表。") is not None
    assert described("新项目，物流调度系统，给区域仓配用的。") == "物流调度系统，给区域仓配用的"


def test_a_description_is_read_once_per_message():
    text = described("We're building a booking app for dental clinics. It's a booking app with reminders.")
    assert text == "We're building a booking app for dental clinics"


def test_requests_questions_hedges_negations_and_people_describe_nothing():
    for text in ("帮我写一个会员管理系统的登录接口", "can you build a booking app for me?",
                 "maybe we'll build a mobile app later", "Are we building a CLI or a web app?",
                 "we're not building a mobile app.", "Kofi is our product owner", "我们可能要做一个小程序",
                 "新项目，前端我来负责，我叫林一。", "Postgres is our main database.",
                 "We're building the service on Axum. Actix was the other candidate.",
                 "Decided: the API is built on FastAPI. Flask is out.",
                 "reason is the router groups + built-in binding fit our API"):
        assert described(text) is None, text


def test_the_product_named_in_a_description_is_no_tool_choice():
    description = project_description("我们要做一个仓库内部用的看板，显示拣货进度和库位占用。", P)
    assert description is not None
    product = Statement(kind="decision", slot=None, value="的看板", confidence=0.9, text="我们要做一个仓库内部用的看板")
    person = Statement(kind="fact", slot=None, value="林一", confidence=0.85, text="我叫林一",
                       category_override="people")
    assert without_product_names([product, person], description) == [person]
