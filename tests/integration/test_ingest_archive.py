"""A ZIP of contracts uploads as its documents: each file in it is a document with its own status, named by
its path in the archive; members that are not plain files inside it (``..``, absolute paths, links), nested
archives and password-protected members are refused one by one with a sentence, the rest still taken; an
archive of more files than an upload takes, or a decompression bomb, is refused whole, nothing stored."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from demo import make_manual_docx
from ingest.archive import intake_archive, is_archive
from ingest.intake import IntakeError
from ingest.models import Document
from taskstate.models import TaskState
from tests.integration.ingest_helpers import assert_consistent, corrupt_pdf, wait_terminal, zip_bomb

pytestmark = pytest.mark.django_db(transaction=True)

SUPPLY = "# Supply Agreement\n\nThe Supplier shall deliver the goods within thirty (30) days of each order.\n"
NOTICE = (
    "<html><body><h1>Notice</h1><p>Either party may terminate on ninety (90) days notice.</p></body></html>"
)
TERMS = "Payment terms: invoices are payable within 45 days at a fee of $247.83 per pallet.\n"


def archive(members: dict[str, bytes | str], *, special: dict[str, zipfile.ZipInfo] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(zipfile.ZipInfo(name), data, compress_type=zipfile.ZIP_DEFLATED)
        for info, data in (special or {}).values():
            out.writestr(info, data)
    return buffer.getvalue()


def member(name: str, data: bytes | str, *, mode: int = 0):
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # unix: the mode is in the high bits of external_attr
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info, data


def encrypted(data: bytes, name: str) -> bytes:
    """``data`` with the member ``name`` marked password-protected in the central directory (zipfile
    writes no encrypted members, and reads the flag from there)."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at >= 0:
        length = int.from_bytes(out[at + 28 : at + 30], "little")
        if out[at + 46 : at + 46 + length] == name.encode():
            out[at + 8] |= 0x1
        at = out.find(b"PK\x01\x02", at + 4)
    return bytes(out)


def stored_files(settings) -> set[Path]:
    return {p for p in Path(settings.MEDIA_ROOT).rglob("*") if p.is_file()}


def test_a_zip_of_contracts_uploads_as_its_documents_each_with_its_own_status(
    client, engagement, make_member, celery_worker, tmp_path
):
    client.force_login(make_member(engagement, "admin"))
    data = archive(
        {
            "contracts/2024/supply.md": SUPPLY,
            "contracts/notices/notice.html": NOTICE,
            "terms.txt": TERMS,
            "contracts/broken.pdf": corrupt_pdf(tmp_path / "broken.pdf").read_bytes(),
            "__MACOSX/contracts/._supply.md": b"\0\5\26\7 resource fork",
            ".DS_Store": b"\0\0\0\1Bud1",
        }
    )
    upload = SimpleUploadedFile("batch.zip", data, content_type="application/zip")

    response = client.post(reverse("engagement-upload", args=[engagement.pk]), {"files": [upload]})

    html = response.content.decode()
    assert response.status_code == 200
    for path in (
        "contracts/2024/supply.md",
        "contracts/notices/notice.html",
        "terms.txt",
        "contracts/broken.pdf",
    ):
        assert f"batch.zip › {path}" in html
    assert "__MACOSX" not in html and "DS_Store" not in html and html.count("Queued for processing") == 4
    rows = wait_terminal(list(Document.objects.filter(engagement=engagement)), worker=celery_worker)
    by_name = {row.original_name: row for row in rows}
    assert set(by_name) == {
        "contracts/2024/supply.md",
        "contracts/notices/notice.html",
        "terms.txt",
        "contracts/broken.pdf",
    }
    assert by_name["contracts/2024/supply.md"].title == "contracts/2024/supply"
    assert by_name["terms.txt"].title == "terms"
    for name in ("contracts/2024/supply.md", "contracts/notices/notice.html", "terms.txt"):
        assert_consistent(by_name[name])
        assert "/" not in Path(by_name[name].file.name).name  # the folders are in the title, not on disk
    broken = by_name["contracts/broken.pdf"]  # one bad file fails alone
    assert (broken.status, broken.error_code) == ("failed", "corrupt")
    assert "thirty (30) days" in by_name["contracts/2024/supply.md"].text
    page = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    assert "contracts/2024/supply" in page
    original = client.get(reverse("document-file", args=[by_name["contracts/2024/supply.md"].pk]))
    assert original["Content-Disposition"] == 'attachment; filename="supply.md"'


def test_unsafe_members_are_refused_one_by_one_and_the_rest_taken(engagement, tmp_path, settings):
    bomb = zip_bomb(tmp_path / "bomb.docx", "docx").read_bytes()
    inner = archive({"inner/contract.md": SUPPLY})
    data = archive(
        {"good/supply.md": SUPPLY, "../../etc/cron.d/evil.md": TERMS, "/etc/passwd.txt": TERMS},
        special={
            "link": member("good/link.md", "/etc/passwd", mode=stat.S_IFLNK | 0o777),
            "fifo": member("good/pipe.md", "", mode=stat.S_IFIFO | 0o644),
            "locked": member("good/locked.md", TERMS, mode=stat.S_IFREG | 0o644),
            "nested": member("more/inner.zip", inner, mode=stat.S_IFREG | 0o644),
            "nested bomb": member("more/bomb.docx", bomb, mode=stat.S_IFREG | 0o644),
            "windows": member("C:\\Windows\\win.txt", TERMS),
            "backslashes": member("deals\\2023\\terms.txt", TERMS),
        },
    )
    data = encrypted(data, "good/locked.md")
    before = stored_files(settings)

    entries = intake_archive(engagement, io.BytesIO(data), filename="mixed.zip", enqueue=False)

    said = {e.path: (e.error.code, e.error.message) if e.error else "taken" for e in entries}
    assert said["good/supply.md"] == "taken" and said["deals\\2023\\terms.txt"] == "taken"
    assert said["more/bomb.docx"] == "taken"  # an Office file is a document: its own check fails it
    assert (
        said["../../etc/cron.d/evil.md"][0] == "unsafe_path"
        and "outside the archive" in said["../../etc/cron.d/evil.md"][1]
    )
    assert said["/etc/passwd.txt"][0] == "unsafe_path" and "absolute path" in said["/etc/passwd.txt"][1]
    assert said["C:\\Windows\\win.txt"][0] == "unsafe_path"
    assert said["good/link.md"] == (
        "link",
        "“good/link.md” is a symbolic link; links in an archive are not followed.",
    )
    assert said["good/pipe.md"][0] == "unsafe_path"
    assert said["good/locked.md"][0] == "encrypted"
    assert (
        said["more/inner.zip"][0] == "nested_archive"
        and "archives inside archives are not opened" in said["more/inner.zip"][1]
    )

    documents = {d.original_name: d for d in Document.objects.filter(engagement=engagement)}
    assert set(documents) == {"good/supply.md", "deals/2023/terms.txt", "more/bomb.docx"}
    assert all(d.status == "queued" for d in documents.values())
    assert len(stored_files(settings) - before) == 3  # nothing of a refused member reached the disk
    assert not any("etc" in p.parts or "Windows" in p.parts for p in stored_files(settings))


def test_an_archive_of_ten_thousand_tiny_files_is_refused_whole(engagement, settings):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        for n in range(10_000):
            out.writestr(f"tiny/{n:05}.txt", "x")
    before = stored_files(settings)

    with pytest.raises(IntakeError) as caught:
        intake_archive(engagement, io.BytesIO(buffer.getvalue()), filename="tiny.zip", enqueue=False)

    assert caught.value.code == "too_many_files"
    assert caught.value.message == (
        f"“tiny.zip” holds 10,000 files; one upload takes at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES}. "
        "Split it into smaller archives."
    )
    assert not Document.objects.exists() and stored_files(settings) == before


def test_a_decompression_bomb_archive_is_refused_whole_by_the_office_file_limits(engagement, settings):
    before = stored_files(settings)
    bomb = archive({"ok.txt": TERMS, "huge.txt": " " * (40 * 1024 * 1024)})  # ~1000:1
    damaged = b"PK\x03\x04" + b"\0" * 200

    for data, code, said in ((bomb, "zip_bomb", "decompression bomb"), (damaged, "corrupt", "damaged")):
        with pytest.raises(IntakeError) as caught:
            intake_archive(engagement, io.BytesIO(data), filename="x.zip", enqueue=False)
        assert caught.value.code == code and said in caught.value.message

    assert not Document.objects.exists() and stored_files(settings) == before
    assert not TaskState.objects.filter(name__startswith="ingest.").exists()


def test_only_a_zip_of_files_is_an_archive_not_an_office_file(tmp_path):
    docx = make_manual_docx(tmp_path / "manual.docx").path
    assert not is_archive(docx)
    assert not is_archive(io.BytesIO(b"%PDF-1.7 contract"))
    assert is_archive(io.BytesIO(archive({"a.docx": docx.read_bytes()})))
    # a PDF stored uncompressed first in the archive: its "%PDF-" header lies in the archive's first KB
    stored = io.BytesIO()
    with zipfile.ZipFile(stored, "w", compression=zipfile.ZIP_STORED) as out:
        out.writestr("contract.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 8)
    assert is_archive(io.BytesIO(stored.getvalue()))


def test_the_ingest_command_takes_an_archive_member_by_member(tmp_path):
    path = tmp_path / "deals.zip"
    path.write_bytes(archive({"deals/supply.md": SUPPLY, "../escape.md": TERMS}))
    out, err = io.StringIO(), io.StringIO()

    with pytest.raises(SystemExit):  # a member was refused: exit status 1
        call_command(
            "ingest", str(path), "--engagement", "Zip client", "--inline", "--wait", stdout=out, stderr=err
        )

    assert "deals.zip › deals/supply.md: queued as document" in out.getvalue()
    assert "deals.zip › ../escape.md: refused:" in err.getvalue() and "outside the archive" in err.getvalue()
    document = Document.objects.get()
    assert (document.original_name, document.title, document.status) == (
        "deals/supply.md",
        "deals/supply",
        "ready",
    )


def test_the_limit_on_an_office_files_text_together_does_not_bound_an_archive(engagement, monkeypatch):
    monkeypatch.setattr("ingest.sniff.MAX_MARKUP_BYTES", 100)  # an Office file with more text is refused
    data = archive({"a/supply.md": SUPPLY, "b/terms.txt": TERMS})
    entries = intake_archive(engagement, io.BytesIO(data), filename="two.zip", enqueue=False)
    assert [(e.path, e.error) for e in entries] == [("a/supply.md", None), ("b/terms.txt", None)]
    assert Document.objects.count() == 2
