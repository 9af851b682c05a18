"""A run's settings: the graphs' runtime context (LangGraph ``context_schema``, the form Studio shows per run).

Only what a run may choose lives here: the project and user, the mode, the loop's rounds and depth, the history
budget, the write gate's thresholds, and which model plays each role. The process's settings (database, keys, base
URL, embedding model, rules, timeouts) are :class:`~z0_memory.settings.Settings`, given to ``Z0Memory``.

Every default is written on its field. ``Context(...)`` reads no environment; ``Context.from_env(**overrides)``
resolves each field as: the explicit argument, then ``Z0_<FIELD>``, then the default (the model fields
read no environment: ``Z0_AGENT_MODEL`` etc. are the process's defaults, ``Settings``). A graph run does the same
(``nodes.common.context_of``): the fields its context names, then the operator's ``Z0_*``, then the defaults, so
``Z0_PROJECT`` or ``Z0_TOP_K`` apply to API runs as they do to the CLI. ``project`` has no default: a graph, tool or
middleware run without one fails naming ``context=Context(project=...)`` (:data:`NO_PROJECT`); the CLI and the demo
pass their own explicit defaults. Model fields (``None``: the process's default for the role,
``Settings.model_for``) take ``"offline"``, ``"openai/<model>"`` or ``"compatible/<model>"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from z0_memory.errors import ConfigurationError
from z0_memory.schemas import validate_segment
from z0_memory.settings import DEFAULT_RULES_FILES, coerce_fields, from_env

Mode = Literal["chat", "code"]
DEFAULT_ROUNDS: dict[str, int] = {"code": 5, "chat": 3}

# Z0_AGENT_MODEL etc. are the process's defaults (Settings): a run's model field is only what the run names, so an
# explicit Settings(judge_model=...) is never overridden through the environment by every run.
MODEL_FIELDS = frozenset({"agent_model", "judge_model", "extractor_model"})

NO_PROJECT = (
    "no project in the run's context: pass context=Context(project=\"...\") to invoke/ainvoke (through the API: "
    "context={\"project\": \"...\"}), or set Z0_PROJECT; z0-memory never picks a project for you"
)

__all__ = ["DEFAULT_ROUNDS", "DEFAULT_RULES_FILES", "NO_PROJECT", "Context", "Mode"]


@dataclass(kw_only=True)
class Context:
    """Per-run configuration of every z0-memory graph (LangGraph ``context_schema``)."""

    project: str | None = field(
        default=None, metadata={"description": "Project scope of all memory reads/writes (required: no default)."})
    user_id: str = field(
        default="", metadata={"description": "Optional user scope inside the project ('' = shared project memory)."})
    mode: str = field(default="chat", metadata={"description": "'chat' (memory injected) or 'code' (tools)."})
    max_rounds: int | None = field(
        default=None, metadata={"description": "Retrieval loop cap (1 to 20); None: 5 in code mode, 3 in chat mode."})
    top_k: int = field(default=10, metadata={"description": "Hits kept per retrieval round."})
    history_tokens: int = field(
        default=1500, metadata={"description": "Chat mode: token budget of the thread history kept in the prompt."})
    confidence_threshold: float = field(
        default=0.7, metadata={"description": "Candidates at or above persist; below wait as pending."})
    pending_ttl_days: float = field(
        default=14.0, metadata={"description": "Days a pending candidate waits for confirmation before expiring."})
    agent_model: str | None = field(
        default=None, metadata={"description": "Model answering the user (None: the process's default)."})
    judge_model: str | None = field(
        default=None, metadata={"description": "Model judging retrieval sufficiency (None: the process's default)."})
    extractor_model: str | None = field(
        default=None, metadata={"description": "Model extracting memories (None: the process's default)."})
    rerank: bool = field(
        default=False,
        metadata={"description": "Rerank the retrieval loop's final evidence once per question with the offline "
                                 "lexical reranker (z0_memory.offline.rerank; Z0_RERANK)."})

    def __new__(cls, **named: Any) -> Context:
        # The fields a caller named: a run fills the others from Z0_* (``with_env``). LangGraph builds an API run's
        # context as Context(**the_json), so the JSON's keys are what that run named.
        self = super().__new__(cls)
        self._named = frozenset(k for k, v in named.items() if v is not None)
        return self

    @classmethod
    def from_env(cls, **overrides: Any) -> Context:
        """A context from the explicit arguments, then ``Z0_<FIELD>``, then the defaults.

        A process setting (``database_url``, ``openai_api_key``, ``rules_root``...) is refused with a pointer to
        ``Settings``: a run cannot choose the database or the key.
        """
        from z0_memory.settings import Settings

        process = sorted(set(overrides) & {f.name for f in fields(Settings)} - {f.name for f in fields(cls)})
        if process:
            raise ConfigurationError(
                f"{', '.join(process)} {'is a process setting' if len(process) == 1 else 'are process settings'}, "
                "not a run's: set it in the environment or in Settings(...) given to Z0Memory")
        return from_env(cls, overrides, not_from_env=MODEL_FIELDS)

    def with_env(self) -> Context:
        """This context with the fields its caller did not name taken from ``Z0_*`` (then the defaults)."""
        return Context.from_env(**self.named())

    def named(self) -> dict[str, Any]:
        """The fields the caller gave or changed since (``Context(project="x")``: ``{"project": "x"}``)."""
        given = getattr(self, "_named", None)
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if given is None or f.name in given:
                out[f.name] = value
            elif value != (DEFAULT_ROUNDS.get(self.mode) if f.name == "max_rounds" else f.default):
                out[f.name] = value
        return out

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:
        """Values from a JSON context (``langgraph dev``'s API) or code may be strings or wrong types: fix or refuse."""
        coerce_fields(self)
        if self.project is not None:  # no silent default: a run without one fails where a project is needed
            validate_segment(self.project, "project")
        if self.user_id is None:
            self.user_id = ""
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
        if self.history_tokens < 1:
            raise ConfigurationError(f"history_tokens must be at least 1, got {self.history_tokens}")
        if not self.pending_ttl_days > 0:
            raise ConfigurationError(f"pending_ttl_days must be greater than 0, got {self.pending_ttl_days}")
        if not isinstance(self.rerank, bool):
            raise ConfigurationError(f"rerank must be true or false, got {self.rerank!r}")

    def replace(self, **changes: Any) -> Context:
        """A copy with some fields changed (re-validated); a new mode without max_rounds takes that mode's cap."""
        values = self.named()
        if "mode" in changes and "max_rounds" not in changes:
            values.pop("max_rounds", None)
        values.update(changes)
        return Context(**values)
