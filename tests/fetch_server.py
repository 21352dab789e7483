"""A real HTTP(S) server on the loopback interface for the URL-fetch tests: routes answer what a test
programs (a page, a PDF, a redirect, an endless body, a trickle), and every request is recorded with its
Host header. Tests allow its host through ``URL_FETCH_ALLOWED_HOSTS`` (or ``Limits.allowed_hosts``)."""

from __future__ import annotations

import datetime
import http.server
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


@dataclass
class Seen:
    path: str
    host: str


@dataclass
class FetchServer:
    routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    tls: ssl.SSLContext | None = None

    def __post_init__(self):
        server = self

        class Handle(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802 (http.server's name)
                server.seen.append(Seen(self.path, self.headers.get("Host", "")))
                route = server.routes.get(self.path.split("?", 1)[0])
                if route is None:
                    page(self, b"not here", status=404, content_type="text/plain")
                    return
                try:
                    route(self)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                    pass

        self._http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handle)
        self._http.daemon_threads = True
        if self.tls is not None:
            self._http.socket = self.tls.wrap_socket(self._http.socket, server_side=True)
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self._http.server_address[1]

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}{path}"

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


def page(
    handler, body: bytes, *, status: int = 200, content_type: str = "text/html; charset=utf-8", **headers
):
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


def serve(body: bytes, **kwargs) -> Handler:
    return lambda handler: page(handler, body, **kwargs)


def redirect(location: str, status: int = 302) -> Handler:
    return lambda handler: page(handler, b"", status=status, Location=location)


def endless(declared: int | None = None) -> Handler:
    """A body that never ends (or announces ``declared`` bytes): zeros, 64 KiB at a time."""

    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/octet-stream")
        if declared is not None:
            handler.send_header("Content-Length", str(declared))
        handler.send_header("Connection", "close")
        handler.end_headers()
        block = b"\0" * 65536
        for _ in range(1_000_000):
            handler.wfile.write(block)

    return answer


def trickle(every_s: float = 0.2, total: int = 10_000) -> Handler:
    """A byte at a time, each well within any socket timeout: only a deadline on the whole stops it."""

    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", str(total))
        handler.end_headers()
        for _ in range(total):
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(every_s)

    return answer


def self_signed(folder: Path, host: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context, client context trusting only this certificate) for ``host``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_path, key_path)
    client = ssl.create_default_context(cafile=str(cert_path))
    return server, client
