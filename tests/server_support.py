"""Servers the tests start as subprocesses (``langgraph dev``, ``z0-memory ui``): a free port, waiting until the
server answers, and stopping it with its process group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, log: Path, *, name: str, timeout_s: float) -> None:
    """Poll ``url`` until it answers 200; fail early (with the server's log) if the server exits, and give up after
    ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    pytest.fail(f"{name} not ready after {timeout_s:.0f} s:\n{log.read_text()[-4000:]}")


def stop(proc: subprocess.Popen) -> None:
    """Terminate the server; kill its process group (started with ``start_new_session``) if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
