"""A ZIP of contracts: each file in it becomes a document of its own.

The upload page and ``manage.py ingest`` hand an archive (a ZIP that is not a DOCX, XLSX, PPTX or EPUB,
:func:`is_archive`) to :func:`intake_archive`. Before a member is read, the archive as a whole is
judged from its central directory, and refused whole (:class:`~ingest.intake.IntakeError`, nothing
stored) when it announces a decompression bomb by the very check Office files get
(:func:`ingest.sniff.check_zip_safety`: parts, total unpacked size, ratios), or holds more files than
one upload may (``settings.DATA_UPLOAD_MAX_NUMBER_FILES``, the limit of files picked at once). That
check's limit on the text of an Office file's parts together does not apply: here each member is a
document of its own, with its own size limit and its own check when it is converted.

Then each member goes through :func:`ingest.intake.intake_file` like an uploaded file (the same type
and size checks, dedup, its own status and pipeline), named by its path in the archive
("folder/contract.pdf"). A member is refused on its own, with a sentence saying why, and the others
are still taken, when its path is absolute or climbs out of the archive (``..``), when it is a
symbolic link or another special file, password-protected, damaged, or itself an archive (archives
inside archives, nested bombs among them, are never opened). Members are read into memory or a
temporary file, never written under their own path, so no path in an archive can reach the disk.
Operating-system litter (``__MACOSX/``, ``.DS_Store``, ``Thumbs.db``, ``desktop.ini``) is skipped.
"""

from __future__ import annotations

import io
import re
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import PurePath

from django.conf import settings
from django.contrib.auth.models import User

from engagements.models import Engagement
from ingest.convert_errors import ConversionError
from ingest.intake import IntakeError, IntakeResult, intake_file, open_upload, over_limit, upload_size
from ingest.sniff import ZIP_READ_ERRORS, check_zip_safety, content_kind

READ_BLOCK = 1024 * 1024
SPOOL_BYTES = 8 * 1024 * 1024  # a member is kept in memory up to this size, then in a temporary file
_LITTER_NAMES = frozenset({".ds_store", "thumbs.db", "desktop.ini"})
_DRIVE = re.compile(r"^[A-Za-z]:")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


@dataclass
class ArchiveEntry:
    """One member of an archive: taken (``result``) or refused (``error``)."""

    path: str  # its path in the archive, as written there
    result: IntakeResult | None = None
    error: IntakeError | None = None


def is_archive(source) -> bool:
    """Whether ``source`` (a path or a binary file) is a ZIP of files rather than an Office file or EPUB
    (those are ZIPs too, and are documents themselves). A file over the upload limit is not looked into:
    :func:`ingest.intake.intake_file` refuses it by its size."""
    with open_upload(source) as handle:
        head = handle.read(4)
        handle.seek(0)
        if not head.startswith(_ZIP_MAGIC) or upload_size(handle) > settings.MAX_UPLOAD_BYTES:
            return False
        data = handle.read()
        handle.seek(0)
    return content_kind(data) == "zip"


def intake_archive(
    engagement: Engagement,
    source,
    *,
    filename: str,
    uploaded_by: User | None = None,
    doc_type: str = "",
    enqueue: bool = True,
    then=None,
) -> list[ArchiveEntry]:
    """Take every file of the archive ``source`` in as a document (see the module doc); one entry per
    member, in the archive's order. Raises :class:`IntakeError` when the archive is refused whole."""
    name = PurePath(filename or getattr(source, "name", "") or "upload.zip").name
    with open_upload(source) as handle:
        size = upload_size(handle)
        if size > settings.MAX_UPLOAD_BYTES:
            raise IntakeError(
                "too_large",
                f"“{name}” {over_limit(size, settings.MAX_UPLOAD_BYTES)}. Split it into smaller archives.",
            )
        data = handle.read()
    _check_safety(name, data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except Exception:  # BadZipFile, and what a damaged directory raises (ValueError, EOFError...)
        raise IntakeError("corrupt", f"“{name}” is damaged: its ZIP structure cannot be read.") from None
    with archive:
        members = [info for info in infos if not _folder_or_litter(info)]
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        if len(members) > limit:
            raise IntakeError(
                "too_many_files",
                f"“{name}” holds {len(members):,} files; one upload takes at most {limit:,}. "
                "Split it into smaller archives.",
            )
        if not members:
            raise IntakeError("empty", f"“{name}” holds no files.")
        return [_take(archive, info, engagement, uploaded_by, doc_type, enqueue, then) for info in members]


def _check_safety(name: str, data: bytes) -> None:
    """The decompression-bomb check of Office files, on the archive's directory (nothing is inflated)."""
    try:
        check_zip_safety(data)
    except ConversionError as exc:
        if exc.code == "zip_bomb":
            raise IntakeError(
                "zip_bomb",
                f"“{name}” expands to far more data than its size suggests (a possible decompression bomb), "
                "so it was not opened.",
            ) from None
        if exc.code == "corrupt":
            raise IntakeError("corrupt", f"“{name}” is damaged: its ZIP structure cannot be read.") from None
        # too_large, the text of an Office file's parts together, judged once every bomb rule has passed:
        # the members here are documents of their own, each with its own limits


def _take(archive, info, engagement, uploaded_by, doc_type, enqueue, then) -> ArchiveEntry:
    """One member through :func:`intake_file`, or the reason it is refused."""
    try:
        path = member_path(info)
        if info.file_size > settings.MAX_UPLOAD_BYTES:
            raise IntakeError(
                "too_large",
                f"“{path}” {over_limit(info.file_size, settings.MAX_UPLOAD_BYTES)}.",
            )
        with _extract(archive, info, path) as body:
            folder, _, base = path.rpartition("/")
            result = intake_file(
                engagement,
                body,
                filename=base,
                folder=folder,
                uploaded_by=uploaded_by,
                doc_type=doc_type,
                enqueue=enqueue,
                then=then,
            )
    except IntakeError as exc:
        return ArchiveEntry(_printable(info.filename), error=exc)
    return ArchiveEntry(_printable(info.filename), result=result)


def member_path(info: zipfile.ZipInfo) -> str:
    """The member's path inside the archive ("folder/contract.pdf"), or :class:`IntakeError` when it is
    not a plain file there: an absolute path, one that climbs out (``..``), a link, a special file or a
    password-protected member."""
    raw = info.filename
    shown = _printable(raw)
    path = raw.replace("\\", "/")  # written by some Windows tools, against the ZIP format
    if path.startswith("/") or _DRIVE.match(path):
        raise IntakeError(
            "unsafe_path",
            f"“{shown}” has an absolute path; only files inside the archive's folders are taken.",
        )
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise IntakeError(
            "unsafe_path", f"“{shown}” points outside the archive (“..” in its path), so it was not taken."
        )
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise IntakeError("link", f"“{shown}” is a symbolic link; links in an archive are not followed.")
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
        raise IntakeError("unsafe_path", f"“{shown}” is not a regular file (a device or a pipe).")
    if info.flag_bits & 0x1:
        raise IntakeError(
            "encrypted", f"“{shown}” is password-protected in the archive. Archive it without a password."
        )
    return _printable("/".join(parts))


def _extract(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str):
    """The member's bytes in a temporary file, at most its declared size (zipfile stops there and checks
    the CRC). A member that is itself a ZIP archive (not an Office file) is refused unread."""
    body = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    try:
        with archive.open(info) as member:
            left = info.file_size
            while left > 0 and (block := member.read(min(READ_BLOCK, left))):
                body.write(block)
                left -= len(block)
        if _plain_zip(body):
            raise IntakeError(
                "nested_archive",
                f"“{path}” is an archive inside the archive; archives inside archives are not opened. "
                "Upload it on its own.",
            )
    except ZIP_READ_ERRORS:
        body.close()
        raise IntakeError("corrupt", f"“{path}” is damaged in the archive and could not be read.") from None
    except BaseException:
        body.close()
        raise
    body.seek(0)
    return body


def _plain_zip(body) -> bool:
    """Whether ``body`` is a ZIP archive that no Office file or EPUB is (its whole directory says: the
    parts of an Office file may come in any order)."""
    body.seek(0)
    head = body.read(4)
    body.seek(0)
    return head.startswith(_ZIP_MAGIC) and content_kind(body.read()) == "zip"


def _folder_or_litter(info: zipfile.ZipInfo) -> bool:
    """A folder entry, or a file an operating system adds to archives (Finder's ``__MACOSX/`` forks...)."""
    if info.is_dir() or stat.S_ISDIR(info.external_attr >> 16):
        return True
    path = info.filename.replace("\\", "/")
    base = path.rsplit("/", 1)[-1]
    return path.startswith("__MACOSX/") or base.startswith("._") or base.lower() in _LITTER_NAMES


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)
