"""The inspector's guards: the access token, CSRF on every POST, the Host header, and the bind rule.

* **Bind rule**: the page binds 127.0.0.1 by default; any other host needs a token (``--token`` or
  ``Z0_UI_TOKEN``), else the server refuses to start (:func:`check_bind`).
* **Token**: when one is configured every request must carry it: ``?token=...`` once (it is then kept in an
  HttpOnly cookie and the URL is cleaned), the cookie, or ``Authorization: Bearer ...``.
* **CSRF**: a random value in a ``SameSite=Strict`` cookie, repeated in every form as a hidden field; a POST whose
  field does not match its cookie (or whose ``Origin`` names another host) is refused with 403.
* **Host**: on loopback the ``Host`` header must name the loopback (a DNS-rebinding page cannot reach the API).
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request

from z0_memory.binding import is_loopback, refuse_open_bind

TOKEN_COOKIE = "z0_ui_token"
CSRF_COOKIE = "z0_ui_csrf"
CSRF_FIELD = "csrf"


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve on a non-loopback address without a token."""
    refuse_open_bind(host, token, service="the memory inspector",
                     how="set one with --token or Z0_UI_TOKEN (then open the page with ?token=...)")


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a).encode(), str(b).encode())


def presented_token(request: Request) -> str | None:
    """The token a request carries: query, then Authorization header, then cookie."""
    if request.query_params.get("token"):
        return request.query_params["token"]
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.cookies.get(TOKEN_COOKIE)


def host_allowed(request: Request) -> bool:
    """On a loopback server: the Host header names the loopback (any port)."""
    host = request.headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    return is_loopback(name)


def new_csrf() -> str:
    return secrets.token_urlsafe(32)


def origin_ok(request: Request) -> bool:
    """A POST's ``Origin`` (when the browser sends one) must be this server."""
    origin = request.headers.get("origin")
    if not origin or origin == "null":
        return origin != "null"
    return urlsplit(origin).netloc == request.headers.get("host", "")
