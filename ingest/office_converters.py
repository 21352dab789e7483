"""MarkItDown's DOCX and PPTX converters, with their intermediate HTML written by our HTML converter.

Both write (part of) a document as HTML and hand it to an HTML converter they hold as
``_html_converter``: DOCX all of it (mammoth's output), PPTX its tables. Those HTML tables went
through markitdown's own HTML converter, which lets a merged-down cell shift the row below it
and a ``|`` in a cell split it in two; these subclasses hand the HTML to
:class:`ingest.html_body.WholeHtmlConverter` instead (see :mod:`ingest.html_tables`).

Sets markitdown's ``_html_converter`` attribute (markitdown 0.1.8 is pinned in pyproject.toml).
"""
from __future__ import annotations

from markitdown.converters import DocxConverter, PptxConverter

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
