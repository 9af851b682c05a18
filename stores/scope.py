"""The isolation boundary every store is bound to: a project and, optionally, a user inside it."""

from __future__ import annotations

from dataclasses import dataclass

from z0_memory.errors import InvalidKeyError
from z0_memory.schemas import MemoryKey, validate_segment


@dataclass(frozen=True)
class Scope:
    """Stores are constructed for one scope and put it in every statement they run.

    ``user_id == ""`` is the project's shared memory; a non-empty user id is a private partition of the project.
    """

    project: str
    user_id: str = ""

    def __post_init__(self) -> None:
        validate_segment(self.project, "project")
        if self.user_id:
            validate_segment(self.user_id, "user_id")

    def key(self, key: str | MemoryKey) -> MemoryKey:
        """Parse ``key`` and check that it belongs to this scope's project."""
        parsed = key if isinstance(key, MemoryKey) else MemoryKey.parse(key)
        if parsed.project != self.project:
            raise InvalidKeyError(
                f"key {str(parsed)!r} belongs to project {parsed.project!r}, not to this scope's {self.project!r}"
            )
        return parsed

    @property
    def params(self) -> dict[str, str]:
        return {"project": self.project, "user_id": self.user_id}
