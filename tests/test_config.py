"""The run Context (z0_memory.config): defaults on the fields, environment fallbacks through from_env (and at run
time), validation, and a context schema that holds run settings only (process settings: tests/test_settings.py)."""

from __future__ import annotations

from dataclasses import fields

import pytest
from env_support import assert_precedence, clean_env  # noqa: F401  (clean_env is autouse: no Z0_*, DATABASE_URL or OPENAI_* set)

from z0_memory.config import DEFAULT_ROUNDS, Context
from z0_memory.errors import ConfigurationError, InvalidKeyError
from z0_memory.settings import Settings


def test_defaults_without_any_environment() -> None:
    ctx = Context()
    assert ctx.project is None  # no silent default: runs without one fail (tests/test_identity.py)
    assert ctx.user_id == ""
    assert ctx.mode == "chat"
    assert ctx.max_rounds == 3
    assert ctx.top_k == 10
    assert ctx.confidence_threshold == 0.7
    assert ctx.pending_ttl_days == 14.0
    assert ctx.history_tokens == 1500
    assert (ctx.agent_model, ctx.judge_model, ctx.extractor_model) == (None, None, None)  # the process's defaults
    assert Context.from_env() == ctx


@pytest.mark.parametrize(
    ("field", "env", "env_value", "explicit", "default", "parsed_env"),
    [
        ("top_k", "Z0_TOP_K", "7", 3, 10, 7),
        ("project", "Z0_PROJECT", "from-env", "from-arg", None, "from-env"),
        ("confidence_threshold", "Z0_CONFIDENCE_THRESHOLD", "0.9", 0.5, 0.7, 0.9),
        ("pending_ttl_days", "Z0_PENDING_TTL_DAYS", "2.5", 1.0, 14.0, 2.5),
        ("max_rounds", "Z0_MAX_ROUNDS", "8", 2, 3, 8),
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
    assert_precedence(monkeypatch, Context, field, env, env_value, explicit, default, parsed_env)
    assert getattr(Context(), field) == default  # the plain constructor never reads the environment
    assert getattr(Context().with_env(), field) == parsed_env  # a run fills what its context did not name
    assert getattr(Context(**{field: explicit}).with_env(), field) == explicit


def test_model_environment_variables_are_the_process_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Z0_JUDGE_MODEL", "compatible/j")
    assert Context.from_env().judge_model is None and Context().with_env().judge_model is None
    assert Settings.from_env().judge_model == "compatible/j"
    assert Settings.from_env().model_for("judge", Context().with_env()) == "compatible/j"
    explicit = Settings.from_env(judge_model="offline")  # an explicit process setting is not overridden by a run
    assert explicit.model_for("judge", Context().with_env()) == "offline"
    assert explicit.model_for("judge", Context(judge_model="compatible/x")) == "compatible/x"  # the run's own


def test_a_process_setting_is_not_a_run_setting() -> None:
    with pytest.raises(ConfigurationError, match="database_url is a process setting, not a run's"):
        Context.from_env(project="acme", database_url="postgresql://x/y")
    with pytest.raises(TypeError):
        Context(openai_api_key="sk-x")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("Z0_MAX_ROUNDS", "abc"),
        ("Z0_TOP_K", "1.5"),
        ("Z0_CONFIDENCE_THRESHOLD", "high"),
        ("Z0_PENDING_TTL_DAYS", "two weeks"),
        ("Z0_HISTORY_TOKENS", "many"),
    ],
)
def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, env: str, value: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigurationError, match=rf"^{env}={value!r} is not a valid"):
        Context.from_env()


def test_mode_defaults_rounds() -> None:
    assert DEFAULT_ROUNDS == {"chat": 3, "code": 5}
    assert Context(mode="chat").max_rounds == 3
    assert Context(mode="code").max_rounds == 5
    assert Context(mode="code", max_rounds=7).max_rounds == 7


def test_mode_from_environment_sets_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Z0_MODE", "code")
    assert (Context.from_env().mode, Context.from_env().max_rounds) == ("code", 5)
    assert Context.from_env(mode="chat").max_rounds == 3


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
        Context.from_env()


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
        Context.from_env()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_rounds": 0}, "max_rounds must be between 1 and 20"),
        ({"max_rounds": 21}, "max_rounds must be between 1 and 20"),
        ({"top_k": 0}, "top_k must be at least 1"),
        ({"history_tokens": 0}, "history_tokens must be at least 1"),
        ({"pending_ttl_days": 0}, "pending_ttl_days must be greater than 0"),
        ({"top_k": "many"}, "top_k must be a number"),
    ],
)
def test_other_invalid_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Context(**kwargs)


@pytest.mark.parametrize("project", ["my project", "a:b", "", "x'; --"])
def test_invalid_project_is_rejected(project: str) -> None:
    with pytest.raises(InvalidKeyError):
        Context(project=project)


def test_replace_keeps_what_was_named_and_the_environment_fills_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Context(project="acme", top_k=4).replace(user_id="alice")
    assert ctx.named() == {"project": "acme", "top_k": 4, "user_id": "alice"}
    monkeypatch.setenv("Z0_HISTORY_TOKENS", "900")
    monkeypatch.setenv("Z0_TOP_K", "7")
    run = ctx.with_env()
    assert (run.project, run.user_id, run.top_k, run.history_tokens) == ("acme", "alice", 4, 900)


def test_json_context_values_are_coerced() -> None:
    ctx = Context(project="acme", max_rounds="4", top_k="7", confidence_threshold="0.6", user_id=None)
    assert (ctx.max_rounds, ctx.top_k, ctx.confidence_threshold, ctx.user_id) == (4, 7, 0.6, "")


PROCESS_WORDS = ("url", "key", "dir", "path", "root", "secret", "token", "password", "database", "timeout",
                 "retries", "redact", "embedding", "rules", "pooler", "permission")


def test_the_graphs_context_schema_holds_run_settings_only() -> None:
    """What LangGraph Studio shows per run: no URL, key, path or secret, no process setting at all."""
    from z0_memory.graphs import chat, code, extraction, retrieval

    run_fields = {f.name for f in fields(Context)}
    assert run_fields == {"project", "user_id", "mode", "max_rounds", "top_k", "history_tokens",
                          "confidence_threshold", "pending_ttl_days", "agent_model", "judge_model",
                          "extractor_model", "rerank"}
    assert not run_fields & ({f.name for f in fields(Settings)} - {"agent_model", "judge_model", "extractor_model"})
    for module in (chat, code, retrieval, extraction):
        graph = module.graph
        assert graph.context_schema is Context, module.__name__
        schema = graph.get_context_jsonschema()
        names = set(schema["properties"])
        assert names == run_fields, (module.__name__, names)
        assert not [n for n in names if set(n.split("_")) & set(PROCESS_WORDS)], names
