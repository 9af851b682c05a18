"""Round 7 of issue 16, recall: values the rules did not read (lower-case names, a vendor's name before a known
product); sentences of our own (English and Chinese), none from the labelled data sets.
"""

from __future__ import annotations

from extraction_support import P, by_key, firm, run


# In a Chinese clause a word in Latin letters is a name, whatever its case --------------------------------------


def test_a_lower_case_name_in_a_chinese_clause_is_a_value() -> None:
    got = by_key(run("序列化用 msgpack。"))
    assert [c.value for c in got.values()] == ["msgpack"] and firm(next(iter(got.values())))
    orm = by_key(run("查询层用 sqlc 做 ORM，不上重的框架。"))
    assert orm[f"{P}:database:orm"].value == "sqlc"


def test_a_chinese_clause_without_a_use_verb_states_no_lower_case_value() -> None:
    # a Latin word the clause only mentions is not chosen: no 用 / 做 binds it
    assert run("昨天 review 了一下代码。") == []


# "pest for tests": a lower-case name opening the clause, then "for" / "as" and a slot's name ------------------------


def test_a_lower_case_name_before_for_a_slot_is_that_slot_value() -> None:
    assert by_key(run("vitepress for docs, it builds fast"))[f"{P}:tooling:docs"].value == "vitepress"
    assert by_key(run("ok so nox for tests"))[f"{P}:tooling:testing"].value == "nox"


def test_an_ordinary_word_before_for_a_slot_is_not_a_value() -> None:
    assert run("time for testing, finally") == []
    assert run("tests for the backend are slow") == []


# "Upstash Redis": a vendor's capitalised name before a known product is one value ----------------------------------


def test_a_vendor_name_before_a_known_value_is_part_of_it() -> None:
    got = by_key(run("The cache is Aiven Redis, managed."))
    assert got[f"{P}:database:cache"].value == "Aiven Redis"
    zh = by_key(run("缓存用 Aiven Redis。"))
    assert zh[f"{P}:database:cache"].value == "Aiven Redis"


def test_a_verb_or_another_known_value_before_a_known_value_is_not_a_vendor() -> None:
    assert by_key(run("Use Redis for the cache."))[f"{P}:database:cache"].value == "Redis"
    got = by_key(run("We use Django Postgres and nothing else."))
    assert got[f"{P}:database:database"].value == "Postgres"


# "Solid Queue": a capitalised kind word after a name is part of its title -------------------------------------------


def test_a_capitalised_kind_word_continues_a_name() -> None:
    got = by_key(run("We're moving background jobs to Solid Queue."))
    assert got[f"{P}:stack:queue"].value == "Solid Queue"
    # lower case, the kind word only says what it is
    assert by_key(run("We use the Redis cluster for caching."))[f"{P}:database:cache"].value == "Redis"


# "ruff format", "prisma migrate": a tool's sub-command names the slot it fills ---------------------------------------


def test_a_sub_command_after_a_known_tool_names_its_slot() -> None:
    got = by_key(run("Formatting is handled by ruff format, lint by ruff."))
    assert got[f"{P}:tooling:formatter"].value == "ruff format"
    zh = by_key(run("数据库迁移直接用 prisma migrate。"))
    assert zh[f"{P}:database:migrations"].value == "prisma migrate"


def test_a_word_that_names_no_single_slot_is_no_sub_command() -> None:
    got = by_key(run("We use ruff check, it is fast."))
    assert [c.value for c in got.values()] == ["ruff"]


# "支付走微信支付": in Chinese, a slot phrase's verb binds the rest of the clause -------------------------------------


def test_a_chinese_slot_phrase_binds_the_rest_of_its_clause() -> None:
    assert by_key(run("支付走银联，别的先不接"))[f"{P}:stack:payments"].value == "银联"
    assert by_key(run("主键统一用号段 ID，不用自增"))[f"{P}:convention:ids"].value == "号段 ID"
    assert by_key(run("部署用我们自己写的 shipit 工具。"))[f"{P}:process:deploy"].value == "shipit"


def test_a_chinese_clause_that_asks_or_hedges_binds_nothing() -> None:
    assert run("数据库用什么好？") == []
    assert run("后端就用它了") == []
    assert f"{P}:stack:payments" not in by_key(run("支付可能走银联或者别的"))


# "七牛云定了": a name opening the clause, then "settled" -------------------------------------------------------------


def test_a_chinese_name_then_settled_is_chosen() -> None:
    got = run("又拍云定了，价格合适")
    assert [c.value for c in got] == ["又拍云"] and firm(got[0])
    assert run("这个定了") == [] and run("时间定了吗？") == []


# Roles: more role words, a whole Chinese name after the role, "is also our ..." --------------------------------------


def test_more_roles_and_their_people() -> None:
    assert by_key(run("架构师是林峰，方案他定。"))[f"{P}:people:architect"].value == "林峰"
    assert by_key(run("项目经理是 Grace，排期找她"))[f"{P}:people:project_manager"].value == "Grace"
    assert by_key(run("Oskar is also our release manager."))[f"{P}:people:release_manager"].value == "Oskar"


def test_chinese_words_after_shi_describe_rather_than_name_a_product() -> None:
    assert f"{P}:stack:backend_framework" not in by_key(run("后端是张伟"))
    assert f"{P}:tooling:bi" not in by_key(run("BI 是公司内部的一个数据平台。"))
    assert by_key(run("登录走公司的 Keycloak 做 SSO。"))[f"{P}:stack:auth"].value == "Keycloak"


# Keys for Chinese slot phrases the vocabulary lacks: English from the glossary, never a remark about someone ---------


def test_chinese_slot_phrases_get_english_keys() -> None:
    assert by_key(run("分布式训练用 Horovod。"))[f"{P}:stack:distributed_training"].value == "Horovod"
    assert by_key(run("UI 库用 Vuetify"))[f"{P}:stack:ui_library"].value == "Vuetify"


def test_a_remark_about_someone_is_no_slot_phrase() -> None:
    got = run("王磊说他更喜欢用 Vuetify")
    assert not any(c.key and ("说" in c.key or "喜欢" in c.key) for c in got)


# "mdbook it is", "tempo confirmed": a verdict after a name marks it as one, whatever its case ------------------------


def test_a_lower_case_name_then_a_verdict_is_chosen() -> None:
    got = run("ok zola it is, the docs build in a second")
    assert [c.value for c in got] == ["zola"] and firm(got[0])
    assert [c.value for c in run("quickwit confirmed")] == ["quickwit"]


def test_a_pronoun_or_a_slot_name_then_a_verdict_is_no_value() -> None:
    assert run("so it is") == [] and run("all in") == []
    assert not any(c.value == "search" for c in run("search it is"))
