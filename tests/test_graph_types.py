"""The nodes' state annotations against the graphs that run them.

LangGraph reads a node's input schema from the annotation of its first parameter: the node then receives only the
channels of that schema, and the schema's channels are added to the graph. So every node's schema must name only
channels of the graph's state, with their types (the shared nodes: ``load_rules`` in both agent graphs, ``extract``
in all three and in users' graphs), and no annotation may add a channel the graph's state does not declare.
"""

from __future__ import annotations

from typing import Annotated, Any, get_args, get_origin, get_type_hints

import pytest
from langchain_core.messages import AnyMessage
from langgraph.graph import MessagesState, StateGraph
from typing_extensions import TypedDict

from z0_memory.graphs.chat import build_chat_graph
from z0_memory.graphs.code import build_code_graph
from z0_memory.graphs.extraction import build_extraction_graph
from z0_memory.graphs.retrieval import build_retrieval_graph
from z0_memory.nodes.extraction import extract
from z0_memory.schemas import WriteOutcome
from z0_memory.state import ChatState, CodeState, ExtractionInput, RetrievalState, SessionState

BUILDERS = {"chat": build_chat_graph, "code": build_code_graph, "extraction": build_extraction_graph,
            "retrieval": build_retrieval_graph}


def channels(schema: Any) -> dict[str, Any]:
    return get_type_hints(schema, include_extras=True)


def value_type(hint: Any) -> Any:
    """A channel's value type without its reducer (``Annotated[list[AnyMessage], add_messages]``: the list)."""
    return get_args(hint)[0] if get_origin(hint) is Annotated else hint


def part_of(schema: Any, state: dict[str, Any]) -> bool:
    own = channels(schema)
    return set(own) <= set(state) and all(value_type(own[k]) == value_type(state[k]) for k in own)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_node_reads_a_part_of_its_graphs_state_and_adds_no_channel(name: str) -> None:
    builder = BUILDERS[name]()
    state = channels(builder.state_schema)
    assert set(builder.channels) == set(state), name
    for node, spec in builder.nodes.items():
        assert part_of(spec.input_schema, state), (name, node)
    for source, branches in builder.branches.items():
        for branch in branches.values():
            assert branch.input_schema is None or part_of(branch.input_schema, state), source


def test_the_shared_nodes_take_the_state_every_graph_that_runs_them_extends() -> None:
    schemas = {name: {node: spec.input_schema for node, spec in BUILDERS[name]().nodes.items()} for name in BUILDERS}
    assert {schemas[g]["extract"] for g in ("chat", "code", "extraction")} == {ExtractionInput}
    assert {schemas[g]["load_rules"] for g in ("chat", "code")} == {SessionState}
    assert schemas["chat"]["respond"] is ChatState and schemas["code"]["agent"] is CodeState
    assert {schemas["retrieval"][n] for n in ("route", "retrieve", "evaluate", "rewrite")} == {RetrievalState}


def test_the_extraction_channel_is_described_as_write_outcomes() -> None:
    """What Studio and the dev server's schema endpoint show for the channel."""
    schema = build_extraction_graph().compile().get_output_jsonschema()
    assert schema["properties"]["extraction"]["items"] == {"$ref": "#/$defs/WriteOutcome"}
    assert set(schema["$defs"]["WriteOutcome"]["properties"]) == set(WriteOutcome.model_fields)


class PlainMessages(TypedDict, total=False):
    messages: list[AnyMessage]  # no reducer: each update replaces the list


@pytest.mark.parametrize("state", [MessagesState, PlainMessages], ids=["add_messages", "plain-list"])
def test_extract_goes_into_a_users_graph_whatever_its_messages_reducer(state: Any) -> None:
    builder = StateGraph(state)
    builder.add_node("extract", extract)  # a conflicting channel type would raise here
    assert set(builder.channels) == {"messages"}
    assert builder.channels["messages"] == StateGraph(state).channels["messages"]  # the user's channel, kept
