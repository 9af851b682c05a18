"""The memory inspector inside ``langgraph dev`` / LangGraph Platform: ``langgraph.json``'s ``http.app``.

The server merges this app's routes with its own API, so the inspector lives under one prefix, ``/memory``
(``http://127.0.0.1:2024/memory/``), beside the API and Studio. It serves the project of the server's environment
(``Z0_PROJECT``) and opens its own :class:`~z0_memory.memory.Z0Memory` from the same environment on the first
request (``DATABASE_URL`` or the embedded server). Without ``Z0_UI_TOKEN`` it answers only requests addressed to the
loopback; with it, every request must carry the token (``?token=...`` once, then a cookie).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import Mount

from z0_memory.cli import CLI_DEFAULT_PROJECT
from z0_memory.config import Context
from z0_memory.ui.app import create_app

MOUNT = "/memory"

_token = os.environ.get("Z0_UI_TOKEN") or None
# the project the server's environment names (Z0_PROJECT), else the CLI's explicit default: an inspector page
# only shows what that project holds, it never writes to a project nobody chose
inspector = create_app(context=Context.from_env(project=os.environ.get("Z0_PROJECT") or CLI_DEFAULT_PROJECT),
                       token=_token,
                       host="0.0.0.0" if _token else "127.0.0.1")


@contextlib.asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    await inspector.state.z0_ui.source.close()


app = Starlette(routes=[Mount(MOUNT, app=inspector)], lifespan=_lifespan)
