"""The retrieval loop as a subgraph of a user's messages-only graph, with no glue node and no copied channels."""

from __future__ import annotations

from typing import get_type_hints

import pytest
from langgraph.graph import END, START, MessagesState, StateGraph
from typing_extensions import TypedDict

from z0_memory import Context, RetrievalChannels, build_retrieval_graph, retrieval_subgraph
from z0_memory.errors import ConfigurationError
from z0_memory.state import ChatState

QUESTION = "which backend framework do we use?"


class State(MessagesState, RetrievalChannels):
    pass


async def seed(memory) -> None:
    await memory.scope("acme").facts.put("acme:stack:backend_framework", "Hono")


def parent_graph(memory):
    builder = StateGraph(State, context_schema=Context)
    builder.add_node("recall", retrieval_subgraph(State))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=memory.store("acme"))


@pytest.mark.asyncio(loop_scope="session")
async def test_a_messages_only_parent_searches_by_the_latest_human_message(memory):
    await seed(memory)
    out = await parent_graph(memory).ainvoke(
        {"messages": [("user", "hello"), ("ai", "hi"), ("user", QUESTION)]}, context=Context(project="acme"))
    assert out["question"] == QUESTION
    assert out["memories"][0].key == "acme:stack:backend_framework"
    assert out["verdict"].sufficient and out["trace"] and out["stop_reason"] == "sufficient"
    # the standalone graph takes messages too
    alone = await build_retrieval_graph().compile(store=memory.store("acme")).ainvoke(
        {"messages": [("user", QUESTION)]}, context=Context(project="acme"))
    assert alone["memories"][0].key == "acme:stack:backend_framework"


@pytest.mark.asyncio(loop_scope="session")
async def test_no_question_and_no_human_message_names_the_channels(memory):
    with pytest.raises(ValueError, match=r"'question'.*'messages'.*RetrievalChannels"):
        await parent_graph(memory).ainvoke({"messages": [("ai", "hi")]}, context=Context(project="acme"))


def test_a_parent_without_somewhere_to_put_the_hits_is_refused_naming_the_channel():
    with pytest.raises(ConfigurationError, match=r"no 'memories' channel.*RetrievalChannels"):
        retrieval_subgraph(MessagesState)

    class OnlyHits(TypedDict, total=False):
        memories: list

    with pytest.raises(ConfigurationError, match=r"neither a 'question' nor a 'messages' channel"):
        retrieval_subgraph(OnlyHits)


def test_chat_state_uses_the_mixin():
    assert set(get_type_hints(RetrievalChannels)) <= set(get_type_hints(ChatState))
