"""The offline judge's facets, anchors and slots: sufficient when every part of a question has evidence, insufficient
when one part has none, in English and Chinese (pure functions: no database, no model)."""

from __future__ import annotations

import pytest

from z0_memory.offline.judge import CHAIN_FAILURE, LIST_FAILURE, analyze_question, judge, question_facets
from z0_memory.schemas import Hit


def fact(key: str, value: str, rationale: str | None = None, *, rounds: list[int] | None = None) -> Hit:
    """A key-value fact as the store renders it ("stack / backend framework: Fastify (because ...)")."""
    _project, category, entity = key.split(":")
    content = f"{category} / {entity.replace('_', ' ')}: {value}"
    content += f" (because {rationale})" if rationale else ""
    return Hit(id=key + value, source="semantic", content=content, score=0.3, key=key, rationale=rationale,
               strategy="hybrid", metadata={"rounds": rounds or [1]})


def note(content: str, *, rounds: list[int] | None = None) -> Hit:
    return Hit(id=content, source="semantic", content=content, score=0.3, strategy="hybrid",
               metadata={"rounds": rounds or [1]})


def verdict(question: str, hits: list[Hit], round: int = 2):
    return judge(question, hits, round=round, max_rounds=5, queries_tried=[question])


BAKERY = [
    fact("bakery:stack:backend_framework", "Hono"),
    fact("bakery:stack:backend_framework", "Fastify", "cold starts were slow on our VMs"),
    fact("bakery:people:backend_owner", "Marta"),
    fact("bakery:database:database", "Postgres", "the team already knows it"),
]


def test_a_compound_question_is_split_into_its_facets():
    assert question_facets("Who writes the API reference, and how are its code samples checked?") == [
        "Who writes the API reference", "how are its code samples checked?"]
    assert question_facets("谁负责发布小程序，图片存在哪？") == ["谁负责发布小程序", "图片存在哪？"]
    assert question_facets("Which backend framework does the bakery API use now?") == [
        "Which backend framework does the bakery API use now?"]


@pytest.mark.parametrize(("question", "answer", "other", "missing_part"), [
    ("Who writes the API reference, and how are its code samples checked?",
     note("Olu writes the API reference."), note("Code samples in the docs are extracted and run in CI."),
     "code samples"),
    ("谁负责发布小程序，图片存在哪？",
     fact("app:people:release_manager", "孙磊"), note("小程序的图片统一存在阿里云 OSS 上。"), "图片存在哪"),
])
def test_every_facet_covered_is_sufficient_and_a_missing_facet_is_not(question, answer, other, missing_part):
    unrelated = note("The docs keep one version per minor release.")
    both = verdict(question, [answer, other, unrelated])
    assert both.sufficient, both.reason
    one = verdict(question, [answer, unrelated])
    assert not one.sufficient
    assert missing_part in one.reason


def test_a_chained_question_takes_one_more_round_then_accepts_link_and_answer_from_different_hits():
    for question, hits in (
        ("Who owns the service that runs on Fastify?", BAKERY),
        ("谁负责用 Go 写的那个后端？", [fact("shop:stack:language", "Go", "大家都熟"),
                                   fact("shop:people:backend_owner", "张伟"),
                                   note("订单号统一用雪花算法生成。")]),
    ):
        first = verdict(question, hits, round=1)
        assert not first.sufficient
        assert first.reason.rstrip(".") == CHAIN_FAILURE[:1].upper() + CHAIN_FAILURE[1:]
        assert first.next_query is None  # the rewriter's second hop explores better than a fixed proposal
        second = verdict(question, hits, round=2)
        assert second.sufficient, second.reason
    without_owner = [h for h in BAKERY if "owner" not in h.content]
    no_owner = verdict("Who owns the service that runs on Fastify?", without_owner)
    assert not no_owner.sufficient


def test_the_slot_vocabulary_bridges_a_chinese_question_to_an_english_key():
    shop = [note("订单号统一用雪花算法生成。"), fact("shop:database:cache", "Redis", "购物车需要哈希结构"),
            fact("shop:stack:language", "Go"), fact("shop:people:backend_owner", "张伟")]
    assert verdict("商城用什么做缓存？", shop, round=1).sufficient
    assert verdict("为什么不用 Memcached？", shop, round=1).sufficient  # a known value of the fact's slot
    assert not verdict("商城的支付渠道选了哪家？", shop, round=1).sufficient  # no fact holds payments
    assert not verdict("为什么放弃 Airflow？", shop, round=1).sufficient  # another slot: orchestration


def test_a_why_question_takes_the_reason_from_another_version_of_the_named_fact():
    question = "Why did we move away from Hono?"
    assert verdict(question, BAKERY, round=1).sufficient
    without_reason = [h for h in BAKERY if h.rationale is None]
    v = verdict(question, without_reason, round=1)
    assert not v.sufficient and "rationale" in v.missing


def test_a_short_acronym_is_a_term_and_an_unanswerable_question_stays_insufficient():
    assert analyze_question("Which backend framework does the bakery API use now?").anchors == ()
    assert verdict("Which backend framework does the bakery API use now?", BAKERY, round=1).sufficient
    unanswerable = verdict("Which payment provider does the bakery checkout use?", BAKERY, round=1)
    assert not unanswerable.sufficient and "checkout" in unanswerable.missing
    assert not verdict("What is the maximum line length in the bakery code base?", BAKERY, round=1).sufficient


def test_a_list_is_complete_when_its_exploratory_round_finds_nothing_new():
    question = "Which days are production deploys allowed?"
    assert analyze_question(question).is_list
    found_first = [note("Production deploys only happen from Tuesday to Thursday.", rounds=[1, 2]),
                   note("CI runs on GitHub Actions.")]
    assert not verdict(question, found_first, round=1).sufficient
    assert verdict(question, found_first, round=2).sufficient
    found_now = [note("Production deploys only happen from Tuesday to Thursday.", rounds=[2])]
    v = verdict(question, found_now, round=2)
    assert not v.sufficient and v.reason.startswith(LIST_FAILURE[:1].upper() + LIST_FAILURE[1:])
    assert not analyze_question("What generates the docs site now?").is_list  # a verb, not a plural noun


def test_when_asks_for_a_date_only_about_the_past_or_future_and_storage_words_meet():
    assert "date" not in analyze_question("When does a refund need a second approver?").needs
    assert "date" in analyze_question("When did Melanie sign up for a pottery class?").needs
    assert "date" not in analyze_question("What time zone are ledger timestamps stored in?").needs
    notes = [note("Notes are stored as Markdown files with YAML front matter."),
             note("Notes sync between machines through a plain git repository.")]
    assert verdict("What format are notes saved in?", notes, round=1).sufficient
    assert not verdict("What licence are notes released under?", notes, round=1).sufficient
