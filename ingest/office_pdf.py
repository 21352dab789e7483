"""An office original (DOCX, PPTX, XLSX, EPUB, HTML) laid out as a PDF by LibreOffice headless, once per
document content, so its pages can be drawn and boxed as a PDF's are (``ingest.page_view``).

``soffice --convert-to pdf`` runs in a process group of its own with a timeout; a run that outlives it is
killed with its children. Each run uses one of ``PROFILE_SLOTS`` private profiles
(``-env:UserInstallation``), held with a file lock: two runs on one profile clash, and the slots bound
both the profiles on disk and the conversions running at once on the host (each takes a core). A slot's
profile blocks macros and links to files outside the document (``registrymodifications.xcu``). The
original's bytes are written under a name with the kind's extension (LibreOffice picks its filter by
it); an HTML original loses what would make LibreOffice fetch from elsewhere (images, frames, links
to style sheets), an EPUB is laid out from its chapters joined in reading order (LibreOffice opens no
EPUB). An HTML page is opened with Writer's own HTML filter (``HTML_FILTER``): the default, Writer/Web,
lays out a blank first page and drops the page's first block (its title) from the PDF.

The PDF is kept beside the page images (``MEDIA_ROOT/var/office-pdfs``, bounded, least recently used
first out); a failure is kept there too, as a short note, so a file LibreOffice cannot convert costs one
run, not one per request.
"""

from __future__ import annotations

import fcntl
import os
import posixpath
import re
import shutil
import signal
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from xml.etree import ElementTree

import openpyxl
from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter
from openpyxl.utils.exceptions import InvalidFileException

from ingest.pdf_render import PageImageError

OFFICE_KINDS = {"docx": ".docx", "pptx": ".pptx", "xlsx": ".xlsx", "html": ".html", "epub": ".html"}
CONVERT_TIMEOUT = (
    120  # seconds one conversion may take (docs/decisions.md, ingest.office_pdf.CONVERT_TIMEOUT)
)
PROFILE_SLOTS = 2  # LibreOffice runs at once per host, each with its own profile (a core each)
CONVERT_VERSION = 3  # part of a kept PDF's name: a change in conversion makes new files
HTML_FILTER = "HTML (StarWriter)"  # LibreOffice's import filter for an HTML page (and an EPUB's chapters)
FAILED_SUFFIX = ".failed"
PRINT_MAX_WIDTH = 60  # characters a workbook's column is widened to at most; a longer value wraps
PRINT_PREP_MAX_CELLS = 200_000  # a larger workbook prints as it is (openpyxl would hold every cell)

# A profile's settings: no macros run (security level "very high", macro execution off), and no link
# to a file outside the document is followed (an image or style sheet on a server, a local file).
PROFILE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
 <prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
 <prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
 <prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc">
 <prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""


class OfficeConversionError(PageImageError):
    """LibreOffice did not make a PDF of the original (absent, failed, or out of time)."""


def soffice() -> str | None:
    """The LibreOffice program, or None where it is not installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert_to_pdf(
    data: bytes, kind: str, profiles: Path, *, timeout: float = CONVERT_TIMEOUT, program: str | None = None
) -> bytes:
    """The PDF LibreOffice makes of an original of ``kind`` (one of ``OFFICE_KINDS``), run with a profile
    under ``profiles``. Raises ``OfficeConversionError``."""
    program = program or soffice()
    if program is None:
        raise OfficeConversionError("LibreOffice is not installed here.")
    if kind not in OFFICE_KINDS:
        raise OfficeConversionError(f"LibreOffice does not lay out {kind or 'this kind of'} file here.")
    if kind == "html":
        data = offline_html(data)
    elif kind == "epub":
        data = epub_as_html(data)
    elif kind == "xlsx":
        data = xlsx_for_print(data)
    with profile_slot(profiles) as profile, tempfile.TemporaryDirectory(prefix="lo-") as work:
        source = Path(work) / f"original{OFFICE_KINDS[kind]}"
        source.write_bytes(data)
        out = Path(work) / "out"
        command = [
            program,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--invisible",
            "--nologo",
            "--norestore",
            "--nolockcheck",
            "--nodefault",
            *([f"--infilter={HTML_FILTER}"] if kind in ("html", "epub") else []),
            "--convert-to",
            "pdf",
            "--outdir",
            str(out),
            str(source),
        ]
        env = {**os.environ, "HOME": str(profile), "SAL_USE_VCLPLUGIN": "svp"}
        with subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=work,
            start_new_session=True,  # its own process group: a timeout kills soffice.bin too
        ) as proc:
            try:
                output, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                raise OfficeConversionError(
                    f"LibreOffice did not lay out the original within {timeout:.0f} seconds."
                ) from None
        pdf = out / "original.pdf"
        if proc.returncode != 0 or not pdf.is_file() or pdf.stat().st_size == 0:
            said = (output or b"").decode("utf-8", "replace").strip().splitlines()
            detail = said[-1][:200] if said else f"exit status {proc.returncode}"
            raise OfficeConversionError(f"LibreOffice could not lay out the original ({detail}).")
        return pdf.read_bytes()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


@contextmanager
def profile_slot(profiles: Path, slots: int = PROFILE_SLOTS) -> Iterator[Path]:
    """A profile folder no other run uses meanwhile: the first free slot, else a wait for one."""
    profiles.mkdir(parents=True, exist_ok=True, mode=0o750)
    handles = []
    try:
        chosen = None
        for slot in range(slots):
            handle = open(profiles / f"slot-{slot}.lock", "a+b")  # noqa: SIM115  (closed below)
            handles.append(handle)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            chosen = slot
            break
        if chosen is None:
            chosen = os.getpid() % slots
            fcntl.flock(handles[chosen], fcntl.LOCK_EX)
        profile = profiles / f"slot-{chosen}"
        settings_file = profile / "user" / "registrymodifications.xcu"
        if not settings_file.exists():
            settings_file.parent.mkdir(parents=True, exist_ok=True)
            settings_file.write_text(PROFILE_SETTINGS, encoding="utf-8")
        yield profile
    finally:
        for handle in handles:
            handle.close()  # closing releases the lock


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` across processes and threads (a document converted once at a time)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o750)
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


_FETCHING_TAGS = re.compile(
    rb"<(script|iframe|frame|object|embed|applet|audio|video)\b.*?(</\1\s*>|/>)", re.IGNORECASE | re.DOTALL
)
_FETCHING_VOID = re.compile(rb"<(img|link|base|meta|source|input|frameset)\b[^>]*>", re.IGNORECASE)
_STYLE_URLS = re.compile(rb"(@import[^;]*;?|url\s*\([^)]*\))", re.IGNORECASE)


def offline_html(data: bytes) -> bytes:
    """An HTML page without what would make LibreOffice fetch from elsewhere: scripts, frames, objects,
    images, linked style sheets and ``url(...)`` in styles. The text and its layout stay."""
    data = _FETCHING_TAGS.sub(b"", data)
    data = _FETCHING_VOID.sub(b"", data)
    return _STYLE_URLS.sub(b"", data)


def xlsx_for_print(data: bytes) -> bytes:
    """A copy of a workbook that prints every value whole: each column as wide as its longest value
    (at most ``PRINT_MAX_WIDTH`` characters; a longer value wraps) and each sheet scaled to the page's
    width. LibreOffice prints a cell cut off at its filled neighbour, and "$184,500.(" on a page cannot
    be checked against the cited row. Cells keep the values our text quotes (the cached values of
    formulas, as :mod:`ingest.xlsx` reads them); pictures and charts are left out of the copy. A
    workbook openpyxl cannot open, or of more than ``PRINT_PREP_MAX_CELLS`` cells, prints as it is."""
    try:
        probe = openpyxl.load_workbook(BytesIO(data), read_only=True)
        sizes = [(sheet.max_row, sheet.max_column) for sheet in probe.worksheets]
        probe.close()
        if any(rows is None or columns is None for rows, columns in sizes):  # no dimension written
            return data
        if sum(rows * columns for rows, columns in sizes) > PRINT_PREP_MAX_CELLS:
            return data
        book = openpyxl.load_workbook(BytesIO(data), data_only=True)
        return _fitted(book)
    except (
        InvalidFileException,
        zipfile.BadZipFile,
        KeyError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        OSError,
    ):
        return data


def _fitted(book: openpyxl.Workbook) -> bytes:
    """``book`` saved with its columns fitted to their values and its sheets to the page's width."""
    for sheet in book.worksheets:
        widths: dict[int, int] = {}
        for row in sheet.iter_rows():
            for cell in row:
                if cell.value is None:
                    continue
                longest = max((len(line) for line in str(cell.value).splitlines()), default=0)
                if isinstance(cell.value, (int, float)):
                    longest += 4  # a number prints with its format: "$184,500.00" for 184500
                if longest > PRINT_MAX_WIDTH:
                    cell.alignment = Alignment(wrap_text=True, vertical="top")
                widths[cell.column] = max(widths.get(cell.column, 0), min(longest, PRINT_MAX_WIDTH))
        for column, width in widths.items():
            dimension = sheet.column_dimensions[get_column_letter(column)]
            dimension.width = max(dimension.width or 0, width + 2)
        sheet.sheet_properties.pageSetUpPr.fitToPage = True
        sheet.page_setup.fitToWidth = 1
        sheet.page_setup.fitToHeight = 0  # as many pages tall as the rows need
    out = BytesIO()
    book.save(out)
    return out.getvalue()


def epub_as_html(data: bytes) -> bytes:
    """The chapters of an EPUB in reading order (its package's spine) as one HTML page, offline."""
    try:
        with zipfile.ZipFile(BytesIO(data)) as book:
            container = ElementTree.fromstring(book.read("META-INF/container.xml"))
            rootfile = next(e.get("full-path") or "" for e in container.iter() if e.tag.endswith("rootfile"))
            package = ElementTree.fromstring(book.read(rootfile))
            manifest = {
                e.get("id"): e.get("href")
                for e in package.iter()
                if e.tag.endswith("}item") or e.tag == "item"
            }
            spine = [
                e.get("idref") for e in package.iter() if e.tag.endswith("itemref") or e.tag == "itemref"
            ]
            base = posixpath.dirname(rootfile)
            bodies = []
            for idref in spine:
                href = manifest.get(idref)
                if not href:
                    continue
                page = book.read(posixpath.normpath(posixpath.join(base, href.split("#")[0])))
                found = re.search(rb"<body\b[^>]*>(.*)</body\s*>", page, re.IGNORECASE | re.DOTALL)
                bodies.append(found.group(1) if found else page)
    except (KeyError, StopIteration, zipfile.BadZipFile, ElementTree.ParseError, TypeError) as exc:
        raise OfficeConversionError("The EPUB's chapters cannot be read for LibreOffice.") from exc
    head = b'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
    return head + offline_html(b"\n".join(bodies)) + b"</body></html>"


def kept_or_converted(
    cache, key: str, data_of, kind: str, profiles: Path, *, timeout: float = CONVERT_TIMEOUT
) -> Path:
    """The PDF kept under ``key`` in ``cache`` (an ``ingest.disk_cache.BoundedDirCache``), else made now
    from ``data_of()`` and kept. A failure is kept as ``key + FAILED_SUFFIX`` and raised again from there
    without running LibreOffice. Raises ``OfficeConversionError``."""
    path = cache.get(key)
    if path is not None:
        return path
    failed = cache.get(key + FAILED_SUFFIX)
    if failed is not None:
        raise OfficeConversionError(_read_note(failed))
    lock = profiles / "locks" / f"{sum(key.encode()) % 64}.lock"  # a bounded set of lock files
    with file_lock(lock):
        path = cache.get(key)  # made by another process meanwhile
        if path is not None:
            return path
        try:
            pdf = convert_to_pdf(data_of(), kind, profiles, timeout=timeout)
        except OfficeConversionError as exc:
            cache.put(key + FAILED_SUFFIX, str(exc).encode())
            raise
        return cache.put(key, pdf)


def _read_note(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")[:300] or "LibreOffice could not lay out the original."
    except OSError:
        return "LibreOffice could not lay out the original."
