"""What the ``ingest`` and ``bulk_ingest`` commands share: finding files, waiting for
documents (on a worker or in this process) with a progress line, and dumping chunks.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from io import TextIOBase
from pathlib import Path
from typing import TextIO

from config.celery import app
from ingest.models import Chunk, Document
from ingest.sniff import EXTENSION_KINDS

POLL_S = 0.5
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")  # two letters at least: "C:" is a Windows drive


def find_files(paths: Iterable[str | Path], *, all_files: bool = False) -> list[Path]:
    """Files named, plus the files under named folders (sorted; hidden files skipped).

    Under a folder only known document extensions are taken unless ``all_files``.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if (
                    child.is_file()
                    and not any(part.startswith(".") for part in child.relative_to(path).parts)
                    and (all_files or child.suffix.lower() in EXTENSION_KINDS)
                ):
                    found.append(child)
        else:
            found.append(path)
    return found


def looks_like_url(arg: str) -> bool:
    """Whether a command-line argument is a URL ("https://...", also "file:..." or "javascript:...", which
    intake then refuses in words) rather than a path: it names a scheme and no file of that name exists."""
    return bool(_SCHEME.match(arg)) and not Path(arg).exists()


def workers_alive(timeout: float = 1.0) -> bool:
    """True when at least one Celery worker answers a ping."""
    try:
        return bool(app.control.ping(timeout=timeout))
    except Exception:  # broker down: nobody will run the tasks
        return False


def describe(document: Document) -> str:
    """One line about a document's state: ``ready · 12 pages · 48 chunks`` or the failure."""
    if document.status == Document.Status.READY:
        estimated = " (estimated)" if document.pages_estimated else ""
        return f"ready · {document.page_count} pages{estimated} · {document.chunks.count()} chunks"
    if document.status in (Document.Status.FAILED, Document.Status.NEEDS_OCR):
        return f"{document.get_status_display()} ({document.error_code}): {document.error}"
    return f"{document.status} {document.progress}%"


class ProgressLine:
    """A status line rewritten in place on a terminal; in a log (not a terminal), a line
    whenever the text before its last word changes (a new stage), or every few seconds."""

    LOG_EVERY_S = 5.0

    def __init__(self, out: TextIO | TextIOBase | None = None):  # TextIOBase: a command's OutputWrapper
        self.out = out or sys.stdout
        self.tty = hasattr(self.out, "isatty") and self.out.isatty()
        self._last = ""
        self._logged_at = 0.0

    def show(self, text: str) -> None:
        if text == self._last:
            return
        same_step = text.rsplit(" ", 1)[0] == self._last.rsplit(" ", 1)[0]
        self._last = text
        if self.tty:
            self.out.write("\r\033[K" + text)
        elif not same_step or time.monotonic() - self._logged_at >= self.LOG_EVERY_S:
            self._logged_at = time.monotonic()
            self.out.write(text + "\n")
        self.out.flush()

    def done(self, text: str) -> None:
        if self.tty:
            self.out.write("\r\033[K")
        self.out.write(text + "\n")
        self.out.flush()
        self._last = ""


def wait_for(
    document_ids: list[int],
    *,
    on_change: Callable[[list[Document]], None] | None = None,
    timeout: float | None = None,
) -> list[Document]:
    """Poll until every document is ready/failed/needs OCR; returns the final rows."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        rows = list(Document.objects.filter(pk__in=document_ids).order_by("pk"))
        if on_change:
            on_change(rows)
        if all(row.is_terminal for row in rows):
            return rows
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"documents not finished after {timeout:.0f}s")
        time.sleep(POLL_S)


def dump_chunks(documents: Iterable[Document], out: TextIO) -> int:
    """Write one JSON line per chunk (``doc`` = file stem) in document and reading order."""
    count = 0
    for document in documents:
        stem = Path(document.original_name).stem
        rows = (
            Chunk.objects.filter(document=document)
            .order_by("ordinal")
            .values_list(
                "chunk_id",
                "ordinal",
                "page_start",
                "page_end",
                "char_start",
                "char_end",
                "paragraph",
                "section",
                "text",
            )
        )
        for (
            chunk_id,
            ordinal,
            page_start,
            page_end,
            char_start,
            char_end,
            paragraph,
            section,
            text,
        ) in rows.iterator():
            out.write(
                json.dumps(
                    {
                        "doc": stem,
                        "chunk_id": chunk_id,
                        "ordinal": ordinal,
                        "page_start": page_start,
                        "page_end": page_end,
                        "char_start": char_start,
                        "char_end": char_end,
                        "paragraph": paragraph,
                        "section": section,
                        "text": text,
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
            count += 1
    return count
