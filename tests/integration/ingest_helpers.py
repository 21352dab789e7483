"""Helpers for the ingest integration tests: waiting on documents, checking chunk invariants,
and building the bad files (encrypted, scanned, zip bombs...) the pipeline must survive."""

from __future__ import annotations

import io
import re
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from ingest.models import Chunk, Document, DocumentStage


def twice_at_once(work: Callable[[], object], timeout: float = 30) -> tuple[list, list]:
    """Run ``work`` in two threads at once (two deliveries, two uploads): (what each returned, what each raised).
    Each thread closes its own database connection."""
    from django.db import connection

    results, errors = [], []

    def run() -> None:
        try:
            results.append(work())
        except Exception as exc:  # noqa: BLE001 - the failure is what the test reports
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return results, errors


def wait_terminal(documents, timeout: float = 150, worker=None) -> list[Document]:
    """Poll until every document is ready/failed/needs OCR; fresh rows, in the given order."""
    ids = [d.pk for d in documents]
    deadline = time.monotonic() + timeout
    while True:
        rows = Document.objects.in_bulk(ids)
        if all(rows[pk].is_terminal for pk in ids):
            return [rows[pk] for pk in ids]
        if time.monotonic() > deadline:
            states = {rows[pk].original_name: (rows[pk].status, rows[pk].progress) for pk in ids}
            tail = worker.log_tail() if worker else ""
            raise AssertionError(f"documents not finished after {timeout}s: {states}\n{tail}")
        time.sleep(0.2)


def assert_consistent(document: Document) -> list[Chunk]:
    """Every invariant a ready document must hold; returns its chunks in order."""
    assert document.status == Document.Status.READY, (document.status, document.error)
    assert document.progress == 100
    stages = {s.name: s for s in document.stages.all()}
    assert set(stages) == {"convert", "chunk", "embed", "index"}
    assert all(s.status == "done" and s.progress == 100 for s in stages.values()), stages
    pages = list(document.pages.order_by("number"))
    assert len(pages) == document.page_count >= 1
    assert [p.number for p in pages] == list(range(1, len(pages) + 1))
    chunks = list(document.chunks.order_by("ordinal"))
    assert chunks, "no chunks"
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for chunk in chunks:
        assert document.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.embedding is not None and len(chunk.embedding) == 384
        assert 1 <= chunk.page_start <= chunk.page_end <= document.page_count
    return chunks


_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")


def chunks_containing(chunks, needle: str) -> list[Chunk]:
    """Chunks whose text contains ``needle`` (whitespace-insensitive; MarkItDown's backslash
    escapes such as ``cust\\_4711`` are read as the character they escape)."""
    want = " ".join(needle.split())
    return [c for c in chunks if want in " ".join(_MD_ESCAPE.sub(r"\1", c.text).split())]


def stage(document: Document, name: str) -> DocumentStage:
    return document.stages.get(name=name)


# --------------------------------------------------------------------------- bad files


def encrypted_pdf(path: Path) -> Path:
    from fpdf import FPDF
    from fpdf.enums import EncryptionMethod

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 6, "Confidential supply agreement between two parties. " * 10)
    pdf.set_encryption(owner_password="owner", user_password="reader", encryption_method=EncryptionMethod.RC4)
    pdf.output(str(path))
    return path


def scanned_pdf(path: Path, pages: int = 2) -> Path:
    """A PDF whose pages are only images (no text layer), like a scan."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    image = Image.new("L", (850, 1100), 255)
    draw = ImageDraw.Draw(image)
    for line in range(30):
        draw.text((60, 60 + 32 * line), "The Supplier shall deliver the goods on time. " * 2, fill=0)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = FPDF()
    for _ in range(pages):
        pdf.add_page()
        pdf.image(io.BytesIO(buffer.getvalue()), x=0, y=0, w=210)
    pdf.output(str(path))
    return path


def corrupt_pdf(path: Path) -> Path:
    path.write_bytes(
        b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" + bytes(range(256)) * 40
    )
    return path


def zip_bomb(path: Path, kind: str) -> Path:
    """A DOCX/XLSX whose main part inflates from a few KB to 40 MB (ratio ~1000:1)."""
    main = {"docx": "word/document.xml", "xlsx": "xl/workbook.xml"}[kind]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        archive.writestr(main, "<x>" + " " * (40 * 1024 * 1024) + "</x>")
    return path
