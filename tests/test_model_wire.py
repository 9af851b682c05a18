"""The model path at the wire: the judge, the extractor, the responder and the embeddings through langchain-openai,
the openai SDK and httpx against a local OpenAI-compatible server (``tests/openai_wire_server.py``).

The in-process fakes of the other tests skip request building and response parsing; here both run for real:

* every structured-output request (``openai/<model>`` with a base URL and ``compatible/<model>``, methods
  ``json_schema`` and ``function_calling``) asks for strict mode with a schema that meets OpenAI's strict rules
  (:func:`strict_violations`, checked to reject the schema pydantic generates), and the answers parse into the
  project's pydantic schemas;
* a chat turn of the chat graph (responder, judge, extractor) runs through the server, non-streamed
  (``ainvoke``) and streamed (``astream(stream_mode="messages")``, as ``langgraph dev`` streams), and what the
  extractor returned is stored with its provenance;
* embeddings arrive base64-encoded (the openai SDK's default) or as floats, and a memory written through the
  remote embeddings is found again by a semantic search.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from openai_wire_server import WireServer, offline_tiktoken, wire  # noqa: F401 - fixtures
from reliability_support import fast_database, fast_memory, fast_owner, scratch_database  # noqa: F401

from z0_memory import llm
from z0_memory.config import Context
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.memory import Z0Memory
from z0_memory.nodes.extraction import ExtractionResult
from z0_memory.providers import Providers, ResilientEmbeddings, build_chat_model, build_embeddings
from z0_memory.schemas import Candidate, Verdict
from z0_memory.settings import Settings

pytestmark = pytest.mark.asyncio(loop_scope="session")

SPECS = ("openai/gpt-4o-mini", "compatible/qwen2.5-7b-instruct")
METHODS = ("json_schema", "function_calling")

# --- OpenAI's strict structured-output rules, as a validator ------------------------------------------------------

# Keywords strict mode accepts (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas);
# anything else (default, minLength, maxLength, patternProperties, allOf, not, if/then/else, uniqueItems, ...) is
# rejected with "'<keyword>' is not permitted".
ALLOWED_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description",
    "title", "$ref", "$defs", "definitions", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
})
ALLOWED_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
MAX_DEPTH = 10


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """What in ``schema`` OpenAI's strict mode refuses (empty when it is accepted)."""
    problems: list[str] = []
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("the root must be an object (not anyOf)")
    defs = {**schema.get("$defs", {}), **schema.get("definitions", {})}

    def walk(node: Any, where: str, depth: int) -> None:
        if not isinstance(node, dict):
            problems.append(f"{where}: a schema must be an object")
            return
        if depth > MAX_DEPTH:
            problems.append(f"{where}: nested deeper than {MAX_DEPTH} levels")
        for key in node:
            if key not in ALLOWED_KEYWORDS:
                problems.append(f"{where}: '{key}' is not permitted")
        if "format" in node and node["format"] not in ALLOWED_FORMATS:
            problems.append(f"{where}: format {node['format']!r} is not supported")
        if "$ref" in node:
            ref = node["$ref"]
            if len(node) > 1 and set(node) - {"$ref", "description"}:
                problems.append(f"{where}: $ref with sibling keywords")
            name = ref.rsplit("/", 1)[-1]
            if not ref.startswith(("#/$defs/", "#/definitions/")) or name not in defs:
                problems.append(f"{where}: $ref {ref!r} does not resolve")
            return
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        if "object" in types or "properties" in node:
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: object without additionalProperties: false")
            props = node.get("properties", {})
            missing = [p for p in props if p not in node.get("required", [])]
            if missing:
                problems.append(f"{where}: properties not in required: {missing}")
            for name, prop in props.items():
                walk(prop, f"{where}.{name}", depth + 1)
        if "items" in node:
            walk(node["items"], f"{where}[]", depth + 1)
        for i, option in enumerate(node.get("anyOf", [])):
            walk(option, f"{where}|{i}", depth)
        if not types or types == [None]:
            if not any(k in node for k in ("anyOf", "enum", "const")):
                problems.append(f"{where}: no type")

    walk(schema, "$", 0)
    for name, definition in defs.items():
        walk(definition, f"$defs.{name}", 1)
    return problems


async def test_the_validator_rejects_what_strict_mode_rejects():
    """It can fail: pydantic's own schemas (defaults, optional fields left out of required, open objects) and the
    usual offenders are refused; the project's strict conversion of the same models is accepted."""
    for model in (Verdict, ExtractionResult, Candidate):
        problems = strict_violations(model.model_json_schema())
        assert any("'default' is not permitted" in p for p in problems), problems
        assert any("additionalProperties" in p for p in problems), problems
        assert strict_violations(llm.strict_json_schema(model)) == []
    bad = {"type": "object", "additionalProperties": False, "required": ["a", "b"],
           "properties": {"a": {"type": "string", "minLength": 1}, "b": {"type": "string", "format": "uri"},
                          "c": {"type": "object", "properties": {}}}}
    problems = strict_violations(bad)
    assert "$.a: 'minLength' is not permitted" in problems
    assert "$.b: format 'uri' is not supported" in problems
    assert "$: properties not in required: ['c']" in problems
    assert "$.c: object without additionalProperties: false" in problems
    assert strict_violations({"anyOf": [{"type": "object"}]})[0].startswith("the root must be an object")


async def test_strict_schema_keeps_property_names_that_look_like_keywords():
    from pydantic import BaseModel, Field

    class Odd(BaseModel):
        title: str = Field(default="x", description="a property called title")
        default: int | None = None

    schema = llm.strict_json_schema(Odd)
    assert set(schema["properties"]) == {"title", "default"} and schema["required"] == ["title", "default"]
    assert "default" not in schema["properties"]["default"] and strict_violations(schema) == []


# --- one structured call per provider spelling, method and schema ----------------------------------------------

RUN_FIELDS = {"mode", "max_rounds"}  # the run settings these tests give; every other keyword is the process's


def wire_setup(server: WireServer, spec: str, *, method: str = "json_schema", **kw: Any) -> tuple[Settings, Context]:
    """The process's Settings (every model on ``spec`` at the wire server) and the run's Context."""
    key = {"openai_api_key": "sk-wire-test"} if spec.startswith("openai/") else {}
    values = {"agent_model": spec, "judge_model": spec, "extractor_model": spec, "embedding_model": "hash",
              "model_timeout_s": 5.0, "model_retries": 0, **key, **kw}
    run = {k: v for k, v in values.items() if k in RUN_FIELDS}
    process = {k: v for k, v in values.items() if k not in RUN_FIELDS}
    settings = Settings(openai_base_url=server.base_url, structured_output_method=method, **process)
    return settings, Context(project="acme", **run)


VERDICT = Verdict(sufficient=False, missing="the cache's eviction policy", reason="only the engine is known",
                  next_query="cache eviction policy", next_strategy="keyword")
EXTRACTED = ExtractionResult(candidates=[Candidate(
    kind="decision", key="acme:cache:engine", value="Valkey", content="The cache engine is Valkey.", confidence=0.92,
    rationale="it is open source", supersedes=[2], same_as=None)])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("schema,answer", [(Verdict, VERDICT), (ExtractionResult, EXTRACTED)],
                         ids=["judge", "extractor"])
async def test_structured_request_is_strict_and_the_answer_parses(wire, spec, method, schema, answer):
    settings, _ = wire_setup(wire, spec, method=method)
    wire.script(schema.__name__, answer.model_dump(mode="json"))
    providers = Providers(settings)
    model = providers.chat("judge")
    out = await llm.invoke_structured(model, schema, [SystemMessage("system"), HumanMessage("the question")], settings,
                                      what="wire", runnable=providers.structured(model, schema, method))
    assert out == answer  # the server's JSON, parsed by the SDK / LangChain and validated into the pydantic model

    [request] = wire.requests
    assert request.path == "/v1/chat/completions" and request.body["model"] == spec.split("/", 1)[1]
    assert request.headers["authorization"] == ("Bearer sk-wire-test" if spec.startswith("openai/")
                                                else "Bearer not-needed")
    assert request.body["messages"] == [{"role": "system", "content": "system"},
                                        {"role": "user", "content": "the question"}]
    sent = request.schema
    assert sent["name"] == schema.__name__ and sent["strict"] is True
    assert strict_violations(sent["schema"]) == []
    if method == "json_schema":
        assert request.body["response_format"]["type"] == "json_schema" and "tools" not in request.body
    else:
        assert request.body["tool_choice"] == {"type": "function", "function": {"name": schema.__name__}}
        assert request.body["parallel_tool_calls"] is False and "response_format" not in request.body
    # the strict schema lists exactly the pydantic model's fields, so no answer field is silently dropped
    assert set(sent["schema"]["properties"]) == set(schema.model_fields)


async def test_the_chat_responder_sends_the_thread_and_reads_the_text(wire):
    settings, _ = wire_setup(wire, "compatible/qwen2.5-7b-instruct")
    wire.script("chat", "We use Valkey for the cache.")
    model = build_chat_model(settings.agent_model, settings)
    reply = await llm.invoke_messages(model, [SystemMessage("rules"), HumanMessage("which cache?")], settings,
                                      what="wire")
    assert reply.content == "We use Valkey for the cache."
    assert reply.response_metadata["finish_reason"] == "stop"
    [request] = wire.requests
    assert request.kind == "chat" and request.body["temperature"] == 0 and not request.stream


# --- a chat turn of the chat graph, through the wire --------------------------------------------------------------

def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"wire-{uuid.uuid4().hex}"}}


USER_TURN = "We decided to use Valkey as the cache because it is open source."


def script_good_turn(server: WireServer) -> None:
    server.script("chat", "Noted: Valkey is the cache.")
    server.script("Verdict", {"sufficient": True, "missing": "", "reason": "enough", "next_query": None,
                              "next_strategy": None})
    server.script("ExtractionResult", EXTRACTED.model_dump(mode="json"))


@pytest.mark.parametrize("streamed", [False, True], ids=["ainvoke", "stream-messages"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("spec", SPECS)
async def test_a_chat_turn_runs_responder_judge_and_extractor_over_the_wire(wire, fast_memory, fast_database,
                                                                          tmp_path, spec, method, streamed):
    script_good_turn(wire)
    settings, ctx = wire_setup(wire, spec, method=method, database_url=fast_database, mode="chat", max_rounds=1,
                               rules_root=str(tmp_path))
    async with Z0Memory(settings) as memory:
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        cfg = thread()
        if streamed:
            tokens = [chunk async for chunk, _meta in graph.astream(
                {"messages": [HumanMessage(USER_TURN)]}, cfg, context=ctx, stream_mode="messages")]
            assert tokens, "the responder's tokens were streamed"
            out = (await graph.aget_state(cfg)).values
        else:
            out = await graph.ainvoke({"messages": [HumanMessage(USER_TURN)]}, cfg, context=ctx)
        fact = await memory.scope("acme").facts.get("acme:cache:engine")

    assert out["messages"][-1].content == "Noted: Valkey is the cache."
    assert [r.kind for r in wire.requests if r.kind != "embeddings"].count("chat") == 1
    assert {r.kind for r in wire.requests} == {"chat", "Verdict", "ExtractionResult"}
    assert all(r.stream is streamed for r in wire.requests)
    for request in wire.requests:
        if request.kind != "chat":
            assert request.schema["strict"] is True and strict_violations(request.schema["schema"]) == []
    [round_] = out["trace"]
    assert round_.verdict is True and round_.error is None  # the judge's answer was used, not the offline judge
    [extraction] = wire.of("ExtractionResult")
    assert USER_TURN in json.dumps(extraction.body["messages"])  # the extractor was shown the turn
    assert fact is not None and fact.value == "Valkey"
    assert fact.provenance.extractor == f"llm/{spec.split('/', 1)[1]}"
    assert [o.action for o in out["extraction"]] != ["queued_for_retry"]


# --- embeddings -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,encoding", [("openai/text-embedding-3-small", "base64"),
                                           ("compatible/bge-m3", "base64"),
                                           ("compatible/bge-m3", "float")])
async def test_embeddings_decode_base64_and_float_vectors(wire, offline_tiktoken, spec, encoding):
    settings = Settings(embedding_model=spec, openai_base_url=wire.base_url, openai_api_key="sk-wire-test")
    embeddings, dims = build_embeddings(spec, settings)
    assert isinstance(embeddings, ResilientEmbeddings)
    if encoding == "float":
        embeddings.inner.model_kwargs = {"encoding_format": "float"}
    wire.embedding_dims = 1536 if spec.startswith("openai/") else 96
    vectors = await embeddings.aembed_documents(["Valkey is the cache.", "Hono is the backend."])
    query = await embeddings.aembed_query("Valkey is the cache.")
    [docs, one] = wire.of("embeddings")
    assert docs.body["encoding_format"] == encoding and docs.body["model"] == spec.split("/", 1)[1]
    if spec.startswith("openai/"):  # the context-length check sends token ids (cl100k_base), not text
        assert all(isinstance(t, int) for t in docs.body["input"][0]) and dims == 1536
    else:
        assert docs.body["input"] == ["Valkey is the cache.", "Hono is the backend."] and dims is None
    expected = [wire.vector(t) for t in docs.body["input"]]
    assert len(vectors) == 2 and len(vectors[0]) == wire.embedding_dims
    for got, want in zip(vectors, expected, strict=True):
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-6  # float32 on the wire
    assert query == pytest.approx(vectors[0], abs=1e-6)


async def test_a_memory_embedded_over_the_wire_is_found_again(wire, database_url):
    """A database of its own (the remote model's dimension is probed at open) and a semantic search through it."""
    with scratch_database(database_url, "z0_wire") as url:
        wire.embedding_dims = 48
        settings = Settings(database_url=url, embedding_model="compatible/e5",
                            openai_base_url=wire.base_url)
        async with Z0Memory(settings) as memory:
            assert await memory.providers.embedding_dims() == 48
            pm = memory.scope("acme")
            await pm.facts.put("acme:cache:engine", "Valkey")
            hits = await pm.semantic.search("acme:cache:engine Valkey", 3)
        assert hits and "Valkey" in hits[0].content
        assert len(wire.of("embeddings")) >= 3  # the probe, the write, the search


# --- the code agent's tool calls -----------------------------------------------------------------------------------

@pytest.mark.parametrize("streamed", [False, True], ids=["ainvoke", "stream-messages"])
async def test_the_code_agent_calls_its_tools_over_the_wire(wire, fast_memory, fast_database, tmp_path, streamed):
    """``bind_tools``: the tool definitions go out, the model's tool call comes back and runs, and its result goes
    back to the model as a ``tool`` message answering that call's id."""
    from openai_wire_server import ToolCalls

    from z0_memory.graphs.code import builder as code_builder

    await fast_memory.scope("acme").facts.put("acme:cache:engine", "Valkey")
    wire.script("chat", ToolCalls(("recall_memory", {"query": "which cache engine"})), "The cache is Valkey [1].")
    settings, ctx = wire_setup(wire, "openai/gpt-4o-mini", database_url=fast_database, mode="code", max_rounds=1,
                               judge_model="offline", extractor_model="offline", rules_root=str(tmp_path))
    async with Z0Memory(settings) as memory:
        graph = code_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        cfg = thread()
        if streamed:
            async for _ in graph.astream({"messages": [HumanMessage("Which cache do we use?")]}, cfg, context=ctx,
                                         stream_mode="messages"):
                pass
            out = (await graph.aget_state(cfg)).values
        else:
            out = await graph.ainvoke({"messages": [HumanMessage("Which cache do we use?")]}, cfg, context=ctx)
    assert out["messages"][-1].content == "The cache is Valkey [1]."
    first, second = wire.of("chat")
    assert "recall_memory" in {t["function"]["name"] for t in first.body["tools"]}
    assert all(r.stream is streamed for r in (first, second))
    [call] = [m for m in second.body["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
    [result] = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == call["tool_calls"][0]["id"]
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"query": "which cache engine"}
    assert "Valkey" in result["content"]  # the tool ran against memory and its result reached the model
