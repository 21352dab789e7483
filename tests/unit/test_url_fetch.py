"""Fetching a contract from a URL (ingest.fetch) against a real server on the loopback interface: only
http(s); every address a host resolves to is checked, on every redirect, and the connection goes to the
checked address; the size and time limits hold against answers that never end or trickle."""

from __future__ import annotations

import ipaddress
import time

import pytest

from ingest.fetch import FetchError, Limits, blocked_reason, check_url, fetch
from tests.fetch_server import FetchServer, endless, redirect, self_signed, serve, trickle

PAGE = b"<!doctype html><html><body><h1>Master Services Agreement</h1><p>Fees: $247.83.</p></body></html>"
LOOPBACK = frozenset({"127.0.0.1"})


@pytest.fixture
def server():
    running = FetchServer()
    yield running
    running.close()


def limits(**overrides) -> Limits:
    values = {"max_bytes": 1024 * 1024, "timeout": 5.0, "max_redirects": 3, "allowed_hosts": LOOPBACK}
    return Limits(**{**values, **overrides})


def refused(url: str, lim: Limits | None = None, **kwargs) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch(url, lim or limits(), **kwargs)
    assert caught.value.message.endswith("."), caught.value.message  # a sentence for people
    return caught.value


def test_a_page_from_an_allowed_host_comes_back_with_its_name_and_final_url(server):
    server.routes["/contracts/msa"] = serve(PAGE, Content_Disposition='attachment; filename="MSA 2024.html"')
    server.routes["/old"] = redirect("/contracts/msa", status=301)

    fetched = fetch(server.url("/old"), limits())

    assert fetched.body.read() == PAGE and fetched.size == len(PAGE)
    assert fetched.url == server.url("/contracts/msa") and fetched.content_type == "text/html"
    assert fetched.filename == "MSA 2024.html"


@pytest.mark.parametrize(
    "url, said",
    [
        ("file:///etc/passwd", "“file:”"),
        ("ftp://files.example.com/contract.pdf", "“ftp:”"),
        ("javascript:alert(document.cookie)", "“javascript:”"),
        ("data:text/html,<script>alert(1)</script>", "“data:”"),
        ("gopher://example.com/", "“gopher:”"),
        ("example.com/contract.pdf", "without http"),
        ("https://user:secret@example.com/contract.pdf", "user name or password"),
        ("https:///contract.pdf", "no host"),
        ("https://example.com/a b.pdf", "spaces"),
        ("https://example.com:99999/", "not a valid URL"),
    ],
)
def test_only_plain_http_and_https_urls_are_fetched(url, said):
    with pytest.raises(FetchError) as caught:
        check_url(url)
    assert caught.value.code == "url_refused" and said in caught.value.message


@pytest.mark.parametrize(
    "address, reason",
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.9", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "metadata"),
        ("fd00:ec2::254", "metadata"),
        ("169.254.10.10", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "carrier-grade"),
        ("fc00::1", "private"),
        ("::ffff:10.0.0.1", "private"),  # IPv4-mapped
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "metadata"),  # NAT64 around 169.254.169.254
    ],
)
def test_addresses_inside_the_network_are_blocked(address, reason):
    assert reason in blocked_reason(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_are_not_blocked(address):
    assert blocked_reason(ipaddress.ip_address(address)) == ""


def test_a_name_resolving_inside_the_network_is_refused_before_any_connection(server):
    server.routes["/"] = serve(PAGE)
    for answer in (["127.0.0.1"], ["93.184.215.14", "10.0.0.7"], ["169.254.169.254"]):
        error = refused(server.url("/", host="contracts.example"), resolver=lambda host, port, a=answer: a)
        assert error.code == "blocked_address" and "contracts.example resolves to" in error.message
    assert refused("http://localhost:9/").code == "blocked_address"  # the system's own resolver
    assert refused("http://[::ffff:127.0.0.1]:9/").code == "blocked_address"
    assert server.seen == []  # nothing reached the server


def test_a_redirect_into_the_network_is_refused_after_checking_the_new_address(server):
    server.routes["/start"] = redirect(server.url("/secret", host="localhost"))  # localhost is not allowed
    server.routes["/metadata"] = redirect("http://169.254.169.254/latest/meta-data/iam/")
    server.routes["/v6"] = redirect("http://[fd00:ec2::254]/latest/")
    server.routes["/secret"] = serve(b"internal")

    for path, said in (("/start", "127.0.0.1"), ("/metadata", "metadata"), ("/v6", "metadata")):
        error = refused(server.url(path))
        assert error.code == "blocked_address" and "redirected to" in error.message and said in error.message
    assert [s.path for s in server.seen] == ["/start", "/metadata", "/v6"]  # never /secret


def test_a_redirect_to_another_scheme_is_refused(server):
    server.routes["/file"] = redirect("file:///etc/passwd")
    server.routes["/js"] = redirect("javascript:alert(1)")
    assert refused(server.url("/file")).code == "url_refused"
    assert "“javascript:”" in refused(server.url("/js")).message


def test_redirects_are_followed_a_bounded_number_of_times(server):
    for n in range(6):
        server.routes[f"/hop{n}"] = redirect(f"/hop{n + 1}")
    server.routes["/hop6"] = serve(PAGE)

    assert fetch(server.url("/hop3"), limits(max_redirects=3)).body.read() == PAGE
    error = refused(server.url("/hop0"), limits(max_redirects=3))
    assert error.code == "too_many_redirects" and "more than 3 times" in error.message


def test_the_connection_goes_to_the_checked_address_with_the_hosts_name(server):
    """The name is looked up once a request, and the socket opened to that answer: a resolver that would
    answer a private address the second time (DNS rebinding) is never asked again."""
    server.routes["/contract"] = serve(PAGE)
    answers = [["127.0.0.1"], ["10.0.0.1"]]
    asked = []

    def rebinding(host, port):
        asked.append(host)
        return answers[len(asked) - 1]

    fetched = fetch(
        server.url("/contract", host="contracts.example"),
        limits(allowed_hosts=frozenset({"contracts.example"})),
        resolver=rebinding,
    )

    assert fetched.body.read() == PAGE and asked == ["contracts.example"]
    assert server.seen[-1].host == f"contracts.example:{server.port}"


def test_an_answer_announcing_20_gb_is_refused_before_its_body_is_read(server):
    server.routes["/huge"] = endless(declared=20 * 1024**3)
    started = time.monotonic()
    error = refused(server.url("/huge"))
    assert (
        error.code == "too_large"
        and "announced 20.0 GB" in error.message
        and "limit is 1.0 MB" in error.message
    )
    assert time.monotonic() - started < 2


def test_an_endless_answer_is_stopped_at_the_size_limit(server):
    server.routes["/stream"] = endless()
    started = time.monotonic()
    error = refused(server.url("/stream"))
    assert error.code == "too_large" and "sent more than 1.0 MB" in error.message
    assert time.monotonic() - started < 3


def test_a_trickling_answer_is_stopped_at_the_deadline(server):
    server.routes["/slow"] = trickle(every_s=0.1)
    started = time.monotonic()
    error = refused(server.url("/slow"), limits(timeout=1.0))
    elapsed = time.monotonic() - started
    assert error.code == "fetch_timeout" and "within 1 seconds" in error.message
    assert 0.9 < elapsed < 2.5, elapsed


def test_a_name_lookup_that_hangs_is_stopped_at_the_deadline():
    def hanging(host, port):
        time.sleep(5)
        return ["93.184.215.14"]

    started = time.monotonic()
    assert refused("https://slow-dns.example/", limits(timeout=0.5), resolver=hanging).code == "fetch_timeout"
    assert time.monotonic() - started < 1.5


def test_an_error_answer_says_what_the_server_said(server):
    error = refused(server.url("/missing"))
    assert error.code == "fetch_failed" and "404 Not Found" in error.message


def test_a_refused_connection_says_so():
    error = refused("http://127.0.0.1:9/contract.pdf")  # the discard port: nobody listens
    assert error.code == "fetch_failed" and "refused the connection" in error.message


def test_https_checks_the_certificate_against_the_hosts_name(tmp_path):
    server_tls, client_tls = self_signed(tmp_path, "contracts.example")
    server = FetchServer(tls=server_tls)
    server.routes["/msa.pdf"] = serve(b"%PDF-1.7 ...", content_type="application/pdf")
    try:
        allowed = limits(allowed_hosts=frozenset({"contracts.example", "other.example"}))
        resolve = lambda host, port: ["127.0.0.1"]  # noqa: E731

        fetched = fetch(
            server.url("/msa.pdf", host="contracts.example"),
            allowed,
            resolver=resolve,
            ssl_context=client_tls,
        )
        assert fetched.body.read() == b"%PDF-1.7 ..." and fetched.filename == "msa.pdf"

        error = refused(
            server.url("/msa.pdf", host="other.example"), allowed, resolver=resolve, ssl_context=client_tls
        )
        assert error.code == "fetch_failed" and "certificate of other.example is not valid" in error.message
    finally:
        server.close()


def test_a_path_in_other_letters_is_sent_percent_encoded(server):
    server.routes["/vertr%C3%A4ge/m%C3%BCller.html"] = serve(PAGE)
    fetched = fetch(server.url("/verträge/müller.html?jahr=2024"), limits())
    assert fetched.body.read() == PAGE and fetched.filename == "müller.html"
    assert server.seen[-1].path == "/vertr%C3%A4ge/m%C3%BCller.html?jahr=2024"
