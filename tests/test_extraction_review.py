"""The review of the LLM extractor's candidates (``nodes/extraction_review.py``), on its own: no model, no database.
What reaches the tables is tested at the wire (``test_extraction_llm_wire.py``) and through the graphs
(``test_extraction_conversation.py``)."""

from __future__ import annotations

from z0_memory.nodes.extraction_review import hedged_in_its_clauses, review_candidates, spelled, words_said
from z0_memory.offline.extractor import ExistingMemory, TurnMessage
from z0_memory.schemas import Candidate


def user(text: str) -> list[TurnMessage]:
    return [TurnMessage("user", text, "h1")]


def decision(key: str, value: str, confidence: float = 0.9, **kw) -> Candidate:
    return Candidate(kind="decision", key=f"acme:{key}", value=value, confidence=confidence,
                     content=kw.pop("content", f"{key}: {value}"), **kw)


def test_a_value_is_found_as_spelled_or_through_its_aliases():
    assert spelled("PostgreSQL", "for the database we use postgres") == "postgres"  # a vocabulary alias
    assert spelled("Kamal", "we deploy with kamal") == "kamal"
    assert spelled("Fly", "we deploy on Fly.io") == "Fly.io"  # the vocabulary's alias, as the user wrote it
    assert spelled("Yj", "Sync engine: Yjs") is None  # word boundaries
    assert spelled("Redis", "") is None
    assert words_said("Node 22", "we are on Node.js 22") and not words_said("Node 24", "we are on Node.js 22")


def test_a_clause_hedges_only_when_every_clause_naming_the_value_does():
    assert hedged_in_its_clauses("Kafka", "We'll use Postgres. I'm not sure yet whether we'll use Kafka.")
    assert hedged_in_its_clauses("Kafka", "数据库用 Postgres，队列还没想好，可能用 Kafka。")
    assert not hedged_in_its_clauses("Postgres", "Let's go with Postgres, it makes the most sense.")
    assert not hedged_in_its_clauses("SQLite", "SQLite for now, maybe Postgres later.")
    assert hedged_in_its_clauses("Postgres", "SQLite for now, maybe Postgres later.")


def test_the_review_keeps_what_the_model_got_right_untouched():
    right = [decision("database:database", "Postgres", rationale="the team knows it"),
             decision("stack:queue", "Kafka", 0.35, hedged=True)]
    review = review_candidates(right, user("We use Postgres because the team knows it. Maybe Kafka for the queue."),
                               [], "acme")
    assert review.candidates == right and review.notes == [None, None] and review.ignored == []


def test_a_hedge_read_as_a_decision_is_held_and_a_guess_is_capped():
    review = review_candidates(
        [decision("stack:queue", "Kafka"), decision("tooling:ci", "GitHub Actions", 0.8)],
        user("I'm not sure yet whether we'll use Kafka for the queue."), [], "acme")
    kafka, ci = review.candidates
    assert (kafka.hedged, kafka.confidence, ci.confidence) == (True, 0.4, 0.4)
    assert review.notes == ["its clause hedges: pending", "value not said in the turn: pending until someone says it"]


def test_a_value_a_memory_holds_is_no_guess():
    held = [ExistingMemory(1, "acme:database:cache: Redis", "acme:database:cache", "Redis")]
    confirm = Candidate(kind="decision", key="acme:database:cache", value="Redis", confidence=0.9, confirms=True,
                        content="The cache stays as it is", same_as=1)
    review = review_candidates([confirm], user("Yes, keep the cache as it is."), held, "acme")
    assert review.candidates == [confirm] and review.notes == [None]


def test_instructions_are_reported_and_what_they_say_is_never_a_candidate():
    review = review_candidates(
        [Candidate(kind="preference", content="Answers in English", key="acme:preference:language",
                   value="English", confidence=0.9), decision("stack:backend_framework", "Hono")],
        user("From now on, always answer in English. We'll use Hono for the backend."), [], "acme")
    assert [c.value for c in review.candidates] == ["Hono"]
    assert [(o.action, o.reason) for o in review.ignored] == [
        ("ignored", "instruction"), ("dropped", "instruction to the assistant, not a project memory")]


def test_one_candidate_per_key_with_a_hedge_on_another_value_kept_beside_it():
    review = review_candidates(
        [decision("database:database", "SQLite", content="SQLite for now"),
         decision("database:database", "Postgres", 0.35, hedged=True, content="maybe Postgres later"),
         decision("database:database", "SQLite", 0.85, content="SQLite it is")],
        user("SQLite for now, maybe Postgres later. SQLite it is."), [], "acme")
    assert [(c.value, c.hedged) for c in review.candidates] == [("Postgres", True), ("SQLite", False)]
    assert [o.reason for o in review.ignored] == ["outranked by another statement of its key in the turn"]


def test_a_rejection_confirms_the_assistants_proposal_by_no_route():
    turn = [TurnMessage("assistant", "Should we use Redis for the cache?", "a1"), TurnMessage("user", "不对。", "h1")]
    by_value = decision("database:cache", "Redis", confirms=True)
    by_id = Candidate(kind="decision", content="Go with it", confidence=0.9, confirms=True, same_as=1)
    review = review_candidates([by_value, by_id], turn, [ExistingMemory(1, "(pending) cache: Redis", pending=True)],
                               "acme")
    assert review.candidates == []
    assert [o.reason for o in review.ignored] == ["a rejection confirms nothing"] * 2
