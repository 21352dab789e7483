"""What a file really is (from its bytes, not its name) and whether a ZIP is safe to open.

Uploads are named by people: a ``.pdf`` may be a Word file, a ``.docx`` a spreadsheet. The
kind is read from magic bytes (``%PDF-``; a ZIP's member names: ``word/``, ``xl/``,
``ppt/``, an EPUB ``mimetype``; the OLE header of legacy Office files, and in it the
``EncryptedPackage`` of a password-protected DOCX/XLSX/PPTX) and compared with the extension.
Office files and EPUBs are ZIP archives, so before anything extracts them the central directory
is checked for decompression bombs.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from pathlib import PurePath

from ingest.convert_errors import ConversionError

KINDS = ("pdf", "docx", "xlsx", "pptx", "epub", "html", "markdown", "text")

EXTENSION_KINDS = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".pptx": "pptx",
    ".epub": "epub",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}
TEXT_KINDS = frozenset({"html", "markdown", "text"})
ZIP_KINDS = frozenset({"docx", "xlsx", "pptx", "epub"})

# Decompression-bomb limits, checked on the ZIP directory before anything is extracted.
MAX_UNZIPPED_BYTES = 200 * 1024 * 1024
MAX_RATIO = 100  # uncompressed / compressed: of a parsed member, and of the parsed members together
MIN_RATIO_CHECK_BYTES = 1024 * 1024  # unpacked bytes under which no ratio is judged
# Parts: each costs its directory entry and a converter's handling, whatever its size; a 5,000-slide deck
# has 10,036 (docs/decisions.md, ingest.sniff.MAX_MEMBERS).
MAX_MEMBERS = 50_000
_DIRECTORY_ENTRY_BYTES = 300  # a central directory entry is 46 bytes and its name: room for long names
# Text and markup a converter parses (every member but images and embedded objects), unpacked. Parsing
# costs tens of bytes of memory per byte, so a file near MAX_UNZIPPED_BYTES would need gigabytes; 50 MB
# is several thousand pages (docs/decisions.md, ingest.sniff.MAX_MARKUP_BYTES).
MAX_MARKUP_BYTES = 50 * 1024 * 1024
# What reading a damaged archive or member raises: zipfile's own errors, zlib.error for a damaged
# deflate stream, EOFError for a cut one, NotImplementedError for a bad "version needed", ...
ZIP_READ_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, ValueError)
# Members no converter parses (images, embedded objects): exempt from the ratio, not from the total.
_UNPARSED_FOLDERS = (
    "word/media/",
    "xl/media/",
    "ppt/media/",
    "word/embeddings/",
    "xl/embeddings/",
    "ppt/embeddings/",
)
_IMAGE_SUFFIXES = (
    ".bmp",
    ".dib",
    ".tif",
    ".tiff",
    ".emf",
    ".wmf",
    ".emz",
    ".wmz",
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".webp",
)

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_PACKAGE = "EncryptedPackage\0".encode("utf-16-le")  # a compound-file directory entry's name
_DIRECTORY_ENTRY = 128  # bytes; entries are aligned to it, the name's byte length (with NUL) at +64
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S)
_LOCAL_HEADER = re.compile(rb"PK\x03\x04")
# Control bytes found in real text: tab, line feed, vertical tab (Word's manual line break),
# form feed, carriage return, ^Z (the end of old DOS files) and escape.
_TEXT_CONTROLS = frozenset({9, 10, 11, 12, 13, 26, 27})

_DESCRIPTIONS = {
    "pdf": "a PDF",
    "docx": "a Word document",
    "xlsx": "an Excel workbook",
    "pptx": "a PowerPoint presentation",
    "epub": "an EPUB book",
    "html": "a web page",
    "markdown": "a Markdown file",
    "text": "a text file",
    "zip": "a ZIP archive",
    "ole": "a legacy Office (.doc/.xls/.ppt) file",
    "binary": "a binary file",
}


def sniff_kind(data_head: bytes, filename: str) -> str:
    """The kind of the file (one of :data:`KINDS`), checked against its extension.

    Pass the whole file when it is at hand (ZIP members are then read from the central
    directory); with only the first bytes, the names of the first local ZIP headers are
    used. Raises ``type_mismatch`` when the content contradicts the extension,
    ``encrypted`` for a password-protected DOCX/XLSX/PPTX (whatever its name; pass the whole
    file, the compound file's directory may lie anywhere in it) and ``unsupported`` for
    anything that is none of the kinds.
    """
    ext = PurePath(filename or "").suffix.lower()
    claimed = EXTENSION_KINDS.get(ext)
    content = content_kind(data_head)

    if content == "ole" and is_encrypted_ooxml(data_head):
        raise ConversionError(
            "encrypted",
            "This Office file is password-protected. "
            "Remove the password (or save an unlocked copy) and upload it again.",
        )
    if content in ("ole", "zip", "binary"):
        if claimed is not None:
            raise _mismatch(filename, claimed, content)
        what = _DESCRIPTIONS[content]  # "a legacy Office ... file": capital first letter, the rest as written
        raise ConversionError(
            "unsupported",
            f"{what[:1].upper()}{what[1:]} cannot be reviewed. Upload PDF, Word (.docx), Excel (.xlsx), "
            "PowerPoint (.pptx), EPUB, HTML, Markdown or text.",
        )
    if content == "textual":
        if claimed in TEXT_KINDS:
            return claimed
        if claimed is not None:
            raise _mismatch(filename, claimed, "text")
        if ext and ext not in ("", ".csv", ".log"):
            raise ConversionError(
                "unsupported",
                f"Files of type {ext} are not supported. "
                "Upload PDF, Word, Excel, PowerPoint, EPUB, HTML, Markdown or text.",
            )
        return "html" if _HTML_START.match(data_head[:4096]) else "text"
    # a binary document format
    if claimed is not None and claimed != content:
        raise _mismatch(filename, claimed, content)
    return content


def content_kind(data: bytes) -> str:
    """What the bytes are: a kind from :data:`KINDS` for binary formats, ``"textual"`` for
    text of any flavour, or ``"zip"``/``"ole"``/``"binary"`` for what we cannot review."""
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _zip_kind(data)  # first: a PDF stored or deflated in a ZIP may show "%PDF-" in its first KB
    if data.startswith(b"%PDF-") or (b"%PDF-" in data[:1024] and not _looks_textual(data[:8192])):
        return "pdf"  # readers accept a header up to 1 KB in; in a text file it is only a mention
    if data.startswith(OLE_MAGIC):
        return "ole"
    if _looks_textual(data[:8192]):
        return "textual"
    return "binary"


def is_encrypted_ooxml(data: bytes) -> bool:
    """True for a password-protected DOCX/XLSX/PPTX: Office writes it as a compound (OLE) file
    whose directory holds an ``EncryptedPackage`` stream (the name in UTF-16LE, in a 128-byte
    aligned directory entry that records the name's length, so text that merely mentions the
    word does not count). Legacy .doc/.xls/.ppt files have no such stream."""
    if not data.startswith(OLE_MAGIC):
        return False
    at = data.find(_ENCRYPTED_PACKAGE)
    while at >= 0:
        if at % _DIRECTORY_ENTRY == 0 and data[at + 64 : at + 66] == len(_ENCRYPTED_PACKAGE).to_bytes(
            2, "little"
        ):
            return True
        at = data.find(_ENCRYPTED_PACKAGE, at + 1)
    return False


def _zip_kind(data: bytes) -> str:
    """The kind a ZIP holds, from its member names and at most 64 bytes of an EPUB's ``mimetype``
    (never a whole member: that would inflate a decompression bomb before ``check_zip_safety`` sees it).
    A damaged archive is judged by the names in its first local headers; conversion then calls it
    corrupt."""
    names: list[str]
    if _too_many_parts(data):  # not worth reading its directory: check_zip_safety refuses it
        names = _local_names(data[:65536])
        return next(
            (kind for prefix, kind in _ZIP_PREFIXES if any(n.startswith(prefix) for n in names)), "zip"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            if "mimetype" in names:
                try:
                    with archive.open("mimetype") as member:
                        if member.read(64).strip() == b"application/epub+zip":
                            return "epub"
                except Exception:  # a damaged member: zlib.error, EOFError, NotImplementedError, ...
                    pass
    except Exception:  # BadZipFile, but also ValueError, EOFError, ... from a damaged directory
        # Only a head: EPUB puts "mimetypeapplication/epub+zip" first, stored; others
        # reveal themselves through the names of the first local headers.
        if b"mimetypeapplication/epub+zip" in data[:200]:
            return "epub"
        names = _local_names(data[:65536])
    for prefix, kind in _ZIP_PREFIXES:
        if any(name.startswith(prefix) for name in names):
            return kind
    if any(name.startswith("META-INF/container.xml") for name in names):
        return "epub"
    return "zip"


_ZIP_PREFIXES = (("word/", "docx"), ("xl/", "xlsx"), ("ppt/", "pptx"))


def _local_names(head: bytes) -> list[str]:
    """Member names from the local file headers found in the first bytes of a ZIP."""
    names = []
    for m in _LOCAL_HEADER.finditer(head):
        at = m.start()
        if at + 30 > len(head):
            break
        (length,) = struct.unpack_from("<H", head, at + 26)
        names.append(head[at + 30 : at + 30 + length].decode("utf-8", "replace"))
    return names


def _looks_textual(sample: bytes) -> bool:
    if not sample:
        return True
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True  # UTF-16 with a byte-order mark
    if bare_utf16(sample):
        return True
    if b"\x00" in sample:
        return False
    control = sum(1 for b in sample if b < 32 and b not in _TEXT_CONTROLS)
    return control <= len(sample) // 100


def bare_utf16(sample: bytes) -> str | None:
    """``"utf-16-le"`` or ``"utf-16-be"`` for UTF-16 text saved without a byte-order mark (as some
    export tools write it), else None. Text in a Latin script then has a NUL in every other byte:
    the high byte of each character, odd bytes for little-endian, even ones for big-endian, while
    the other half holds almost none. The decoded sample must also read as text."""
    if len(sample) < 4:
        return None
    even_nuls = sample[0::2].count(0) / len(sample[0::2])
    odd_nuls = sample[1::2].count(0) / len(sample[1::2])
    if odd_nuls >= 0.4 and even_nuls <= 0.01:
        codec = "utf-16-le"
    elif even_nuls >= 0.4 and odd_nuls <= 0.01:
        codec = "utf-16-be"
    else:
        return None
    text = sample[: len(sample) // 2 * 2].decode(codec, errors="replace")
    control = sum(1 for ch in text if ord(ch) < 32 and ord(ch) not in _TEXT_CONTROLS)
    return codec if control <= len(text) // 100 else None


def _mismatch(filename: str, claimed: str, actual: str) -> ConversionError:
    name = PurePath(filename or "file").name
    return ConversionError(
        "type_mismatch",
        f"The file “{name}” is named like {_DESCRIPTIONS[claimed]}, but its content is "
        f"{_DESCRIPTIONS.get(actual, 'something else')}. Rename it or upload the right file.",
    )


def check_zip_safety(data: bytes) -> None:
    """Refuse a ZIP (DOCX/XLSX/PPTX/EPUB) whose directory announces a decompression bomb.

    Bombs are judged by what the file expands to, and how far: reads only the central directory, and raises
    ``zip_bomb`` for a total uncompressed size over :data:`MAX_UNZIPPED_BYTES` (the real bound on what
    opening the file can cost: zipfile never inflates a member past the size the directory declares), or a
    member that a converter parses (XML, HTML, text) over 1 MiB and compressed more than :data:`MAX_RATIO`
    times, or such members together over 1 MiB and compressed more than that (many small parts, each under
    the size its own ratio is judged at). The count of parts alone is capped much higher, at
    :data:`MAX_MEMBERS` (a deck of thousands of slides has two parts a slide), for the archive of countless
    tiny parts; it is read from the end of the archive before the directory is. Images and embedded objects
    (``*/media/``, ``*/embeddings/``, image file names) are left out of the ratio rules: an uncompressed BMP,
    TIFF or EMF of a white page deflates about 1000:1 in a valid document, and nothing parses its bytes; it
    still counts towards the total. Raises ``too_large`` when the members a converter parses add up to more
    than :data:`MAX_MARKUP_BYTES`. An unreadable directory raises ``corrupt``.
    """
    bomb = ConversionError(
        "zip_bomb",
        "This file expands to far more data than its size suggests (a possible decompression bomb), "
        "so it was not opened.",
    )
    if _too_many_parts(data):
        raise bomb
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except Exception as exc:  # BadZipFile, NotImplementedError (a bad "version needed"), EOFError, ...
        raise ConversionError("corrupt", "This file is damaged: its ZIP structure cannot be read.") from exc
    if len(infos) > MAX_MEMBERS:
        raise bomb
    total = markup = packed = 0
    for info in infos:
        total += info.file_size
        if total > MAX_UNZIPPED_BYTES:
            raise bomb
        if _unparsed_member(info.filename):
            continue
        markup += info.file_size
        packed += info.compress_size
        if info.file_size > MIN_RATIO_CHECK_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise bomb
    if markup > MIN_RATIO_CHECK_BYTES and markup > MAX_RATIO * max(packed, 1):
        raise bomb
    if markup > MAX_MARKUP_BYTES:
        raise ConversionError(
            "too_large",
            f"This file holds {markup / 1048576:.0f} MB of text and markup once unpacked; the limit is "
            f"{MAX_MARKUP_BYTES / 1048576:.0f} MB (several thousand pages). Split it into parts.",
        )


def _too_many_parts(data: bytes) -> bool:
    """Whether the end of the archive announces more than :data:`MAX_MEMBERS` parts, or a directory longer
    than so many would take."""
    announced = _announced_directory(data)
    return announced is not None and (
        announced[0] > MAX_MEMBERS or announced[1] > MAX_MEMBERS * _DIRECTORY_ENTRY_BYTES
    )


def _announced_directory(data: bytes) -> tuple[int, int] | None:
    """(entries, central directory bytes) as the end-of-central-directory record states them (its ZIP64
    record's, for an archive that needs one), read without parsing the directory; None when there is no
    record to read (zipfile then says why)."""
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 0xFFFF))  # the record, then a comment up to 64 KiB
    if at < 0 or len(data) < at + 22:
        return None
    entries, size = struct.unpack_from("<HI", data, at + 10)
    if entries != 0xFFFF and size != 0xFFFFFFFF:
        return entries, size
    locator = at - 20  # ZIP64: a locator just before the record points at the ZIP64 record
    if locator < 0 or data[locator : locator + 4] != b"PK\x06\x07":
        return None
    (record,) = struct.unpack_from("<Q", data, locator + 8)
    if data[record : record + 4] != b"PK\x06\x06" or len(data) < record + 48:
        return None
    return struct.unpack_from("<QQ", data, record + 32)


def _unparsed_member(name: str) -> bool:
    """An image or embedded object: converters copy or skip it, never parse it as markup."""
    return name.startswith(_UNPARSED_FOLDERS) or name.lower().endswith(_IMAGE_SUFFIXES)
