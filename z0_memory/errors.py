"""Errors a user of z0-memory can cause, each naming what to do about it."""

from __future__ import annotations


class Z0Error(Exception):
    """Base class for every error z0-memory raises on purpose."""


class InvalidKeyError(Z0Error, ValueError):
    """A memory key, project, category or entity name is malformed."""


class InvalidInputError(Z0Error, ValueError):
    """A text to store cannot be stored as given (e.g. it holds NUL bytes, which PostgreSQL text refuses)."""


class ConfigurationError(Z0Error, ValueError):
    """A setting (argument or Z0_* environment variable) has an unusable value."""


class DatabaseError(Z0Error, RuntimeError):
    """The database cannot be reached, started or migrated."""


class UnsafePermissionsError(DatabaseError):
    """Starting the embedded server (as root) would loosen folder permissions the user did not allow."""


class EmbeddingMismatchError(Z0Error, RuntimeError):
    """The configured embedding model does not match the one the store was built with."""


class RulesError(Z0Error, ValueError):
    """A rules file cannot be loaded (missing root, unreadable, too large)."""


class NotFoundError(Z0Error, LookupError):
    """A memory, fact or pending item does not exist in this project."""
