"""A real PgBouncer in transaction mode in front of the test database (Debian's ``pgbouncer``; ``.ci/run`` installs
it). Loopback only; it runs as the embedded server's system user, since PgBouncer refuses to run as root."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _executable() -> str:
    exe = shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if os.path.exists("/usr/sbin/pgbouncer") else None)
    if exe is None:
        message = "pgbouncer is not installed (apt-get install pgbouncer)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return exe


@pytest.fixture(scope="session")
def pgbouncer_url(database_url: str) -> Iterator[str]:
    """A psycopg URL of the test database through PgBouncer in transaction mode."""
    exe = _executable()
    params = psycopg.conninfo.conninfo_to_dict(database_url)
    if not str(params.get("host", "")).startswith("/"):
        pytest.skip("the PgBouncer fixture fronts the embedded server's unix socket")
    folder = tempfile.mkdtemp(prefix="z0-pgbouncer-", dir="/tmp")
    os.chmod(folder, 0o777)
    port = _free_port()
    user = params.get("user", "postgres")
    with open(os.path.join(folder, "users.txt"), "w") as f:
        f.write(f'"{user}" ""\n')
    ini = os.path.join(folder, "pgbouncer.ini")
    with open(ini, "w") as f:
        f.write(f"""[databases]
* = host={params['host']} port={params.get('port', 5432)}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/users.txt
pool_mode = transaction
max_client_conn = 200
default_pool_size = 20
ignore_startup_parameters = extra_float_digits,options
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
""")
    args = [exe]
    if os.geteuid() == 0:  # PgBouncer will not run as root: it runs as the embedded server's user
        run_as = "pgserver" if _user_exists("pgserver") else "nobody"
        args += ["-u", run_as]
    proc = subprocess.Popen([*args, ini], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"postgresql://{user}@127.0.0.1:{port}/{urlsplit(database_url).path.lstrip('/') or 'postgres'}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with psycopg.connect(url, connect_timeout=2, prepare_threshold=None) as conn:
                    conn.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log = open(os.path.join(folder, "pgbouncer.log")).read() if os.path.exists(
                        os.path.join(folder, "pgbouncer.log")) else ""
                    raise RuntimeError(f"pgbouncer did not start: {proc.stdout.read().decode()} {log}") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
