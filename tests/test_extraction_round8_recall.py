"""Round 8 of issue 16, recall: well-known products the vocabulary did not know, categories people name often,
descriptions of what a project is built from, owners' areas and unknown slots' keys; sentences of our own (English
and Chinese), none from the labelled data sets.
"""

from __future__ import annotations

from extraction_support import P, by_key, firm, run


# Well-known products are values of their slot even when no slot phrase names it ----------------------------------


def test_a_language_the_vocabulary_now_knows_is_a_language() -> None:
    got = by_key(run("The pricing service is written in Haskell."))
    assert got[f"{P}:stack:language"].value == "Haskell" and firm(got[f"{P}:stack:language"])
    zh = by_key(run("我们后端用 Scala。"))
    assert zh[f"{P}:stack:language"].value == "Scala"


def test_build_tools_and_test_frameworks_of_other_ecosystems_are_known() -> None:
    got = by_key(run("We use sbt for everything, and Kotest for the unit tests."))
    assert got[f"{P}:tooling:bundler"].value == "sbt"
    assert got[f"{P}:tooling:testing"].value == "Kotest"


def test_a_chinese_cloud_object_storage_product_is_object_storage_not_the_cloud() -> None:
    got = by_key(run("附件都存到腾讯云 COS。"))
    assert got[f"{P}:database:object_storage"].value == "腾讯云 COS"
    assert f"{P}:process:deploy" not in got
    en = by_key(run("Avatars are stored in Firebase Storage."))
    assert en[f"{P}:database:object_storage"].value == "Firebase Storage"


# Categories people name as often as the catalogue's own ------------------------------------------------------------


def test_state_management_is_a_slot_of_its_own() -> None:
    assert by_key(run("We went with Jotai."))[f"{P}:stack:state_management"].value == "Jotai"
    zh = by_key(run("状态管理用 MobX，不用 Redux。"))
    assert zh[f"{P}:stack:state_management"].value == "MobX"


def test_service_discovery_and_infrastructure_as_code_are_slots() -> None:
    zh = by_key(run("服务发现用 Consul。"))
    assert zh[f"{P}:stack:service_discovery"].value == "Consul"
    en = by_key(run("All our infrastructure as code is CloudFormation."))
    assert en[f"{P}:tooling:infra_as_code"].value == "CloudFormation"


def test_model_serving_and_ui_libraries_are_slots() -> None:
    assert by_key(run("We use BentoML to serve the models."))[f"{P}:stack:model_serving"].value == "BentoML"
    assert by_key(run("组件库用 Naive UI。"))[f"{P}:stack:ui_library"].value == "Naive UI"


# A description of what the project is built from states its values ------------------------------------------------


def test_a_project_described_as_an_app_on_a_stack_states_its_values() -> None:
    got = by_key(run("orbit is a Laravel app on PHP 8.3."))
    assert got[f"{P}:stack:backend_framework"].value == "Laravel"
    assert got[f"{P}:stack:language"].value == "PHP 8.3"


def test_written_in_and_builds_with_state_the_language_and_the_build_tool() -> None:
    got = by_key(run("It's written in Kotlin and builds with Gradle."))
    assert got[f"{P}:stack:language"].value == "Kotlin"
    assert got[f"{P}:tooling:bundler"].value == "Gradle"
    zh = by_key(run("客户端是 Dart 写的。"))
    assert zh[f"{P}:stack:language"].value == "Dart"


def test_a_value_named_before_the_description_is_not_described() -> None:
    # the description says what the project is; a name before "is a ..." is its subject, not its build
    assert run("Redis is a service I know well.") == []


# Owners: the area as said, cut at a second predicate; a tool or a pronoun is no one --------------------------------


def test_an_owner_area_stops_at_a_second_predicate() -> None:
    got = by_key(run("Omar owns QA and is also the person to ask about fixtures."))
    assert got[f"{P}:people:qa_owner"].value == "Omar"


def test_an_area_that_opens_with_a_slot_phrase_is_that_slot_area() -> None:
    got = by_key(run("Lena owns the frontend checkout flow."))
    assert got[f"{P}:people:frontend_owner"].value == "Lena"


def test_a_role_word_in_latin_letters_is_read_whole_before_shi() -> None:
    got = by_key(run("Security owner 是 Omar。"))
    assert got[f"{P}:people:security_owner"].value == "Omar"


def test_a_tool_that_handles_it_is_no_owner() -> None:
    assert not [c for c in run("Renovate handles it every Monday.") if (c.key or "").split(":")[1:2] == ["people"]]


def test_an_area_handed_to_someone_to_manage_and_a_pronoun_that_is_no_name() -> None:
    got = by_key(run("运维归老周管，监控也是他负责。"))
    assert got[f"{P}:people:ops_owner"].value == "老周"
    assert all("他" not in (c.value or "") for c in got.values())


# Keys for unknown slots: hedges and adverbs before the verb are no part of the slot's name ----------------------------


def test_a_hedge_between_a_chinese_slot_phrase_and_its_verb_is_not_in_the_key() -> None:
    got = run("推荐算法考虑用 LightGBM，先不定。")
    assert [c.key for c in got] == [f"{P}:stack:recommendation_algorithm"] and got[0].hedged
    zh = run("日志采集也许用 Vector。")
    assert zh and all("也许" not in (c.key or "") for c in zh)


def test_a_subject_before_the_verb_is_no_slot_name() -> None:
    # "公司都在用 X": who uses it, not what it is for
    assert all("公司" not in (c.key or "") for c in run("公司都在用飞书。"))


# A value ends before the sentence's full stop when deciding whether it is a name ------------------------------------


def test_an_adjective_before_a_full_stop_is_no_value() -> None:
    assert run("Our job queue is ready.") == []


# A wh-phrase and a colon head an answer; they ask nothing ---------------------------------------------------------


def test_a_wh_heading_before_a_colon_is_no_question() -> None:
    got = by_key(run("Here's what we run: Postgres 16 and Redis."))
    assert got[f"{P}:database:database"].value == "Postgres 16" and f"{P}:database:cache" in got
    zh = by_key(run("目前用了哪些：后端 Gin，数据库 MySQL。"))
    assert zh[f"{P}:stack:backend_framework"].value == "Gin"


def test_a_wh_heading_that_ends_in_a_question_mark_stays_a_question() -> None:
    assert run("What do we use: Redis or Memcached?") == []


# Value spans: where a name starts and ends ---------------------------------------------------------------------


def test_a_colon_inside_a_token_binds_nothing() -> None:
    # "db:migrate" is a command, not the database slot and its value
    assert run("Running db:migrate twice broke staging.") == []


def test_an_adverb_in_ly_is_no_part_of_a_name_and_no_person() -> None:
    got = by_key(run("search: Typesense obviously"))
    assert got[f"{P}:database:search"].value == "Typesense"
    assert by_key(run("mia basically owns the backend"))[f"{P}:people:backend_owner"].value == "mia"


def test_a_lower_case_known_value_of_the_same_slot_continues_a_name() -> None:
    got = by_key(run("the database is PlanetScale mysql"))
    assert got[f"{P}:database:database"].value == "PlanetScale mysql"


def test_what_a_text_is_written_in_is_no_product() -> None:
    # "用中文写": the manner of writing, not a tool chosen for the slot
    assert all(not (c.value or "").endswith("写") for c in run("文档用中文写，格式 Markdown。"))


def test_the_common_abbreviation_of_postgres_reads_as_postgres() -> None:
    from z0_memory.offline.extraction import canonical_value

    assert canonical_value("PG") == canonical_value("pg") == "Postgres"
    assert canonical_value("Pg") is None  # exact case only


def test_a_chinese_word_that_contains_yong_is_not_the_verb_use() -> None:
    # "利用率" (utilisation), "费用" (cost): the 用 inside a word binds nothing
    got = run("Triton，GPU 利用率高，还支持动态批处理。")
    assert [c.value for c in got] == ["Triton"]


def test_a_version_written_onto_a_language_name_is_that_language() -> None:
    assert by_key(run("引擎用 C++17 写。"))[f"{P}:stack:language"].value == "C++17"
    assert by_key(run("We use dbmate for schema changes."))[f"{P}:database:migrations"].value == "dbmate"


# "X 还是 X": the same value on both sides of 还是 is a restatement, not an either-or ---------------------------------


def test_the_same_value_on_both_sides_of_haishi_is_stated() -> None:
    assert by_key(run("Kafka 还是 Kafka，这个不动。"))[f"{P}:stack:queue"].value == "Kafka"
    assert run("队列用 Kafka 还是 Pulsar") == []  # two values: weighed, neither chosen


# One value, two slot phrases joined by "and" ------------------------------------------------------------------------


def test_a_value_bound_to_two_joined_slot_phrases_fills_both_slots() -> None:
    got = by_key(run("biome for linting and formatting"))
    assert got[f"{P}:tooling:linter"].value == "biome" and got[f"{P}:tooling:formatter"].value == "biome"
    zh = by_key(run("代码检查和格式化都用 Biome。"))
    assert zh[f"{P}:tooling:linter"].value == "Biome" and zh[f"{P}:tooling:formatter"].value == "Biome"


def test_two_values_each_bound_to_its_own_phrase_are_not_joined() -> None:
    got = by_key(run("oxlint for linting, dprint for formatting"))
    assert got[f"{P}:tooling:linter"].value == "oxlint" and got[f"{P}:tooling:formatter"].value == "dprint"


# Owners: a space between the area and the person; "is going to own" --------------------------------------------------


def test_an_area_a_space_and_a_person_then_fuze() -> None:
    assert by_key(run("后端 Marta 负责。"))[f"{P}:people:backend_owner"].value == "Marta"


def test_is_going_to_own_names_an_owner() -> None:
    assert by_key(run("Priya is going to own the backend."))[f"{P}:people:backend_owner"].value == "Priya"


def test_a_capitalised_name_ending_in_ly_is_still_a_name() -> None:
    got = by_key(run("We moved the queue to Quickly."))
    assert got[f"{P}:stack:queue"].value == "Quickly"


def test_builds_opening_a_sentence_is_a_noun_not_a_description() -> None:
    # "Builds on X kept failing" is about CI builds: X is no part of the project's description
    got = run("Builds on Render kept failing. So we moved the site to Railway.")
    assert [c.value for c in got] == ["Railway"] and got[0].rationale == "Builds on Render kept failing"


# People: "and she owns X" after a name; a contact person; the designer said as the field ---------------------------


def test_and_she_owns_after_a_name_is_that_person_owning() -> None:
    got = by_key(run("Tomasz wrote the pipeline and he owns CI."))
    assert got[f"{P}:people:ci_owner"].value == "Tomasz"


def test_a_contact_person_for_an_area_owns_it() -> None:
    got = by_key(run("市场那边的对接人是小雨。"))
    assert got[f"{P}:people:marketing_owner"].value == "小雨"


def test_the_design_field_before_shi_names_the_designer() -> None:
    assert by_key(run("后端是老周，设计是 Nadia。"))[f"{P}:people:designer"].value == "Nadia"


# A known value that only qualifies the noun after it is mentioned, not stated ---------------------------------------


def test_a_language_before_its_code_or_its_people_is_a_mention() -> None:
    assert run("Use four spaces in the Ruby scripts.")[0].key == f"{P}:convention:indentation"
    assert all(c.key != f"{P}:stack:language" for c in run("Use four spaces in the Ruby scripts."))
    assert all(c.key != f"{P}:stack:language" for c in run("前端就用 Svelte，团队都是 TypeScript 背景。"))


def test_a_language_before_a_named_framework_leaves_the_slot_to_the_framework() -> None:
    got = by_key(run("后端用 Python 的 Litestar。"))
    # round 11: the language is stated with its framework too (the later labels file it); the slot stays Litestar's
    assert got[f"{P}:stack:backend_framework"].value == "Litestar" and got[f"{P}:stack:language"].value == "Python"


def test_a_value_before_its_default_is_a_mention() -> None:
    got = by_key(run("vitest, the vite default."))
    assert got[f"{P}:tooling:testing"].value == "vitest" and f"{P}:tooling:bundler" not in got


def test_yong_and_shang_inside_other_words_bind_nothing() -> None:
    # "好用" (handy), "加上" (plus): not the verbs "use" and "put on"
    got = run("日志换成 Loki 了，大家觉得界面好用多了。")
    assert [c.value for c in got] == ["Loki"]
    assert [c.value for c in run("测试用 Vitest，再加上 msw-mock。")] == ["Vitest"]


def test_an_ordinary_noun_before_a_verdict_is_no_name() -> None:
    assert [c.value for c in run("ok spike is in. Valkey it is")] == ["Valkey"]


def test_a_tool_with_its_defaults_is_still_the_tool() -> None:
    # "rustfmt defaults": the formatter as it comes; only "the X default" is a default of X
    assert by_key(run("gofmt defaults, nothing custom"))[f"{P}:tooling:formatter"].value == "gofmt"


def test_a_tools_own_state_or_config_is_a_mention() -> None:
    assert run("The Vite config lives in the repo root.") == []
    got = by_key(run("The Pulumi state lives in a GCS bucket."))
    assert f"{P}:tooling:infra_as_code" not in got and got[f"{P}:database:object_storage"].value == "GCS"


def test_infrastructure_said_as_a_tool_stays_infrastructure_as_code() -> None:
    assert by_key(run("All our infra is OpenTofu."))[f"{P}:tooling:infra_as_code"].value == "OpenTofu"
