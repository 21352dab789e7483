"""Fetching a contract from a URL without letting the URL reach inside our network.

:func:`fetch` takes an ``http``/``https`` URL and returns its bytes, streamed into a temporary file,
or raises :class:`FetchError` with a stable ``code`` and a sentence for people. It guards against
server-side request forgery and against answers that never end:

* Only ``http`` and ``https`` (no ``file:``, ``ftp:``, ``javascript:``...), no user name or password in
  the URL, at most :data:`MAX_URL_CHARS` characters.
* The host name is resolved once per request, and every address it resolves to is checked
  (:func:`blocked_reason`): loopback, private, link-local, multicast, reserved, shared (CGNAT) and
  cloud metadata addresses are refused, also when wrapped in IPv6 (``::ffff:10.0.0.1``, 6to4,
  Teredo, NAT64). The connection then goes to a checked address itself (the socket is opened to the
  IP, the ``Host`` header and the TLS certificate name are the host's): no second lookup can rebind
  the name to another address between the check and the connection.
* Redirects are followed by hand, at most ``max_redirects`` of them, each new URL checked again
  from the start (scheme, host, addresses).
* One deadline covers the name lookup, the connection, the headers and the body: a watchdog shuts the
  socket when it passes, so a server that drips a byte at a time cannot hold a worker past it.
* The body is read in blocks and given up as soon as it passes ``max_bytes`` (a declared
  ``Content-Length`` over it is refused before reading); compressed answers are refused (we ask for
  none), so nothing inflates past the limit.

Hosts named in ``allowed_hosts`` (``settings.URL_FETCH_ALLOWED_HOSTS``) skip the address check, for
an intranet document server; they are still connected to at the address resolved.
Pure apart from the network: no database, no Django models.
"""

from __future__ import annotations

import email.message
import http.client
import ipaddress
import socket
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import IO
from urllib.parse import quote, unquote, urljoin, urlsplit

MAX_URL_CHARS = 2000
REDIRECTS = frozenset({301, 302, 303, 307, 308})
READ_BLOCK = 64 * 1024
SPOOL_BYTES = 4 * 1024 * 1024  # kept in memory up to this size, then in a temporary file
USER_AGENT = "ClauseReview/0.1 (contract fetch)"

# Cloud metadata endpoints (AWS, GCP, Azure, and AWS's IPv6 one). Each is also link-local or private, so
# the general rule refuses it too; named here so the message says what it is.
METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not public, not "private" either
_IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_PATH_SAFE = "/%?=&;:@!$'()*+,~-._[]"


class FetchError(Exception):
    """A URL that could not be fetched. ``code``: ``url_refused`` (not an http(s) URL we fetch),
    ``blocked_address`` (it leads inside the network), ``fetch_timeout``, ``too_large``,
    ``too_many_redirects``, ``fetch_failed`` (no answer, or an answer that is not the file: 404, a
    broken connection, an invalid certificate). ``message`` is a sentence for the person who sent it."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Limits:
    max_bytes: int
    timeout: float  # seconds, for the whole fetch (every redirect included)
    max_redirects: int = 5
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)


@dataclass
class Fetched:
    url: str  # where the bytes came from, after redirects
    content_type: str  # as the server said; informative only (the bytes are sniffed)
    filename: str  # from Content-Disposition, else the last part of the URL's path ("" when none)
    body: IO[bytes]  # at offset 0; the caller closes it
    size: int


def check_url(url: str):
    """The parts of ``url`` (``urlsplit``) when it is one we may fetch, else :class:`FetchError`."""
    if len(url) > MAX_URL_CHARS:
        raise FetchError(
            "url_refused", f"This URL is {len(url):,} characters long; the limit is {MAX_URL_CHARS:,}."
        )
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise FetchError("url_refused", "This URL contains spaces or control characters; paste it as it is.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise FetchError("url_refused", "This is not a valid URL.") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        said = f"“{scheme}:” addresses" if scheme else "addresses without http:// or https://"
        raise FetchError("url_refused", f"Only http and https URLs can be fetched; {said} cannot.")
    if not parts.hostname:
        raise FetchError("url_refused", "This URL names no host.")
    if parts.username is not None or parts.password is not None:
        raise FetchError("url_refused", "This URL carries a user name or password; those are not sent.")
    if port == 0:
        raise FetchError("url_refused", "This URL names port 0.")
    try:
        parts.hostname.encode("idna")
    except UnicodeError:
        raise FetchError("url_refused", "This URL's host name is not valid.") from None
    return parts


def blocked_reason(address: _IPAddress) -> str:
    """Why ``address`` may not be fetched from ("" when it is a public address)."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if inner is None and address in _NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if inner is not None:
            return blocked_reason(inner)
    checks = (
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_unspecified, "an unspecified address"),
        (address.is_reserved, "a reserved address"),
        (address in _SHARED, "a shared (carrier-grade NAT) address"),
        (address.is_private, "a private network address"),
        (not address.is_global, "not a public address"),
    )
    return next((reason for hit, reason in checks if hit), "")


def fetch(url: str, limits: Limits, *, resolver=None, ssl_context: ssl.SSLContext | None = None) -> Fetched:
    """GET ``url`` within ``limits`` (see the module doc). ``resolver(host, port)`` returns the addresses
    of a host (default: the system's, through ``getaddrinfo``); ``ssl_context`` verifies certificates
    (default: the system's trust store)."""
    deadline = time.monotonic() + limits.timeout
    resolve = resolver or _system_addresses
    current = url
    for _hop in range(limits.max_redirects + 1):
        try:
            parts = check_url(current)
            # a name in other letters ("bücher.de") is looked up and sent as its ASCII form
            host = (parts.hostname or "").encode("idna").decode("ascii").lower()
            https = parts.scheme.lower() == "https"
            port = parts.port or (443 if https else 80)
            addresses = _checked_addresses(host, port, resolve, deadline, limits)
        except FetchError as exc:
            if current == url:
                raise
            raise FetchError(
                exc.code, f"The URL redirected to {current[:200]}, refused: {exc.message}"
            ) from None
        connection = _PinnedConnection(host, port, addresses, https, ssl_context, deadline)
        try:
            target = quote(parts.path or "/", safe=_PATH_SAFE) + (
                f"?{quote(parts.query, safe=_PATH_SAFE)}" if parts.query else ""
            )  # a path with other letters ("/verträge/msa.pdf") is sent percent-encoded, the rest as given
            connection.request(
                "GET",
                target,
                headers={
                    "User-Agent": USER_AGENT,
                    "Accept": "text/html, application/pdf, */*;q=0.5",
                    "Accept-Encoding": "identity",
                    "Connection": "close",
                },
            )
            response = connection.getresponse()
            if response.status in REDIRECTS:
                location = (response.getheader("Location") or "").strip()
                if not location:
                    raise FetchError(
                        "fetch_failed", f"{host} answered a redirect ({response.status}) to nowhere."
                    )
                current = urljoin(current, location)
                continue
            if not 200 <= response.status < 300:
                raise FetchError(
                    "fetch_failed", f"{host} answered {response.status} {response.reason}".rstrip() + "."
                )
            body, size = _read_body(response, connection, host, limits)
            return Fetched(
                url=current,
                content_type=(response.getheader("Content-Type") or "").split(";")[0].strip().lower(),
                filename=_filename(response.getheader("Content-Disposition"), parts.path),
                body=body,
                size=size,
            )
        except FetchError:
            raise
        except (OSError, http.client.HTTPException, ValueError) as exc:  # refused, reset, timed out, TLS...
            if connection.timed_out or isinstance(exc, TimeoutError):
                raise _timeout(host, limits) from None
            raise FetchError("fetch_failed", _failure(host, exc)) from None
        finally:
            connection.close()
    raise FetchError(
        "too_many_redirects",
        f"The URL redirected more than {limits.max_redirects} times; the last address was {current[:200]}.",
    )


def _checked_addresses(host: str, port: int, resolve, deadline: float, limits: Limits) -> list[_IPAddress]:
    addresses = _lookup(host, port, resolve, deadline, limits)
    if host in limits.allowed_hosts:
        return addresses
    for address in addresses:
        reason = blocked_reason(address)
        if reason:
            where = (
                f"{host} is" if len(addresses) == 1 and _literal(host) else f"{host} resolves to {address},"
            )
            raise FetchError(
                "blocked_address", f"{where} {reason}; addresses inside the network are never fetched."
            )
    return addresses


def _lookup(host: str, port: int, resolve, deadline: float, limits: Limits) -> list[_IPAddress]:
    """The addresses of ``host``, looked up in a thread so the deadline also bounds a slow resolver."""
    try:
        return [ipaddress.ip_address(host)]  # a literal address: nothing to look up
    except ValueError:
        pass
    found: list = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            found.extend(resolve(host, port))
        except BaseException as exc:  # handed to the waiting thread
            failed.append(exc)

    worker = threading.Thread(target=run, name=f"resolve {host}", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        raise _timeout(host, limits)
    if failed or not found:
        raise FetchError("fetch_failed", f"The host name {host} could not be found.")
    addresses: list[_IPAddress] = []
    for item in found:
        address = ipaddress.ip_address(str(item).split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") goes
        if address not in addresses:
            addresses.append(address)
    return addresses


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _system_addresses(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_ADDRCONFIG)
    return [str(info[4][0]) for info in infos]


class _PinnedConnection:
    """One HTTP(S) request to ``host`` over a socket opened to one of ``addresses`` (tried in order), never
    to whatever the name resolves to later. A watchdog shuts the socket at ``deadline``."""

    def __init__(self, host: str, port: int, addresses, https: bool, context, deadline: float):
        self.timed_out = False
        self._deadline = deadline
        self._addresses = addresses
        self._watchdog: threading.Timer | None = None
        self._sock: socket.socket | None = None
        timeout = max(0.01, deadline - time.monotonic())
        self._http: http.client.HTTPConnection
        if https:
            self._http = _HTTPS(host, port, owner=self, context=context, timeout=timeout)
        else:
            self._http = _HTTP(host, port, owner=self, timeout=timeout)

    def open(self, port: int) -> socket.socket:
        """A socket connected to the first of the checked addresses that answers."""
        last: OSError | None = None
        for address in self._addresses:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("deadline passed")
            family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(remaining)
            try:
                sock.connect((str(address), port))
            except OSError as exc:
                sock.close()
                last = exc
                continue
            self.hold(sock)
            self._watchdog = threading.Timer(max(0.0, self._deadline - time.monotonic()), self._expire)
            self._watchdog.daemon = True
            self._watchdog.start()
            return sock
        raise last or OSError("no address to connect to")

    def hold(self, sock: socket.socket) -> None:
        """The socket the watchdog shuts (the TLS one once the connection is wrapped)."""
        self._sock = sock

    def _expire(self) -> None:
        self.timed_out = True
        try:
            if self._sock is not None:
                self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def request(self, method: str, target: str, headers: dict[str, str]) -> None:
        self._http.request(method, target, headers=headers)

    def getresponse(self) -> http.client.HTTPResponse:
        return self._http.getresponse()

    def remaining(self) -> float:
        return self._deadline - time.monotonic()

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._http.close()


class _HTTP(http.client.HTTPConnection):
    """http.client's connection over the socket its ``owner`` opens (to a checked address)."""

    def __init__(self, host: str, port: int, *, owner: _PinnedConnection, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._owner = owner

    def connect(self) -> None:
        self.sock = self._owner.open(self.port)


class _HTTPS(http.client.HTTPSConnection):
    """As :class:`_HTTP`, with TLS: the certificate is checked against the host's name (SNI too)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        owner: _PinnedConnection,
        context: ssl.SSLContext | None,
        timeout: float,
    ):
        self._tls = context or ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._owner = owner

    def connect(self) -> None:
        self.sock = self._tls.wrap_socket(self._owner.open(self.port), server_hostname=self.host)
        self._owner.hold(self.sock)


def _read_body(response, connection: _PinnedConnection, host: str, limits: Limits) -> tuple[IO[bytes], int]:
    declared = response.getheader("Content-Length")
    if declared and declared.strip().isdigit() and int(declared) > limits.max_bytes:
        raise _too_large(host, limits, int(declared), declared=True)
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise FetchError(
            "fetch_failed", f"{host} sent its answer compressed ({encoding}) although asked not to."
        )
    body = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    size = 0
    try:
        while True:
            if connection.remaining() <= 0:
                raise _timeout(host, limits)
            block = response.read1(READ_BLOCK)
            if not block:
                break
            size += len(block)
            if size > limits.max_bytes:
                raise _too_large(host, limits, size, declared=False)
            body.write(block)
        if connection.timed_out:
            raise _timeout(host, limits)
        if response.length:  # the connection closed before the length it announced
            raise FetchError(
                "fetch_failed", f"The connection to {host} closed before the whole file arrived."
            )
    except BaseException:
        body.close()
        raise
    body.seek(0)
    return body, size


def _filename(disposition: str | None, path: str) -> str:
    """The file name the server gives (``Content-Disposition``), else the last part of the URL's path."""
    if disposition:
        message = email.message.Message()
        message["Content-Disposition"] = disposition
        name = message.get_filename()
        if name:
            return _plain(name)
    return _plain(unquote(path.rstrip("/").rsplit("/", 1)[-1]))


def _plain(name: str) -> str:
    """A file name without folders or characters a file system or a page would trip on."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable() and ch not in '<>:"|?*').strip(" .")
    return name[:150]


def _human(size: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def _too_large(host: str, limits: Limits, size: int, *, declared: bool) -> FetchError:
    what = f"announced {_human(size)}" if declared else f"sent more than {_human(limits.max_bytes)}"
    return FetchError(
        "too_large", f"{host} {what}; the limit is {_human(limits.max_bytes)}. The download was stopped."
    )


def _timeout(host: str, limits: Limits) -> FetchError:
    return FetchError("fetch_timeout", f"{host} did not deliver the file within {limits.timeout:g} seconds.")


def _failure(host: str, exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"The certificate of {host} is not valid ({exc.verify_message}); nothing was fetched."
    if isinstance(exc, ConnectionRefusedError):
        return f"{host} refused the connection."
    if isinstance(exc, http.client.HTTPException):
        return f"{host} did not answer in HTTP ({type(exc).__name__})."
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    return f"Could not fetch from {host} ({detail})."
