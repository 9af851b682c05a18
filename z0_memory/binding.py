"""Where a local server may listen: the loopback freely, anywhere else only with a token (the memory inspector and
the MCP server share this rule)."""

from __future__ import annotations

import ipaddress

from z0_memory.errors import ConfigurationError


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 possibly bracketed) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def refuse_open_bind(host: str, token: str | None, *, service: str, how: str) -> None:
    """Refuse to serve ``service`` on an address other machines can reach unless a token guards it; ``how`` says
    how to give one."""
    if not is_loopback(host) and not token:
        raise ConfigurationError(f"refusing to serve {service} on {host!r}, which other machines can reach, without "
                                 f"a token: {how}, or bind 127.0.0.1")
