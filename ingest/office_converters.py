"""MarkItDown's DOCX, PPTX and EPUB converters, with their HTML written by our HTML converter.

Each hands HTML to an HTML converter it holds as ``_html_converter``: DOCX all of the document
(mammoth's output), PPTX its tables, EPUB each chapter. That was markitdown's own HTML converter,
which lets a merged-down table cell shift the row below it and a ``|`` in a cell split it in two;
these subclasses hand the HTML to :class:`ingest.html_body.WholeHtmlConverter` instead (see
:mod:`ingest.html_tables`).

EPUB chapters are converted one by one in spine order, as markitdown does. Its HTML converter
read only each chapter's first ``<body>``, and took the bytes as UTF-8 unless they failed to
decode, then guessed: a UTF-8 chapter with one stray cp1252 byte was read as cp1252 whole, every
"ł" and "€" garbled. :class:`EpubChaptersConverter` reads each chapter whole, decoded as an HTML
file is (the ``decode`` it is given, :func:`ingest.charsets.decode_html`: the encoding the chapter
declares, or UTF-8 with a few stray bytes replaced).

Sets markitdown's ``_html_converter`` attribute (markitdown 0.1.8 is pinned in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Callable

from markitdown.converters import DocxConverter, EpubConverter, PptxConverter

from ingest.html_body import WholeHtmlConverter


class DocxTablesConverter(DocxConverter):
    """DOCX to Markdown, mammoth's HTML written by :class:`WholeHtmlConverter`."""

    def __init__(self):
        super().__init__()
        self._html_converter = WholeHtmlConverter()


class PptxTablesConverter(PptxConverter):
    """PPTX to Markdown, its tables written by :class:`WholeHtmlConverter`."""

    def __init__(self):
        super().__init__()
        self._html_converter = WholeHtmlConverter()


class EpubChaptersConverter(EpubConverter):
    """EPUB to Markdown, each chapter read whole by :class:`WholeHtmlConverter` after ``decode``."""

    def __init__(self, decode: Callable[[bytes], str]):
        super().__init__()
        self._html_converter = WholeHtmlConverter(decode=decode)
