"""Round 5 of issue 16: general readings found by counting the outside-written dev batches' misses by cause, each
tested here with sentences of our own (English and Chinese); none comes from the labelled data sets.
"""

from __future__ import annotations

from z0_memory.offline.extraction.key_words import english_entity, key_entity
from z0_memory.offline.extractor import ExistingMemory, TurnMessage, extract_candidates

from extraction_support import P, by_key, run


# "X = what it is" opening a message is prose, not a line of code --------------------------------------------------


def test_an_equals_sign_between_words_is_prose() -> None:
    got = by_key(run("Bramble = a recipe planner for families. Django with HTMX on the frontend."))
    assert got[f"{P}:stack:backend_framework"].value == "Django"
    zh = by_key(run("Bramble = 家庭菜谱 app. The backend is FastAPI."))
    assert zh[f"{P}:stack:backend_framework"].value == "FastAPI"
    assert run("retries = 3\nmax_wait = compute(retries)") == []  # code stays code


# A switch between names no slot files goes to the key that holds the old name ------------------------------------


def test_a_switch_between_unknown_names_keeps_the_old_names_key() -> None:
    held = (ExistingMemory(1, "demo, speech model: whisper-small", f"{P}:stack:speech_model", "whisper-small"),)
    en = by_key(run("We moved from whisper-small to Parakeet because it is faster on CPU.", existing=held))
    assert en[f"{P}:stack:speech_model"].value == "Parakeet" and en[f"{P}:stack:speech_model"].supersedes == [1]
    zh = by_key(run("语音模型我们从 whisper-small 换成了 Parakeet，CPU 上更快。", existing=held))
    assert zh[f"{P}:stack:speech_model"].value == "Parakeet" and zh[f"{P}:stack:speech_model"].supersedes == [1]


def test_a_switch_from_a_name_nobody_stored_still_names_the_new_one() -> None:
    got = run("We switched from Grobble to Zentrix last week.")
    assert [c.value for c in got] == ["Zentrix"]
    assert run("We moved from the old office to the new one.") == []  # not names: nothing


# Keys are English: a Chinese slot phrase is named through a glossary -----------------------------------------------


def test_chinese_slot_phrases_get_english_key_names() -> None:
    assert english_entity("实验追踪") == "experiment_tracking"
    assert english_entity("GPU 集群") == "gpu_cluster"
    assert english_entity("数据的负责") is None  # 负责 is no slot word: no English name
    assert key_entity("规则引擎") == "规则引擎"  # 规则 is not in the glossary: the user's own words stay
    assert key_entity("Sync engine") == "sync_engine"


def test_the_english_key_and_its_category_in_a_turn() -> None:
    asked = by_key(run("A: 实验追踪用什么？", "MLboard，团队都熟。"))
    assert asked[f"{P}:tooling:experiment_tracking"].value == "MLboard"
    en = by_key(run("A: What do you use for experiment tracking?", "MLboard."))
    assert en[f"{P}:tooling:experiment_tracking"].value == "MLboard"  # both languages reach one key
    owner = by_key(run("另外数据负责人是陈晨。"))
    assert owner[f"{P}:people:data_owner"].value == "陈晨"


# People: lower-case names, Chinese familiar names, a role said first, a listing, a self-introduction ---------------


def test_people_in_a_message_written_in_lower_case() -> None:
    got = by_key(run("ok so tomasz owns the frontend, and ines is our designer"))
    assert got[f"{P}:people:frontend_owner"].value == "tomasz" and got[f"{P}:people:designer"].value == "ines"
    assert by_key(run("bilal is tech lead btw"))[f"{P}:people:tech_lead"].value == "bilal"
    assert run("caddy handles tls for us") == []  # a lower-case "handles" is not said of a person
    assert not any(c.key and ":people:" in c.key for c in run("redis is our cache"))


def test_people_in_chinese_names_and_roles() -> None:
    assert by_key(run("后端那块交给老郑了"))[f"{P}:people:backend_owner"].value == "老郑"
    assert by_key(run("设计师是 Nora 林，图标她来出"))[f"{P}:people:designer"].value == "Nora 林"
    assert by_key(run("DBA 是老孙（孙立伟），改表找他"))[f"{P}:people:dba"].value == "孙立伟"  # the full name in brackets
    assert by_key(run("上线前找 DBA 阿杰过一下"))[f"{P}:people:dba"].value == "阿杰"
    listed = by_key(run("负责人：前端是小周，后端是阿诚"))
    assert listed[f"{P}:people:frontend_owner"].value == "小周" and listed[f"{P}:people:backend_owner"].value == "阿诚"
    en = by_key(run("Owners: frontend is Tariq, backend is Mei."))
    assert en[f"{P}:people:frontend_owner"].value == "Tariq" and en[f"{P}:people:backend_owner"].value == "Mei"


def test_a_speaker_who_names_themself_and_takes_an_area() -> None:
    got = by_key(run("Hey, I'm Ravi, I'll be handling the frontend for this one."))
    assert got[f"{P}:people:frontend_owner"].value == "Ravi"
    zh = by_key(run("新项目，前端我来负责，我叫林一。"))
    assert zh[f"{P}:people:frontend_owner"].value == "林一"
    assert run("I'm Ravi, I'll do the dishes later.") == []  # no area of the project


# Cues: a Chinese "not taking on" negation, instructions about replies, questions without a mark, casual hedges ----


def test_chinese_not_taking_something_on_is_a_rejection() -> None:
    got = run("队列就用 RabbitMQ，不上 Kafka，运维扛不住")
    assert [c.value for c in got] == ["RabbitMQ"]
    assert [c.value for c in run("搜索先用 Meilisearch，不搞 Elasticsearch")] == ["Meilisearch"]


def test_an_order_about_the_assistants_replies_is_an_instruction() -> None:
    ignored: list = []
    got = extract_candidates([TurnMessage("user", "stop apologizing at the start of every reply, it wastes my time")],
                             project=P, ignored=ignored)
    assert got == [] and len(ignored) == 1


def test_a_question_without_its_mark_and_a_casual_hedge() -> None:
    assert run("whats the best way to paginate with keyset again, i forget every time") == []
    hedged = run("for the cache maybe valkey, idk")
    assert all(c.hedged for c in hedged)
    probably = by_key(run("docs: Sphinx probably, the team knows it"))
    assert probably[f"{P}:tooling:docs"].value == "Sphinx" and probably[f"{P}:tooling:docs"].hedged


# Precedence and switches ----------------------------------------------------------------------------------------


def test_a_clause_with_its_own_decision_verb_outranks_one_that_talks_about_a_rival() -> None:
    got = by_key(run("ok search: going with typesense, algolia pricing per record kills us with all the docs"))
    assert got[f"{P}:database:search"].value == "typesense"
    zh = by_key(run("好，缓存：就用 Valkey，Redis 的许可证所有人都在吐槽"))
    assert zh[f"{P}:database:cache"].value == "Valkey"


def test_a_switch_whose_old_value_was_named_earlier_in_the_sentence() -> None:
    zh = by_key(run("原来定的 Express，压测后发现 Zapfly 吞吐更好，换成 Zapfly 了"))
    assert zh[f"{P}:stack:backend_framework"].value == "Zapfly" and not zh[f"{P}:stack:backend_framework"].hedged
    en = by_key(run("We had Express first, then benchmarks showed Zapfly is better, so we switched to Zapfly."))
    assert en[f"{P}:stack:backend_framework"].value == "Zapfly" and not en[f"{P}:stack:backend_framework"].hedged
    maybe = run("Not sure yet, but we might move from Heroku to Render.")
    assert maybe and all(c.hedged for c in maybe)  # the switch's own clause is hedged


def test_the_persistence_layer_is_the_orm() -> None:
    assert by_key(run("持久层用 MyBatis-Plus，团队都熟"))[f"{P}:database:orm"].value == "MyBatis-Plus"
    assert by_key(run("Persistence layer: Jooq."))[f"{P}:database:orm"].value == "Jooq"


# The reason with the choice, and the rejected side never chosen -------------------------------------------------


def test_more_reason_cues_in_both_languages() -> None:
    en = by_key(run("We picked Litestar over Flask, owing to its typed request handling."))
    assert "typed request handling" in (en[f"{P}:stack:backend_framework"].rationale or "")
    since = by_key(run("既然移动端都是 Kotlin，后端也用 Ktor，一种语言到底"))
    assert since[f"{P}:stack:backend_framework"].value == "Ktor"
    assert "Kotlin" in (since[f"{P}:stack:backend_framework"].rationale or "")
    simple = by_key(run("队列选了 NATS，原因很简单：运维只想维护一个二进制"))
    assert "二进制" in (simple[f"{P}:stack:queue"].rationale or "")


def test_a_rival_turned_down_with_er_fei_or_as_opposed_to_gets_no_reason_and_no_fact() -> None:
    zh = run("我们决定用 Axum 做后端，而非 Actix，主要考虑到团队熟悉 tower 生态")
    assert [c.value for c in zh] == ["Axum"] and "tower" in (zh[0].rationale or "")
    en = run("We settled on Axum for the backend, as opposed to Actix, owing to the tower ecosystem.")
    assert [c.value for c in en] == ["Axum"] and "tower" in (en[0].rationale or "")


def test_an_aside_in_brackets_that_turns_a_rival_down() -> None:
    zh = run("缓存：Valkey（不用 Redis），理由：许可证")
    assert [c.value for c in zh] == ["Valkey"] and zh[0].rationale
    en = run("Search: Typesense (not Elasticsearch), mainly for the tiny memory footprint.")
    assert [c.value for c in en] == ["Typesense"] and "memory" in (en[0].rationale or "")


def test_casual_decision_verbs() -> None:
    assert by_key(run("gonna do laravel for the api, not symfony"))[f"{P}:stack:backend_framework"].value == "laravel"
    assert by_key(run("前端也用 Svelte"))[f"{P}:stack:frontend_framework"].value == "Svelte"
