"""The offline lexical reranker (z0_memory.offline.rerank) on hand-made hits, and Context.rerank in the real loop."""

from __future__ import annotations

import pytest

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.offline.rerank import _proximity, lexical_scores, rerank
from z0_memory.schemas import Hit


def hit(i: str, content: str, *, session: str | None = None, turn: int | None = None,
        speaker: str | None = None) -> Hit:
    metadata = {}
    if session is not None:
        metadata.update(session=session, turn=turn)
    if speaker is not None:
        metadata["speaker"] = speaker
    return Hit(id=i, source="semantic", content=content, score=1.0, metadata=metadata)


def test_a_low_hit_that_covers_the_question_moves_up_and_none_is_dropped():
    hits = [hit("a", "Caroline: I went hiking with friends"), hit("b", "Caroline: the weather was nice today"),
            hit("c", "Melanie: I painted a lake sunrise last year"), hit("d", "Caroline: I love my dog")]
    out = rerank("When did Melanie paint a sunrise?", hits)
    assert [h.id for h in out].index("c") < 2  # from the loop's third place to the top two
    assert sorted(h.id for h in out) == ["a", "b", "c", "d"]
    assert out[0].score == 1.0  # same hits, re-ordered; scores untouched


def test_no_question_word_anywhere_keeps_the_loops_order():
    hits = [hit(str(i), text) for i, text in enumerate(["alpha beta", "gamma delta", "epsilon zeta"])]
    assert [h.id for h in rerank("What did Melanie paint?", hits)] == ["0", "1", "2"]


def test_a_reply_borrows_the_words_of_the_turn_before_it():
    question = hit("q", "Caroline: What did you paint for the sunrise?", session="s1", turn=3)
    reply = hit("r", "Melanie: A lake at dawn.", session="s1", turn=4)
    far = hit("f", "Melanie: A lake at dawn.", session="s2", turn=9)  # same words, no neighbour in the pool
    scores = lexical_scores("What did Melanie paint for the sunrise?", [question, reply, far])
    assert scores[1][0] > scores[2][0] > 0.0  # the speaker covers the entity; the neighbour adds paint, sunrise


def test_proximity_prefers_the_question_words_together():
    assert _proximity(["red", "car", "x", "y"], frozenset({"red", "car"})) == 1.0
    assert _proximity(["red", "x", "y", "car"], frozenset({"red", "car"})) == 0.5
    assert _proximity(["x"], frozenset({"red"})) == 0.0
    together = hit("t", "Jon: my red car broke down yesterday")
    apart = hit("p", "Jon: the red paint on the old car")
    scores = lexical_scores("Where did Jon's red car break?", [apart, together])
    assert scores[1][1] > scores[0][1]
    other = hit("o", "Jon: nothing to see here")
    # equal weights: the loop's first hit keeps its place, the close match passes the loop's second
    assert [h.id for h in rerank("Where did Jon's red car break?", [apart, other, together])] == ["p", "t", "o"]


def test_the_context_option_is_a_boolean():
    assert Context(project="p").rerank is False
    assert Context(project="p", rerank="true").rerank is True
    with pytest.raises(ConfigurationError, match="rerank"):
        Context(project="p", rerank=3)


@pytest.mark.asyncio(loop_scope="session")
async def test_context_rerank_reorders_the_loops_final_evidence_once(memory, monkeypatch):
    from z0_memory.graphs.retrieval import builder
    from z0_memory.stores.semantic import NewMemory

    pm = memory.scope("rerank-loop")
    await pm.forget_everything()
    texts = ["Melanie: I went to the beach with the kids", "Caroline: I joined a support group",
             "Melanie: we camped in the mountains last summer", "Melanie: I painted a lake sunrise in 2022",
             "Caroline: the kids loved the beach too", "Melanie: pottery class was fun"]
    await pm.semantic.add_many([NewMemory(t, category="conversation", kind="context") for t in texts])
    g = builder.compile(store=memory.operator_store())
    question = "When did Melanie paint a sunrise?"
    base = {"project": "rerank-loop", "judge_model": "offline", "mode": "code", "max_rounds": 2}
    plain = await g.ainvoke({"question": question}, context=Context(**base))
    ranked = await g.ainvoke({"question": question}, context=Context(**base, rerank=True))
    assert [h.id for h in ranked["memories"]] == [h.id for h in rerank(question, plain["memories"])]
    # the node calls the reranker once, after the last round, and hands back its order (a spy that reverses)
    import z0_memory.nodes.retrieval as nodes

    calls = []

    def spy(q, hits):
        calls.append((q, len(hits)))
        return list(reversed(hits))

    monkeypatch.setattr(nodes, "offline_rerank", spy)
    spied = await g.ainvoke({"question": question}, context=Context(**base, rerank=True))
    assert calls == [(question, len(plain["memories"]))]
    assert [h.id for h in spied["memories"]] == [h.id for h in reversed(plain["memories"])]
    await g.ainvoke({"question": question}, context=Context(**base))
    assert len(calls) == 1  # off by default
    await pm.forget_everything()
