"""Secrets said in a turn are redacted before anything is stored and before any model sees them.

API keys, tokens and passwords are said in chat turns (offline extractor), handed back by an LLM extractor that
copies them into content, value, key and rationale, and left in a turn whose extraction fails (the retry queue).
Then every z0 table is read directly (z0_facts with its rationale/statement/provenance columns, z0_memories with
its metadata, z0_pending with its candidate json, z0_extraction_queue with its messages and error), and so is every
row of LangGraph's checkpoint tables (the checkpoints' JSON, the channel blobs and the pending writes, as bytes),
and no secret string appears anywhere. What the models were shown (the extractor's, the judge's and the responder's
prompts, captured by the scripted fakes) and the texts sent to the embedding model hold none either.

The checkpointer's copy of the conversation is redacted too (``redact_checkpoints``, on by default): a thread
continues with ``[REDACTED]`` where a key was, and ``search_session`` finds it as such. Turned off, the thread is
kept as said (the user's own thread), and only long-term memory is redacted; the last tests show both.
"""

from __future__ import annotations

import json
import os

import pytest
from fakes import ScriptedChatModel
from langchain_core.messages import HumanMessage
from reliability_support import fast_run, fast_setup, fast_database, fast_memory, fast_owner, record  # noqa: F401

from z0_memory.graphs.chat import builder as chat_builder
from z0_memory.graphs.extraction import builder as extraction_builder
from z0_memory.memory import Z0Memory
from z0_memory.nodes.extraction import ExtractionResult
from z0_memory.providers import HashEmbeddings
from z0_memory.schemas import Candidate, Provenance
from z0_memory.writes import gate_and_write

pytestmark = pytest.mark.asyncio(loop_scope="session")

SECRETS = {
    "openai": "sk-proj-Q8f3kLm2Zx9Tt4Rr7Yy1Uu6Ii0Oo5Pp",
    "github": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-abcdefghijkl",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "password": "hunter2-Very-Secret",
    "url_password": "s3cr3tPassw0rd",
    "chinese_password": "密钥值Abc12345",
}
TURNS = [
    f"We decided the CI uses the OpenAI key {SECRETS['openai']} for the eval job.",
    f"Remember: the GitHub token is {SECRETS['github']} and we use GitHub Actions for CI.",
    f"We chose AWS; the access key id is {SECRETS['aws']}.",
    f"The Slack bot token: {SECRETS['slack']} — we decided to post deploys to #ops.",
    f"Use Authorization: Bearer {SECRETS['jwt']} for the staging API.",
    f"The admin password is {SECRETS['password']}, we decided to rotate it monthly.",
    f"We decided to use Postgres at postgresql://app:{SECRETS['url_password']}@db.internal:5432/app",
    f"我们决定用 Redis 做缓存，密码是 {SECRETS['chinese_password']}",
]


async def dump_everything(memory) -> str:
    async with memory.db.connection() as conn:
        tables = {}
        for table in ("z0_facts", "z0_memories", "z0_pending", "z0_extraction_queue"):
            rows = await (await conn.execute(f"SELECT * FROM {table}")).fetchall()
            tables[table] = [{k: v for k, v in r.items() if k != "embedding"} for r in rows]
    return json.dumps(tables, default=str, ensure_ascii=False)


def leaks(dumped: str) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret in dumped]


async def test_secrets_in_turns_never_reach_any_stored_column(fast_memory, fast_database, tmp_path):
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    graph = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.checkpointer("acme"))
    cfg = {"configurable": {"thread_id": f"secrets-{os.urandom(6).hex()}"}}
    for turn in TURNS:  # the offline extractor
        await graph.ainvoke({"messages": [HumanMessage(turn)]}, cfg, context=ctx)

    copying = ExtractionResult(candidates=[  # an LLM extractor that copies every secret everywhere it can
        Candidate(kind="decision", key="acme:tooling:ci_key", value=SECRETS["openai"], confidence=0.95,
                  content=f"CI uses {SECRETS['openai']}", rationale=f"token {SECRETS['github']}"),
        Candidate(kind="fact", content=f"The admin password is {SECRETS['password']} and AWS key {SECRETS['aws']}",
                  confidence=0.9, rationale=f"said with Bearer {SECRETS['jwt']}"),
        Candidate(kind="decision", key="acme:database:primary", value="Postgres", confidence=0.9,
                  content=f"Postgres at postgresql://app:{SECRETS['url_password']}@db.internal/app",
                  rationale=f"密码是 {SECRETS['chinese_password']}"),
        Candidate(kind="preference", content=f"maybe post to Slack with {SECRETS['slack']}", confidence=0.3,
                  hedged=True, rationale=f"password: {SECRETS['password']}"),
    ])
    failing = ScriptedChatModel([RuntimeError(f"HTTP 401: invalid key {SECRETS['openai']}")])
    for extractor, queued in ((ScriptedChatModel([copying]), False), (failing, True)):
        msettings, mctx = fast_setup(fast_database, mode="chat", rules_root=str(tmp_path), model_retries=0)
        async with Z0Memory(msettings, chat_models={"extractor": extractor}) as memory:
            out = await extraction_builder.compile(store=memory.store("acme")).ainvoke(
                {"messages": [HumanMessage(" ".join(TURNS))]}, context=mctx)
        assert any(o.action == "queued_for_retry" for o in out["extraction"]) == queued

    dumped = await dump_everything(fast_memory)
    assert leaks(dumped) == []
    assert dumped.count("[REDACTED]") >= len(SECRETS)  # the rest of each memory was kept
    assert "Postgres" in dumped and "Redis" in dumped
    record("secrets.redaction", operations=len(TURNS) + 2, bad_inputs=len(SECRETS), lost=0)


# --- the shapes an outside probe found missed, said in chat in both languages ---------------------------------------
PGP_BODY = "lQOYBGR0nmQBCADJ8m2p4QzW9sXk3LrT7uVb1yHcE5aNfG6jKq0oPd2iS8eR4tY7wU9xZ3vB1nM5lK"
MISSED = {
    "cjk_openai": "sk-proj-Zq8f3kLm2Zx9Tt4Rr7Yy1Uu6Ii0Oo5Pp",
    "cjk_github": "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2",
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "npm": "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "google_oauth": "ya29.a0AfH6SMBx3kQ_exampleTOKENvalue1234567890abcdefg",
    "azure": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJDRA1234567890abcdEFGH+/w==",
    "url_password": "pa/ss@w0rd!x",
    "json_password": "correct horse battery staple",
    "pgp": PGP_BODY,
}
MISSED_TURNS = [
    f"我们决定用 OpenAI 做评测，请用这个{MISSED['cjk_openai']}调用接口。",
    f"我们决定用 GitHub Actions 做 CI，令牌{MISSED['cjk_github']}放在仓库设置里。",
    f"We decided to host the models on Hugging Face; the deploy uses {MISSED['huggingface']} for pulls.",
    f"We publish the SDK to npm with {MISSED['npm']} from CI.",
    f"我们决定用 Google Cloud，访问用 {MISSED['google_oauth']} 即可。",
    (f"We chose Azure Blob storage: DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={MISSED['azure']};"
     "EndpointSuffix=core.windows.net"),
    f"We decided to use Postgres at postgresql://app:{MISSED['url_password']}@db.internal:5432/app for staging.",
    f'我们决定用这个配置 {{"user": "app", "password": "{MISSED["json_password"]}"}} 连接数据库。',
    (f"We decided to sign releases with PGP.\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{PGP_BODY}\n=Ab12\n"
     "-----END PGP PRIVATE KEY BLOCK-----"),
]


async def dump_all_tables(memory) -> str:
    """Every row of every z0 table and of LangGraph's checkpoint tables (bytea blobs decoded as UTF-8)."""
    async with memory.db.connection() as conn:
        names = [r["table_name"] for r in await (await conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND (table_name LIKE 'z0\\_%' OR table_name LIKE 'checkpoint%') ORDER BY 1")).fetchall()]
        tables = {}
        for table in names:
            rows = await (await conn.execute(f"SELECT * FROM {table}")).fetchall()
            tables[table] = [{k: v.decode("utf-8", "replace") if isinstance(v, bytes | memoryview) and k != "embedding"
                              else v for k, v in r.items() if k != "embedding"} for r in rows]
    assert {"z0_facts", "z0_memories", "checkpoints", "checkpoint_blobs", "checkpoint_writes"} <= set(tables)
    return json.dumps(tables, default=str, ensure_ascii=False)


def missed_leaks(text: str) -> list[str]:
    return [name for name, secret in {**SECRETS, **MISSED}.items() if secret in text]


class RecordingEmbeddings(HashEmbeddings):
    """The test's hash embeddings, recording every text sent to the embedding model."""

    def __init__(self) -> None:
        super().__init__(256)
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.texts.append(text)
        return super().embed_query(text)


def copying_extractor(call) -> ExtractionResult:
    """An LLM extractor that puts secrets in every field (key included). It is shown none (the prompt is redacted),
    so these stand for values a model was handed elsewhere or guessed. On the turn that said the JSON password it
    writes that password back bare: no pattern finds it once "password" is gone, only the turn's literal secrets."""
    leak = MISSED["json_password"] if '"password": "[REDACTED]"' in call.text else SECRETS["openai"]
    return ExtractionResult(candidates=[
        Candidate(kind="decision", key=f"acme:tooling:{SECRETS['github']}", value="GitHub Actions", confidence=0.95,
                  content=f"CI runs on GitHub Actions with {leak}", rationale=f"token {SECRETS['github']}"),
        Candidate(kind="fact", content=f"The staging login is {leak}", confidence=0.9, rationale=f"said {leak}"),
    ])


async def test_extractor_prompt_holds_none_of_the_missed_shapes(fast_memory, fast_database, tmp_path):
    """Failing before: the turn shown to an LLM extractor held every shape the old patterns missed."""
    extractor = ScriptedChatModel([ExtractionResult()])
    msettings, mctx = fast_setup(fast_database, mode="chat", rules_root=str(tmp_path))
    async with Z0Memory(msettings, chat_models={"extractor": extractor}) as memory:
        graph = extraction_builder.compile(store=memory.store("acme"))
        for turn in MISSED_TURNS:
            await graph.ainvoke({"messages": [HumanMessage(turn)]}, context=mctx)
    assert len(extractor.calls) == len(MISSED_TURNS)
    prompts = "\n".join(extractor.prompts())
    assert missed_leaks(prompts) == []
    assert prompts.count("[REDACTED]") >= len(MISSED_TURNS)
    assert "请用这个[REDACTED]调用接口" in prompts and "Hugging Face" in prompts  # the rest of each turn is shown
    record("secrets.missed_shapes_prompt", operations=len(MISSED_TURNS), bad_inputs=len(MISSED), lost=0)


async def test_a_token_in_a_candidate_key_is_scrubbed(fast_memory, fast_database, tmp_path):
    """Failing before: an extractor's key ``acme:tooling:ghp_...`` became a fact entity with the token in it."""
    token = SECRETS["github"]
    extractor = ScriptedChatModel([ExtractionResult(candidates=[
        Candidate(kind="decision", key=f"acme:tooling:{token}", value="GitHub Actions", confidence=0.95,
                  content="CI runs on GitHub Actions"),
        Candidate(kind="decision", key="acme:tooling:registry", value=f"npm with {MISSED['npm']}", confidence=0.95,
                  content="We publish to npm"),
    ])])
    msettings, mctx = fast_setup(fast_database, mode="chat", rules_root=str(tmp_path))
    async with Z0Memory(msettings, chat_models={"extractor": extractor}) as memory:
        out = await extraction_builder.compile(store=memory.store("acme")).ainvoke(
            {"messages": [HumanMessage("We use GitHub Actions for CI and publish to npm.")]}, context=mctx)
        facts = await memory.scope("acme").facts.list()
    dumped = await dump_all_tables(fast_memory)
    assert token not in dumped and MISSED["npm"] not in dumped
    assert all(token not in str(f.key) for f in facts)
    assert "GitHub Actions" in await dump_everything(fast_memory)  # kept (long-term memory), without the token as key
    assert [o.action for o in out["extraction"]][1] == "dropped"  # a fact whose value is a secret is not stored

    # the write gate itself, whoever calls it: a key holding a token is never stored as a key
    pm = fast_memory.scope("acme")
    outcome = await gate_and_write(pm, Candidate(kind="decision", key=f"acme:tooling:{MISSED['cjk_github']}",
                                                 value="Buildkite", content="CI moved to Buildkite", confidence=0.9),
                                   Provenance(), threshold=0.7)
    assert outcome.action == "memory_added" and MISSED["cjk_github"] not in await dump_all_tables(fast_memory)


async def test_a_chat_turn_with_secrets_reaches_no_model_no_embedding_and_no_table(fast_memory, fast_database,
                                                                                   tmp_path):
    """The chat graph end to end with scripted responder, judge and extractor and recording embeddings.

    Failing before: the responder and the judge were shown the raw turn, the retrieval query was embedded as said,
    the extractor's key was stored unscrubbed, and the checkpoint tables held every message verbatim.
    """
    log: list = []
    agent = ScriptedChatModel(["Noted."], log=log)
    judge = ScriptedChatModel([{"sufficient": True, "reason": "enough"}], log=log)
    extractor = ScriptedChatModel([copying_extractor], log=log)
    embeddings = RecordingEmbeddings()
    settings, ctx = fast_setup(fast_database, mode="chat", rules_root=str(tmp_path))
    turns = [*MISSED_TURNS, *TURNS]
    async with Z0Memory(settings, chat_models={"agent": agent, "judge": judge, "extractor": extractor},
                        embeddings=embeddings, embedding_name="hash") as memory:
        await memory.scope("acme").facts.put("acme:stack:ci", "GitHub Actions")  # something for the judge to judge
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        cfg = {"configurable": {"thread_id": f"secrets-{os.urandom(6).hex()}"}}
        for turn in turns:
            await graph.ainvoke({"messages": [HumanMessage(turn)]}, cfg, context=ctx)
        state = await graph.aget_state(cfg)
    assert judge.calls and extractor.calls and agent.calls
    assert any('"password": "[REDACTED]"' in c.text for c in extractor.calls)  # the bare-password case ran
    dumped = await dump_all_tables(fast_memory)
    shown = {*missed_leaks("\n".join(c.text for c in log)), *missed_leaks("\n".join(embeddings.texts)),
             *missed_leaks(dumped)}
    record("secrets.chat_turn", operations=len(turns), bad_inputs=len(SECRETS) + len(MISSED), lost=0,
           secrets_found=len(SECRETS) + len(MISSED) - len(shown), secrets_missed=len(shown))
    assert missed_leaks("\n".join(c.text for c in log)) == [], "a model was shown a secret"
    assert embeddings.texts and missed_leaks("\n".join(embeddings.texts)) == [], "a secret was embedded"
    assert missed_leaks(dumped) == [], "a secret is stored"
    kept = await dump_everything(fast_memory)  # long-term memory only (the checkpoint tables hold the turns)
    assert "CI runs on GitHub Actions with [REDACTED]" in kept, kept  # the copying extractor's memory, scrubbed
    assert "请用这个[REDACTED]调用接口" in json.dumps(
        [m.content for m in state.values["messages"]], ensure_ascii=False)  # the thread continues, redacted


async def test_the_offline_extractor_drops_the_secret_statement_but_keeps_the_rest(fast_memory, fast_database,
                                                                                   tmp_path):
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    graph = extraction_builder.compile(store=mem.store("acme"))
    out = await graph.ainvoke({"messages": [HumanMessage(
        f"We decided to use GitHub Actions for CI, and the deploy token is {SECRETS['github']}. "
        f"我们决定用 Redis 做缓存，密码是{MISSED['json_password'].replace(' ', '')}。")]}, context=ctx)
    dumped = await dump_all_tables(fast_memory)
    assert missed_leaks(dumped) == [] and MISSED["json_password"].replace(" ", "") not in dumped
    kept = await dump_everything(fast_memory)
    assert "GitHub Actions" in kept and "Redis" in kept, out  # the rest of each sentence was extracted


async def test_checkpoints_are_redacted_by_default(fast_memory, fast_database, tmp_path):
    """Failing before: the session layer kept every raw message, and the README said no secret was stored."""
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    assert mem.settings.redact_checkpoints is True
    graph = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.checkpointer("acme"))
    cfg = {"configurable": {"thread_id": f"secrets-{os.urandom(6).hex()}"}}
    await graph.ainvoke({"messages": [HumanMessage(TURNS[5])]}, cfg, context=ctx)
    await graph.ainvoke({"messages": [HumanMessage(MISSED_TURNS[0])]}, cfg, context=ctx)
    state = await graph.aget_state(cfg)
    said = [m.content for m in state.values["messages"]]
    assert said[0] == TURNS[5].replace(SECRETS["password"], "[REDACTED]")  # the thread, redacted
    assert state.values["question"] == MISSED_TURNS[0].replace(MISSED["cjk_openai"], "[REDACTED]")
    assert missed_leaks(await dump_all_tables(fast_memory)) == []


async def test_the_operator_checkpointer_redacts_too(fast_memory, fast_database, tmp_path):
    """``langgraph dev`` gets the unscoped checkpointer (``operator_checkpointer``): the same redaction."""
    mem, ctx = fast_run(fast_memory, mode="chat", rules_root=str(tmp_path))
    graph = chat_builder.compile(store=mem.store("acme"), checkpointer=mem.operator_checkpointer())
    cfg = {"configurable": {"thread_id": f"secrets-op-{os.urandom(6).hex()}"}}
    await graph.ainvoke({"messages": [HumanMessage(MISSED_TURNS[6])]}, cfg, context=ctx)
    state = await graph.aget_state(cfg)
    assert "postgresql://app:[REDACTED]@db.internal:5432/app" in state.values["messages"][0].content
    assert missed_leaks(await dump_all_tables(fast_memory)) == []


async def test_redact_checkpoints_off_keeps_the_users_own_thread_as_said(fast_database, tmp_path):
    """The documented opt-out: the session layer is the user's own thread, kept verbatim; long-term memory is not."""
    settings, ctx = fast_setup(fast_database, mode="chat", rules_root=str(tmp_path), redact_checkpoints=False)
    async with Z0Memory(settings) as memory:
        graph = chat_builder.compile(store=memory.store("acme"), checkpointer=memory.checkpointer("acme"))
        cfg = {"configurable": {"thread_id": f"secrets-{os.urandom(6).hex()}"}}
        await graph.ainvoke({"messages": [HumanMessage(TURNS[5])]}, cfg, context=ctx)
        state = await graph.aget_state(cfg)
        assert SECRETS["password"] in state.values["messages"][0].content  # the thread, as the user said it
        assert leaks(await dump_everything(memory)) == []  # long-term memory: redacted
        await memory.checkpointer("acme").adelete_thread(cfg["configurable"]["thread_id"])


async def test_secret_shapes_found_and_missed():
    """Every shape of ``test_redaction`` in English and Chinese, and the chat turns above: the bench's figures."""
    from test_redaction import CONTEXTS, SHAPES

    from z0_memory.redaction import redact_secrets

    cases = [(f"{shape}/{language}", secret, sentence.format(x=written.format(s=secret)))
             for shape, (secret, written) in SHAPES.items() for language, (sentence, _) in CONTEXTS.items()]
    cases += [(f"turn/{name}", secret, turn) for (name, secret), turn in zip(MISSED.items(), MISSED_TURNS, strict=True)]
    cases += [(f"turn/{name}", secret, turn) for (name, secret), turn in zip(SECRETS.items(), TURNS, strict=True)]
    missed = [name for name, secret, text in cases if secret in redact_secrets(text)]
    record("secrets.shapes", operations=len(cases), secrets_found=len(cases) - len(missed),
           secrets_missed=len(missed))
    assert missed == []


@pytest.mark.parametrize("prose", ["the token budget is 3000", "our secret sauce is caching", "keep the api key rotation weekly",
                                   "the password policy needs twelve characters"])
async def test_prose_about_secrets_is_not_redacted(prose):
    """Words like token or secret followed by ordinary prose are not credentials (only assigned values are)."""
    from z0_memory.redaction import redact_secrets

    assert redact_secrets(prose) == prose
