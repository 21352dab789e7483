"""The address a request came from, for the sign-in throttle.

Served straight (``TRUSTED_PROXY_COUNT`` 0, the default) it is ``REMOTE_ADDR``. Behind TLS proxies every
request's ``REMOTE_ADDR`` is the nearest proxy's, so all users would share one throttle counter per
username; with N trusted proxies in front, each appending the address it saw to ``X-Forwarded-For``, the
client is the Nth entry from the right. Entries further left were written by the client and are not
believed (a client cannot step round the throttle by sending its own header). A request that did not pass
through all N proxies (too few entries) is taken at ``REMOTE_ADDR``. A port some proxies write after the
address ("203.0.113.7:51234", "[2001:db8::7]:51234") is dropped: it changes with every connection, and a
counter per port would let a guesser step round the throttle by reconnecting.
"""

from __future__ import annotations

from collections.abc import Mapping


def client_address(meta: Mapping[str, str], trusted_proxies: int) -> str:
    remote = meta.get("REMOTE_ADDR", "")
    if trusted_proxies <= 0:
        return remote
    hops = [hop.strip() for hop in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < trusted_proxies:
        return remote
    return _without_port(hops[-trusted_proxies])


def _without_port(hop: str) -> str:
    if hop.startswith("["):  # [IPv6]:port
        return hop[1:].split("]", 1)[0]
    if hop.count(":") == 1:  # IPv4:port (a bare IPv6 address has several colons)
        return hop.split(":", 1)[0]
    return hop
