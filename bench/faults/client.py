"""The requests a person's browser sends, over loopback to the stack: sign in through the sign-in form, upload
through the upload form (as htmx sends it), read the per-file lines the upload page answers with."""

from __future__ import annotations

import html
import re
import secrets
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx

_RESULT = re.compile(
    r'<li class="file-result (ok|bad)" data-filename="([^"]*)">.*?<span class="[^"]*">(.*?)</span>', re.S
)
_ALERT = re.compile(r'<p class="error" role="alert">(.*?)</p>', re.S)


@dataclass
class Answer:
    status: int
    lines: list[tuple[bool, str, str]]  # (taken, file name, what the page says of it)
    alert: str  # the form's own error line, when no file was read
    seconds: float


def signed_in(base: str, username: str, password: str, timeout: float = 300) -> httpx.Client:
    """A client signed in through the sign-in form (its CSRF cookie and token, as a browser)."""
    client = httpx.Client(base_url=base, timeout=timeout)
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert token, page.text[:500]
    answer = client.post(
        "/accounts/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token.group(1)},
        headers={"Referer": f"{base}/accounts/login/"},
    )
    assert answer.status_code == 302, (answer.status_code, answer.text[:500])
    return client


def session_client(base: str, session_key: str, timeout: float = 60) -> httpx.Client:
    """A client carrying an existing session, with a CSRF cookie of its own and the header that matches it."""
    token = secrets.token_hex(16)  # 32 characters: Django takes an unmasked secret of its length as a token
    client = httpx.Client(base_url=base, timeout=timeout, headers={"X-CSRFToken": token})
    client.cookies.set("sessionid", session_key)
    client.cookies.set("csrftoken", token)
    return client


def multipart(files: list[tuple[str, bytes]], fields: dict[str, str]) -> tuple[bytes, str]:
    """The body of a form post and its content type, built by hand so a file name goes as it is given
    (control characters, quotes' neighbours and all), as a hostile client would send it."""
    boundary = uuid.uuid4().hex
    out = bytearray()
    for key, value in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
    for name, data in files:
        quoted = name.replace('"', "%22").replace("\r", " ").replace("\n", " ")
        out += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{quoted}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode("utf-8", "surrogateescape")
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def upload(
    client: httpx.Client, engagement_id: int, files: list[tuple[str, Path]], *, extract: bool = False
) -> Answer:
    import time

    token = client.cookies.get("csrftoken") or ""
    fields = {"doc_type": ""} | ({"extract": "on"} if extract else {})
    body, content_type = multipart([(name, path.read_bytes()) for name, path in files], fields)
    started = time.monotonic()
    answer = client.post(
        f"/engagements/{engagement_id}/upload/",
        content=body,
        headers={"Content-Type": content_type, "HX-Request": "true", "X-CSRFToken": token},
    )
    seconds = time.monotonic() - started
    text = answer.text
    lines = [
        (taken == "ok", html.unescape(name), _plain(said)) for taken, name, said in _RESULT.findall(text)
    ]
    alert = _ALERT.search(text)
    return Answer(answer.status_code, lines, _plain(alert.group(1)) if alert else "", seconds)


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())
