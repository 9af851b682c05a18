"""Bad input: odd messages through the graphs, invalid names and wrong types through every public API, NUL bytes,
and rules files the graphs cannot use.

Each case either completes gracefully (the graphs: empty, whitespace, 1 MB, binary, NUL and control-character
messages) or raises a clear error naming the problem (a ``ValueError`` subclass naming the field: project, user_id,
category, entity, key, value, content, confidence...), and nothing half-written remains: the rows of every z0
table are counted before and after. Postgres text cannot hold NUL bytes: conversation text is cleaned of them
(``tokens.message_text``), while the stores refuse them with ``InvalidInputError`` instead of a driver DataError.
Key parsing and rules loading are fuzzed in test_keys.py and test_rules.py; here they are driven
through the stores, the LangGraph store, ``Context`` and the graphs.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import GetOp, PutOp, SearchOp
from reliability_support import fast_database, fast_memory, fast_owner, fast_run, record  # noqa: F401

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError, InvalidInputError, InvalidKeyError, RulesError
from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.graphs.code import builder as code_builder
from z0_memory.graphs.extraction import builder as extraction_builder
from z0_memory.schemas import Candidate, Provenance
from z0_memory.settings import Settings

pytestmark = pytest.mark.asyncio(loop_scope="session")

TABLES = ("z0_facts", "z0_memories", "z0_pending", "z0_extraction_queue")
_rng = random.Random(7)
_VOCAB = [f"w{_rng.randrange(10**6)}" for _ in range(4000)]
MEGABYTE = ("We decided to use Postgres because " + " ".join(_rng.choice(_VOCAB) for _ in range(150_000)))[:1_000_000]
BINARY = bytes(_rng.randrange(256) for _ in range(4096)).decode("latin-1")

MESSAGES = {
    "empty": "",
    "whitespace": " \n\t  \r\n",
    "one_megabyte": MEGABYTE,
    "binary": BINARY,
    "nul_bytes": "We decided\x00 to use Redis\x00 for the cache.\x00",
    "control_chars": "\x01\x02\x1b[31mWe decided to use Redis\x07 for caching\x7f\x1b[0m \u202eesrever\u202c",
    "emoji_and_zero_width": "We decided to use 🦀 Rust\u200b for the CLI \ufeff",
}


async def counts(memory) -> dict[str, int]:
    async with memory.db.connection() as conn:
        return {t: (await (await conn.execute(f"SELECT count(*) AS n FROM {t}")).fetchone())["n"] for t in TABLES}


async def nul_free(memory) -> None:
    async with memory.db.connection() as conn:
        for table, col in (("z0_facts", "value"), ("z0_memories", "content"), ("z0_pending", "content")):
            row = await (await conn.execute(
                f"SELECT count(*) AS n FROM {table} WHERE position(chr(1) IN {col}) > 0")).fetchone()
            assert row["n"] == 0 or table != "z0_facts", "control characters reached a fact value"


def cfg() -> dict:
    return {"configurable": {"thread_id": f"bad-{random.random()}"}}


@pytest.mark.parametrize("kind", list(MESSAGES))
async def test_odd_messages_through_every_graph(fast_memory, fast_database, tmp_path, kind):
    text = MESSAGES[kind]
    mem, chat_ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    code_ctx = chat_ctx.replace(mode="code")
    store, saver = mem.store("acme"), mem.checkpointer("acme")
    before = await counts(fast_memory)
    if not text.strip():
        with pytest.raises(ValueError, match="non-empty user message"):
            await chat_builder.compile(store=store, checkpointer=saver).ainvoke(
                {"messages": [HumanMessage(text)]}, cfg(), context=chat_ctx)
        assert await counts(fast_memory) == before  # nothing half-written
    else:
        out = await chat_builder.compile(store=store, checkpointer=saver).ainvoke(
            {"messages": [HumanMessage(text)]}, cfg(), context=chat_ctx)
        assert isinstance(out["messages"][-1], AIMessage) and len(out["question"]) <= 4000
    out = await code_builder.compile(store=store, checkpointer=saver).ainvoke(
        {"messages": [HumanMessage(text)]}, cfg(), context=code_ctx)
    assert isinstance(out["messages"][-1], AIMessage) and not out["messages"][-1].tool_calls
    out = await extraction_builder.compile(store=store).ainvoke(
        {"messages": [HumanMessage(text), AIMessage("Noted.")]}, context=chat_ctx)
    assert all(o.action != "queued_for_retry" for o in out["extraction"])
    if not text.strip():
        assert out["extraction"] == [] and await counts(fast_memory) == before
    async with fast_memory.db.connection() as conn:  # whatever was stored is clean text
        rows = await (await conn.execute("SELECT content FROM z0_memories UNION ALL SELECT content FROM z0_pending "
                                         "UNION ALL SELECT value FROM z0_facts")).fetchall()
    assert all("\x00" not in r["content"] for r in rows)
    record(f"bad_input.message_{kind}", operations=3, bad_inputs=3)


BAD_NAMES = [
    "a:b", "a/b", "a\\b", "a b", "a'b", 'a"b', "a`b", "x';DROP TABLE z0_facts;--", "a\x00b", "a\nb", "a\tb", "a\rb",
    "\x1b[31m", "a\u200bb", "\u202eacme", "a\u0301", "a：b", "ｘ／ｙ", "a" * 129, "", "_lead", "-lead", ".lead",
    "a*", "a%", "a$b", "${env}", "<script>", "a\u2028b", "🦀",
]


@pytest.mark.parametrize("bad", BAD_NAMES, ids=[repr(b)[:24] for b in BAD_NAMES])
async def test_invalid_names_are_refused_everywhere_with_the_field_named(fast_memory, bad):
    before = await counts(fast_memory)
    acme = fast_memory.scope("acme")
    store = fast_memory.operator_store()  # (project, category) namespaces, any project
    tried = 0

    def refused(exc: BaseException, field: str) -> None:
        assert isinstance(exc, ValueError), exc
        message = str(exc)
        assert field in message or "three ':'-separated parts" in message, (field, message)

    cases = [
        ("project", lambda: fast_memory.scope(bad)),
        ("project", lambda: Context(project=bad)),
        ("project", lambda: acme.facts.get(f"{bad}:stack:x")),
        ("category", lambda: acme.facts.put(f"acme:{bad}:x", "v")),
        ("entity", lambda: acme.facts.put(f"acme:stack:{bad}", "v")),
        ("entity", lambda: acme.facts.history(f"acme:stack:{bad}")),
        ("entity", lambda: acme.facts.forget(f"acme:stack:{bad}")),
        ("category", lambda: acme.facts.list(bad)),
        ("category", lambda: acme.semantic.add("a note", category=bad)),
        ("project", lambda: store.abatch([PutOp((bad, "stack"), "x", {"value": "v"})])),
        ("category", lambda: store.abatch([PutOp(("acme", bad), "x", {"value": "v"})])),
        ("entity", lambda: store.abatch([PutOp(("acme", "stack"), bad, {"value": "v"})])),
        ("entity", lambda: store.abatch([GetOp(("acme", "stack"), bad)])),
        ("project", lambda: store.abatch([SearchOp((bad,), query="anything")])),
        ("category", lambda: store.abatch([SearchOp(("acme", bad))])),
        ("category", lambda: store.abatch([SearchOp(("acme", bad), query="anything")])),
    ]
    if bad:  # "" is the shared memory of a project, a valid user id
        cases += [("user_id", lambda: fast_memory.scope("acme", bad)), ("user_id", lambda: Context(user_id=bad))]
    for field, call in cases:
        tried += 1
        with pytest.raises(ValueError) as err:
            result = call()
            if hasattr(result, "__await__"):
                await result
        refused(err.value, field)
    assert await counts(fast_memory) == before
    record("bad_input.names", bad_inputs=tried)


@pytest.mark.parametrize("lookalike", ["аcme", "ａｃｍｅ", "𝐚𝐜𝐦𝐞", "ACME", "acme.", "acme-"])
async def test_unicode_lookalike_projects_are_separate_scopes(fast_memory, lookalike):
    """A lookalike of a project name is accepted only as a project of its own: nothing of "acme" is visible in it."""
    try:
        other = fast_memory.scope(lookalike)
    except InvalidKeyError:
        record("bad_input.lookalike", bad_inputs=1)
        return  # refused outright is fine too
    acme = fast_memory.scope("acme")
    await acme.facts.put("acme:stack:backend", "Hono")
    await acme.semantic.add("acme deploys to Fly.io", category="deploy")
    assert await other.facts.list(include_superseded=True) == []
    assert await other.semantic.keyword_search("acme deploys Fly.io Hono", 10, include_superseded=True) == []
    await other.facts.put(f"{lookalike}:stack:backend", "Django")
    assert (await acme.facts.get("acme:stack:backend")).value == "Hono"
    record("bad_input.lookalike", bad_inputs=1, operations=5)


async def test_wrong_types_and_nul_bytes_get_clear_errors_and_write_nothing(fast_memory):
    acme = fast_memory.scope("acme")
    store = fast_memory.store("acme")
    await acme.facts.put("acme:stack:backend", "Hono")
    before = await counts(fast_memory)
    cases = [
        (lambda: acme.facts.put("acme:stack:backend", 123), "value"),
        (lambda: acme.facts.put("acme:stack:backend", None), "value"),
        (lambda: acme.facts.put("acme:stack:backend", b"Hono"), "value"),
        (lambda: acme.facts.put("acme:stack:backend", "   "), "value"),
        (lambda: acme.facts.get(123), "key"),
        (lambda: acme.facts.get(None), "key"),
        (lambda: acme.facts.get("acme:stack"), "three"),
        (lambda: acme.semantic.add(b"bytes"), "content"),
        (lambda: acme.semantic.add(""), "content"),
        (lambda: acme.semantic.add("note", kind="secret"), "kind"),
        (lambda: acme.semantic.add("note", confidence=7), "confidence"),
        (lambda: store.abatch([PutOp(("acme", "stack"), "x", {"value": 3})]), "value"),
        (lambda: store.abatch([PutOp(("acme", "stack"), "x", {"value": "v", "confidence": "abc"})]), "confidence"),
        (lambda: store.abatch([PutOp(("acme", "stack"), "x", {"value": "v", "confidence": 5})]), "confidence"),
        (lambda: store.abatch([PutOp(("acme",), "x", {"value": "v"})]), r"namespaces are"),
        # NUL bytes: refused with InvalidInputError naming what held one, never a raw driver DataError
        (lambda: acme.facts.put("acme:stack:backend", "Ho\x00no"), "NUL"),
        (lambda: acme.facts.put("acme:stack:other", "Hono", Provenance(rationale="edge\x00")), "NUL"),
        (lambda: acme.facts.put("acme:stack:other", "Hono", statement="we chose\x00 Hono"), "NUL"),
        (lambda: acme.semantic.add("a\x00b"), "NUL"),
        (lambda: acme.semantic.add("ok", metadata={"k": "v\x00"}), "NUL"),
        (lambda: acme.pending.add(Candidate(kind="fact", content="maybe \x00", confidence=0.3), Provenance()), "NUL"),
        (lambda: acme.pending.add(Candidate(kind="fact", content="maybe x", confidence=0.3),
                                  Provenance(thread_id="t\x00")), "NUL"),
        (lambda: store.abatch([PutOp(("acme", "stack"), "x", {"value": "v\x00"})]), "NUL"),
    ]
    for call, words in cases:
        with pytest.raises(ValueError, match=words):
            await call()
    with pytest.raises(InvalidInputError):
        await acme.semantic.add("a\x00b")
    assert await counts(fast_memory) == before and (await acme.facts.get("acme:stack:backend")).value == "Hono"
    record("bad_input.types_and_nul", bad_inputs=len(cases) + 1)


PROCESS_FIELDS = {"model_retries", "model_timeout_s", "rules_max_bytes", "rules_files"}


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"max_rounds": "many"}, "max_rounds"), ({"top_k": "x"}, "top_k"), ({"top_k": True}, "top_k"),
    ({"confidence_threshold": "high"}, "confidence_threshold"), ({"history_tokens": "x"}, "history_tokens"),
    ({"history_tokens": 0}, "history_tokens"), ({"model_retries": -1}, "model_retries"),
    ({"model_timeout_s": 0}, "model_timeout_s"), ({"pending_ttl_days": -3}, "pending_ttl_days"),
    ({"rules_max_bytes": -1}, "rules_max_bytes"), ({"rules_files": ["AGENTS.md", 3]}, "rules_files"),
    ({"mode": ["chat"]}, "mode"), ({"project": 7}, "project"), ({"user_id": ["a"]}, "user_id"),
])
async def test_context_from_a_json_api_rejects_wrong_types_naming_the_field(kwargs, field):
    """``langgraph dev`` hands the context over as JSON: a wrong type is a ConfigurationError naming the field."""
    with pytest.raises((ConfigurationError, InvalidKeyError), match=field):  # (a process setting: Settings's)
        (Settings if field in PROCESS_FIELDS else Context)(**kwargs)
    record("bad_input.context", bad_inputs=1)


async def test_context_coerces_json_strings_and_lists():
    ctx = Context(max_rounds="4", top_k="7", confidence_threshold="0.6")
    settings = Settings(rules_files=["AGENTS.md", "Z0.md"])
    assert (ctx.max_rounds, ctx.top_k, ctx.confidence_threshold, settings.rules_files) == (4, 7, 0.6,
                                                                                            ("AGENTS.md", "Z0.md"))
    assert Settings(rules_files="AGENTS.md, Z0.md").rules_files == ("AGENTS.md", "Z0.md")  # not its characters


@pytest.mark.parametrize("problem", ["huge", "binary", "not_utf8", "missing_root"])
async def test_unusable_rules_fail_the_turn_naming_the_file_and_write_nothing(fast_memory, fast_database,
                                                                              tmp_path: Path, problem):
    root = tmp_path / "project"
    root.mkdir()
    if problem == "huge":
        (root / "AGENTS.md").write_text("Always use tabs.\n" * 10_000)
    elif problem == "binary":
        (root / "AGENTS.md").write_bytes(b"rules\x00\x01\x02")
    elif problem == "not_utf8":
        (root / "AGENTS.md").write_bytes("règles".encode("latin-1"))
    else:
        root = tmp_path / "nowhere"
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(root), rules_max_bytes=4096)
    before = await counts(fast_memory)
    graph = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.checkpointer("acme"))
    with pytest.raises(RulesError, match="AGENTS.md" if problem != "missing_root" else "not a folder"):
        await graph.ainvoke({"messages": [HumanMessage("We decided to use Redis for the cache.")]}, cfg(),
                            context=ctx)
    assert await counts(fast_memory) == before  # the turn stopped before retrieval and extraction
    record("bad_input.rules", bad_inputs=1)


# --- issue 22, item 8: lone surrogates, deep metadata, bad thread ids -------------------------------------------
# A lone surrogate is what a byte that is not UTF-8 becomes when Python reads it with surrogateescape (command-line
# arguments, stdin in the C locale) or what a JSON "\ud800" escape decodes to. Each case below gave a raw
# UnicodeEncodeError, InvalidTextRepresentation, RecursionError or psycopg DataError before.
SURROGATE = "We decided to use \udcff Redis for the cache."


async def thread_rows(memory, thread_id: str) -> dict[str, list[str]]:
    """What the checkpoint tables hold for the thread (stored ids are the caller's thread id, project-qualified by
    the scoped checkpointer): the channel of every checkpoint blob and pending write, one entry per checkpoint."""
    async with memory.db.connection() as conn:
        found = {}
        for table, column in (("checkpoints", "'checkpoint'"), ("checkpoint_blobs", "channel"),
                              ("checkpoint_writes", "channel")):
            rows = await (await conn.execute(
                f"SELECT {column} AS c FROM {table} WHERE thread_id = %s OR thread_id LIKE %s",
                [thread_id, f"%:{thread_id}"])).fetchall()
            found[table] = [r["c"] for r in rows]
        return found


async def test_lone_surrogates_are_refused_by_every_write_api_before_anything_is_written(fast_memory):
    acme = fast_memory.scope("acme")
    store = fast_memory.store("acme")
    await acme.facts.put("acme:stack:backend", "Hono")
    before = await counts(fast_memory)
    cases = [
        lambda: acme.facts.put("acme:stack:backend", SURROGATE),
        lambda: acme.facts.put("acme:stack:other", "Hono", statement=SURROGATE),
        lambda: acme.facts.put("acme:stack:other", "Hono", Provenance(rationale=SURROGATE)),
        lambda: acme.facts.put("acme:stack:other", "Hono", Provenance(thread_id="t\udcff")),
        lambda: acme.semantic.add(SURROGATE),
        lambda: acme.semantic.add("ok", context=SURROGATE),
        lambda: acme.semantic.add("ok", metadata={"speaker": "\ud800"}),
        lambda: acme.semantic.add("ok", metadata={"\udcff": "key"}),
        lambda: acme.pending.add(Candidate(kind="fact", content=SURROGATE, confidence=0.3), Provenance()),
        lambda: store.abatch([PutOp(("acme", "stack"), "x", {"value": SURROGATE})]),
        lambda: store.abatch([PutOp(("acme", "stack"), "x", {"value": "v", "rationale": SURROGATE})]),
    ]
    for call in cases:
        with pytest.raises(InvalidInputError, match="lone surrogate"):
            await call()
    assert await counts(fast_memory) == before and (await acme.facts.get("acme:stack:backend")).value == "Hono"
    record("bad_input.surrogates", bad_inputs=len(cases))


@pytest.mark.parametrize("graph", ["chat", "code", "chat_operator"])
async def test_a_lone_surrogate_in_a_turn_is_refused_before_the_turn_is_checkpointed(fast_memory, fast_database,
                                                                                      tmp_path, graph):
    """Before: the chat graph checkpointed the user's message (as "?"), then failed on InvalidTextRepresentation
    with no reply and no extraction. Now the turn is refused first, and the thread goes on as if it never came.
    ``chat_operator``: the unscoped checkpointer ``langgraph dev`` runs the graphs with."""
    builder = code_builder if graph == "code" else chat_builder
    mem, ctx = fast_run(fast_memory, mode=graph.split("_")[0], rules_root=str(tmp_path))
    saver = mem.operator_checkpointer() if graph == "chat_operator" else mem.checkpointer("acme")
    compiled = builder.compile(store=mem.store("acme"), checkpointer=saver)
    config = cfg()
    thread_id = config["configurable"]["thread_id"]
    before = await counts(fast_memory)
    for message in (HumanMessage(SURROGATE), ("user", SURROGATE),
                    HumanMessage([{"type": "text", "text": SURROGATE}])):
        with pytest.raises(InvalidInputError, match=r"lone surrogate \(U\+DCFF"):
            await compiled.ainvoke({"messages": [message]}, config, context=ctx)
    assert await counts(fast_memory) == before  # no retrieval side effect, no extraction
    assert await saver.aget_tuple(config) is None  # the message was not checkpointed
    stored = await thread_rows(fast_memory, thread_id)
    # nothing of the turn is stored: only LangGraph's record that the run failed (the error, which names the
    # character, not the text) remains as a pending write
    assert stored["checkpoints"] == [] and stored["checkpoint_blobs"] == []
    assert set(stored["checkpoint_writes"]) <= {"__error__"}
    out = await compiled.ainvoke({"messages": [HumanMessage("We decided to use Redis for the cache.")]}, config,
                                 context=ctx)
    assert [m.content for m in out["messages"] if isinstance(m, HumanMessage)] == [
        "We decided to use Redis for the cache."]  # the thread holds only the good turn
    record(f"bad_input.surrogate_turn_{graph}", operations=1, bad_inputs=3)


async def test_the_extraction_graph_alone_refuses_a_lone_surrogate_and_takes_a_numeric_thread_id(fast_memory,
                                                                                               fast_database):
    """Before: the extraction graph run on its own (``memory.add``, ingest, a user's post-turn hook) passed a lone
    surrogate to the stores, and a failing model extractor's retry queue then raised InvalidTextRepresentation; a
    numeric thread id failed Provenance's validation. Now the node refuses the text first, writes and queues nothing,
    and takes a thread id given as a number as its text."""
    ctx = Context(project="acme")
    graph = extraction_builder.compile(store=fast_memory.store("acme"))
    before = await counts(fast_memory)
    with pytest.raises(InvalidInputError, match=r"lone surrogate"):
        await graph.ainvoke({"messages": [HumanMessage(f"We decided to use Redis {SURROGATE}")]},
                            {"configurable": {"thread_id": "t-surrogate"}}, context=ctx)
    assert await counts(fast_memory) == before
    out = await graph.ainvoke({"messages": [HumanMessage("We decided to use Valkey for the cache.")]},
                              {"configurable": {"thread_id": 42}}, context=ctx)
    assert [o.action for o in out["extraction"]] == ["fact_created"], out["extraction"]
    fact = await fast_memory.scope("acme").facts.get("acme:database:cache")
    assert fact.value == "Valkey" and fact.provenance.thread_id == "42"
    record("bad_input.extraction_graph", operations=1, bad_inputs=2)


def nested(depth: int) -> dict:
    value: dict = {"leaf": "x"}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


async def test_metadata_too_deep_or_too_large_is_refused_naming_the_limit(fast_memory, fast_database, tmp_path):
    """Before: metadata nested 2,000 deep raised RecursionError from the JSON encoder."""
    acme = fast_memory.scope("acme")
    before = await counts(fast_memory)
    cases = [
        ({"metadata": nested(2000)}, "nested more than 32 levels"),
        ({"metadata": nested(33)}, "nested more than 32 levels"),
        ({"metadata": {"blob": "x" * 70_000}}, "the limit is 65536"),
        ({"metadata": {"many": list(range(20_000))}}, "the limit is 65536"),
        ({"metadata": ["not", "a", "dict"]}, "must be a mapping"),
        ({"source_ids": [nested(2000)]}, "nested more than 32 levels"),
    ]
    for fields, words in cases:
        with pytest.raises(InvalidInputError, match=words):
            await acme.semantic.add("a note about the deploy", **fields)
    await acme.semantic.add("a note at the limits", metadata={**nested(31), "blob": "y" * 60_000})  # fits
    after = await counts(fast_memory)
    assert after == {**before, "z0_memories": before["z0_memories"] + 1}
    # a memory at the limits is recalled into a chat turn, and the checkpointed state holding it is accepted
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    graph = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.checkpointer("acme"))
    out = await graph.ainvoke({"messages": [HumanMessage("what was the note at the limits?")]}, cfg(), context=ctx)
    assert any("note at the limits" in h.content for h in out["memories"])
    record("bad_input.metadata", bad_inputs=len(cases), operations=2)


BAD_THREAD_IDS = ["a\x00b", "a\udcffb", "a\nb", "a\tb", "\x1b[31mred", "a\u2028b", "\u202eabc", "", "x" * 513]


@pytest.mark.parametrize("bad", BAD_THREAD_IDS, ids=[repr(b)[:16] for b in BAD_THREAD_IDS])
async def test_bad_thread_ids_are_refused_before_anything_is_stored(fast_memory, fast_database, tmp_path, bad):
    """Before: NUL gave a psycopg DataError from the checkpointer; control characters, line separators, bidi
    overrides were stored; a lone surrogate raised UnicodeEncodeError."""
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    saver = mem.checkpointer("acme")
    compiled = chat_builder.compile(store=mem.store("acme"), checkpointer=saver)
    before = await counts(fast_memory)
    config = {"configurable": {"thread_id": bad}}
    with pytest.raises(InvalidInputError, match="thread id"):
        await compiled.ainvoke({"messages": [HumanMessage("We decided to use Redis for the cache.")]}, config,
                               context=ctx)
    for call in (lambda: saver.aget_tuple(config), lambda: saver.adelete_thread(bad)):
        with pytest.raises(InvalidInputError, match="thread id"):
            await call()
    operator = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.operator_checkpointer())
    with pytest.raises(InvalidInputError, match="thread id"):  # the unscoped saver too (langgraph dev's)
        await operator.ainvoke({"messages": [HumanMessage("We decided to use Redis for the cache.")]}, config,
                               context=ctx)
    assert await counts(fast_memory) == before
    record("bad_input.thread_id", bad_inputs=4)


async def test_good_thread_ids_still_work(fast_memory, fast_database, tmp_path):
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    compiled = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.checkpointer("acme"))
    for thread_id in ("t-1", "会话-7", "user@example.com/2026-12-02 10:00", "🦀 crab", "x" * 512):
        out = await compiled.ainvoke({"messages": [HumanMessage("hello there")]},
                                     {"configurable": {"thread_id": thread_id}}, context=ctx)
        assert isinstance(out["messages"][-1], AIMessage)


REPO = Path(__file__).resolve().parents[1]


def run_cli(url: str, *args: str, stdin: bytes, **env: str) -> subprocess.CompletedProcess:
    """The command line as a user runs it: a process of its own, bytes on stdin (C.UTF-8: Python reads bytes that
    are not UTF-8 as lone surrogates, like arguments)."""
    environ = {**os.environ, "DATABASE_URL": url, "Z0_EMBEDDING_MODEL": "hash", "COLUMNS": "200",
               "LC_ALL": "C.UTF-8", **env}
    return subprocess.run([sys.executable, "-c", "from z0_memory.cli import main; main()", "--project", "acme", *args],
                          input=stdin, capture_output=True, env=environ, cwd=REPO, timeout=300)


def one_error_line(result: subprocess.CompletedProcess, words: str) -> str:
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, err[-2000:])
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], err[-2000:]
    return lines[0]


async def test_cli_bad_input_is_one_line_exit_2_and_stores_nothing(fast_memory, fast_database):
    """Before: a chat line with a byte that is not UTF-8 ended in a psycopg InvalidTextRepresentation traceback
    after the message was checkpointed; a thread id with an escape sequence was accepted and echoed."""
    before = await counts(fast_memory)
    thread_id = f"cli-bad-{random.randrange(10**9)}"
    result = run_cli(fast_database, "chat", "--thread", thread_id, stdin=b"We decided to use \xff Redis.\n")
    one_error_line(result, "lone surrogate (U+DCFF")
    assert await fast_memory.checkpointer("acme").aget_tuple({"configurable": {"thread_id": thread_id}}) is None
    result = run_cli(fast_database, "chat", stdin=b"We decided to use \xff Redis.\n",
                     PYTHONIOENCODING="utf-8:strict")  # stdin read strictly: the decoder refuses the byte
    one_error_line(result, "not UTF-8 text (byte 0xff")
    result = run_cli(fast_database, "chat", "--thread", "a\x1b[2Jb", stdin=b"hello\n")
    one_error_line(result, "thread id must not contain a control character (U+001B")
    assert b"\x1b" not in result.stdout and b"you>" not in result.stdout  # refused before the session began
    assert await counts(fast_memory) == before
    record("bad_input.cli", bad_inputs=3)
