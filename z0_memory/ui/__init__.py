"""The memory inspector: a local web page over one project's memory (``z0-memory ui``); :func:`create_app` builds
it as an ASGI app to serve or mount. Needs the ``ui`` extra (``pip install 'z0-memory[ui]'``)."""

from z0_memory.ui.app import create_app

__all__ = ["create_app"]
