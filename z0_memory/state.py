"""State schemas of the graphs (``typing_extensions.TypedDict``: LangGraph's API server needs it on 3.11)."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from z0_memory.schemas import Hit, RoundTrace, RouteDecision, Verdict, WriteOutcome

# The pydantic models the channels hold (RouteDecision: inside a round's trace), as LangGraph's msgpack allowlist
# names them: a checkpointer may restore exactly these. Ours pass them to their serializer; with one's own, pass
# ``serde=JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)`` (else LangGraph 1.2 warns once per type that it
# restores an unregistered type; with LANGGRAPH_STRICT_MSGPACK=true it derives them from the graphs' schemas).
STATE_TYPES: list[tuple[str, str]] = [(t.__module__, t.__name__)
                                      for t in (Hit, Verdict, RoundTrace, RouteDecision, WriteOutcome)]


class RetrievalInput(TypedDict, total=False):
    """What the loop reads: ``question``, or else the latest human message of ``messages``."""

    question: str
    messages: list[AnyMessage]
    max_rounds: int | None
    include_history: bool


class RetrievalOutput(TypedDict, total=False):
    question: str
    route: dict[str, Any]
    memories: list[Hit]
    verdict: Verdict | None
    trace: list[RoundTrace]
    stop_reason: str


class RetrievalChannels(TypedDict, total=False):
    """The channels a parent graph needs to run the retrieval loop as a subgraph: inherit it in your state.

        class State(MessagesState, RetrievalChannels): ...
        builder.add_node("recall", build_retrieval_graph().compile())

    In: ``question`` (optional: the latest human message of ``messages`` when unset), ``max_rounds``,
    ``include_history``. Out: ``memories`` (the hits, best first), ``verdict`` (the judge's last word), ``trace``
    (every round), ``stop_reason``, and ``question`` as searched.
    """

    question: str
    max_rounds: int | None
    include_history: bool
    memories: list[Hit]
    verdict: Verdict | None
    trace: list[RoundTrace]
    stop_reason: str


class RetrievalState(TypedDict, total=False):
    """The adversarial retrieval loop; every round is kept in ``trace`` for debugging in Studio."""

    messages: list[AnyMessage]
    question: str
    max_rounds: int | None
    include_history: bool
    route: dict[str, Any]
    query: str
    strategies: list[str]
    key: str | None
    prefix: str | None
    time_window: dict[str, str] | None
    round: int
    queries_tried: list[str]
    round_hits: list[list[Hit]]
    memories: list[Hit]
    verdict: Verdict | None
    trace: list[RoundTrace]
    stop_reason: str


class ExtractionInput(TypedDict, total=False):
    """What the post-turn extraction node reads, whatever graph runs it: the thread's ``messages``.

    LangGraph takes a node's input schema from its annotation and adds that schema's channels to the graph, so this
    names the one channel the node reads, without a reducer: it fits a graph whose ``messages`` add up
    (``add_messages``, the agent graphs, ``MessagesState``) as well as one whose ``messages`` are a plain list.
    """

    messages: list[AnyMessage]


class ExtractionState(TypedDict, total=False):
    """What the post-turn extraction node reads (messages) and writes (what it did with each candidate)."""

    messages: Annotated[list[AnyMessage], add_messages]
    extraction: list[WriteOutcome]


class SessionState(ExtractionState, total=False):
    """The channels both agent graphs share: the thread (layer 3), the rules (layer 1), the extraction outcome."""

    rules: str
    rules_sources: list[str]


class ChatState(SessionState, RetrievalChannels, total=False):
    """Chat mode: the three layers as channels — rules, recalled memories, and the thread's messages."""


class CodeState(SessionState, total=False):
    """Code mode: memory and the thread's past reach the agent only through its tools."""

    prompt_tokens: int
