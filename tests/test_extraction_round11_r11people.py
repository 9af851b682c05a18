"""Round 11, people and preferences: owners and roles in more shapes (handovers, "也是他负责", full names, a role said
in a reason), the speaker's own editor as a preference, a named colleague's liking for a slot said after "for"; and
what must not be stored (the speaker's "自己" as a name, a task said in passing, a lower-case word after a role word).
Sentences of our own."""

from __future__ import annotations

import pytest

from tests.extraction_support import P, by_key, firm, run


def _people(*texts: str) -> dict[str, str]:
    return {c.key: c.value for c in run(*texts) if c.key and ":people:" in c.key}


@pytest.mark.parametrize(("text", "key", "value"), [
    ("支付这块归孙倩管", "payments_owner", "孙倩"),
    ("前端现在归小郑管，组件库的事找他", "frontend_owner", "小郑"),
    ("测试是周一鸣负责", "testing_owner", "周一鸣"),
    ("Mateo 是 frontend owner，样式问题都找他", "frontend_owner", "Mateo"),
    ("上个月 DBA 换成老宋了", "dba", "老宋"),
    ("这周值班换成小蒋", "on_call", "小蒋"),
    ("设计那边先交给 Ingrid", "designer", "Ingrid"),
    ("Omar Abu-Bakr is our tech lead.", "tech_lead", "Omar Abu-Bakr"),
    ("Wren is now officially the release manager.", "release_manager", "Wren"),
    ("fyi, auth owner is now Leona Park", "auth_owner", "Leona Park"),
    ("ok so priya nair is the PM for the checkout work", "product_manager", "priya nair"),
    ("Jonah's the designer here.", "designer", "Jonah"),
    ("Last week we hired a PM, Odile.", "product_manager", "Odile"),
])
def test_owner_or_role_read(text: str, key: str, value: str) -> None:
    assert _people(text).get(f"{P}:people:{key}") == value


def test_another_area_of_the_same_person() -> None:
    found = _people("后端归老贺管，运维也是他负责")
    assert found.get(f"{P}:people:backend_owner") == "老贺"
    assert found.get(f"{P}:people:ops_owner") == "老贺"
    found = _people("tech lead 是 Ingrid，发布也是她管")
    assert found.get(f"{P}:people:release_manager") == "Ingrid"
    assert _people("数据库这块归邓超负责，DBA 的活也是他兼着").get(f"{P}:people:dba") == "邓超"


def test_full_name_after_a_familiar_one() -> None:
    assert _people("负责固件的是老许，许文杰，板子有问题找他。").get(f"{P}:people:firmware_owner") == "许文杰"


def test_a_role_said_in_the_reason_is_a_settled_fact() -> None:
    found = {c.key: c for c in run("Flyway maybe, since our DBA Tobias knows it. Not sure yet though.")}
    assert found[f"{P}:people:dba"].value == "Tobias" and firm(found[f"{P}:people:dba"])
    assert found[f"{P}:database:migrations"].hedged


@pytest.mark.parametrize("text", [
    "后端我自己负责，前端交给小葛",  # the speaker's own name is not said
    "Pia owns the backend, she runs the load-test cluster too",  # a task in passing, not an area
    "the PM signed off on it yesterday",  # a lower-case word after a role word is no name
    "Postgres is set, the DBA wrote the first schema",
    "pnpm btw, not yarn",  # "pm" inside a word is no role
])
def test_no_person_invented(text: str) -> None:
    found = _people(text)
    assert not any(v in ("自己", "signed", "wrote", "btw") for v in found.values()), found
    assert all(k.rsplit(":", 1)[1] in ("backend_owner", "frontend_owner") for k in found), found


@pytest.mark.parametrize(("text", "value"), [
    ("oh and I'm on Zed, so any config you give me should be for that", "Zed"),
    ("我平时写代码用 GoLand", "GoLand"),
    ("I use Helix for everything", "Helix"),
])
def test_the_speakers_editor_is_a_preference(text: str, value: str) -> None:
    found = by_key(run(text))
    assert found[f"{P}:preference:editor"].value == value
    assert f"{P}:tooling:editor" not in found


def test_the_teams_editor_stays_a_tool() -> None:
    found = by_key(run("we all use IntelliJ here"))
    assert f"{P}:preference:editor" not in found


def test_vs_code_is_no_versus() -> None:
    assert by_key(run("I'm on VS Code these days"))[f"{P}:preference:editor"].value == "VS Code"
    assert f"{P}:database:database" not in by_key(run("Postgres vs MySQL, still weighing it"))


def test_the_speaker_before_a_chinese_verb_phrase() -> None:
    found = by_key(run("我自己写 Go 习惯用 tabs，不过仓库里统一用空格"))
    assert found[f"{P}:preference:indentation"].value == "tabs"
    assert not any(k and "_indentation" in k for k in found)


def test_a_colleagues_liking_for_a_named_slot() -> None:
    found = by_key(run("Ilse prefers Justfiles over Makefiles for task runners."))
    assert found[f"{P}:preference:ilse_task_runners"].value == "Justfiles"
    assert f"{P}:preference:ilse_task_runners" not in by_key(run("Ilse doesn't like Justfiles for task runners."))


def test_an_area_done_and_areas_joined() -> None:
    assert _people("ok so bruno does all the backend")[f"{P}:people:backend_owner"] == "bruno"
    assert _people("Kaia owns billing + the frontend")[f"{P}:people:frontend_owner"] == "Kaia"
    assert _people("Sara does the dishes") == {}


def test_a_title_stays_with_the_name() -> None:
    assert _people("Let's hold off. Prof. Lindqvist is the tech lead here.")[f"{P}:people:tech_lead"] == "Prof. Lindqvist"


def test_the_one_who_knows_is_no_role() -> None:
    found = by_key(run("Björn is the one who knows the Kafka setup."))
    assert not any(k and (":people:" in k or k.endswith(":björn")) for k in found), found
