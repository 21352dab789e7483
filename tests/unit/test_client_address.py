"""The sign-in throttle's client address, served straight and behind trusted proxies."""

import pytest

from config.client_address import client_address


@pytest.mark.parametrize(
    "forwarded, proxies, expected",
    [
        ("", 0, "10.0.0.2"),  # served straight: the connection's address
        ("203.0.113.7", 0, "10.0.0.2"),  # ... and a client's own header is not believed
        ("203.0.113.7", 1, "203.0.113.7"),  # one proxy: the address it saw
        ("6.6.6.6, 203.0.113.7", 1, "203.0.113.7"),  # a forged entry left of it is ignored
        ("6.6.6.6, 203.0.113.7, 10.0.0.9", 2, "203.0.113.7"),  # two proxies: the outer one's view
        ("203.0.113.7", 2, "10.0.0.2"),  # fewer hops than proxies: not via them all
        (" 203.0.113.7 ,", 1, "203.0.113.7"),  # spaces and an empty entry
        ("203.0.113.7:51234", 1, "203.0.113.7"),  # a port, new with each connection, is dropped
        ("[2001:db8::7]:51234", 1, "2001:db8::7"),
        ("2001:db8::7", 1, "2001:db8::7"),  # a bare IPv6 address is whole
    ],
)
def test_client_address(forwarded, proxies, expected):
    meta = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": forwarded}
    assert client_address(meta, proxies) == expected
