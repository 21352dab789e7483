"""Why a file could not be converted, in a form both code and people can read.

Kept apart from :mod:`ingest.convert` so the format-specific modules (PDF, sniffing, zip
checks) can raise it without importing the whole conversion pipeline.
"""

from __future__ import annotations

CODES = frozenset(
    {
        "empty",
        "corrupt",
        "encrypted",
        "needs_ocr",  # a scan, and no OCR on this server (ingest.ocr)
        "ocr_language",  # a scan, and an OCR language asked for is not installed
        "ocr_failed",  # OCR failed on a page, or took too long on it
        "too_large",
        "type_mismatch",
        "zip_bomb",
        "unsupported",
    }
)


class ConversionError(Exception):
    """A file that cannot be turned into reviewable text.

    ``code`` is one of :data:`CODES` (stable, for programs: the document's status and
    error_code); ``message`` is one plain sentence or two for the person who uploaded it.
    """

    def __init__(self, code: str, message: str):
        if code not in CODES:
            raise ValueError(f"unknown conversion error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"ConversionError({self.code!r}, {self.message!r})"
