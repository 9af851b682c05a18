"""A clean environment for the tests of settings that read it (import the fixture into a test module)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from an environment without any setting z0-memory reads."""
    for name in list(os.environ):
        if name.startswith("Z0_"):
            monkeypatch.delenv(name)
    for name in ("DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)


def assert_precedence(monkeypatch: pytest.MonkeyPatch, config: type, field: str, env: str, env_value: str,
                      explicit: object, default: object, parsed_env: object) -> None:
    """``config.from_env``: an argument beats the environment, which beats the field's default."""
    assert getattr(config.from_env(), field) == default
    monkeypatch.setenv(env, env_value)
    assert getattr(config.from_env(), field) == parsed_env
    assert getattr(config.from_env(**{field: explicit}), field) == explicit
