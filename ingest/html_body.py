"""An HTML converter for MarkItDown that reads the whole document, not just its first ``<body>``.

MarkItDown's :class:`~markitdown.converters.HtmlConverter` converts only ``soup.find("body")``:
text after ``</body>`` (a signature block pasted below it) or in a second ``<body>`` (two pages
saved into one file) was silently lost. Browsers show all of it, so this converter drops what is
not document text (title, metadata, styles, scripts and their fallbacks, templates), unwraps ``<head>``
and every ``<body>`` and converts everything that is left, in document order.

Every table row is given its full set of cells first, and ``|`` in a cell is escaped
(:mod:`ingest.html_tables`): a cell merged down over the rows below moved their values one
column to the left. DOCX and PPTX tables, which MarkItDown writes as HTML first, are written by
this converter too (:mod:`ingest.office_converters`).

Text a browser would not show (``display:none``, ``visibility:hidden``, Word's ``mso-hide:all``
in a ``style`` attribute, or the ``hidden`` attribute) is converted like the rest, nothing lost;
the result says it was there (:class:`HtmlResult`), so the reviewer can be told. Hiding by a
stylesheet rule (``.x {display:none}``) is not seen.

Uses markitdown's private ``_CustomMarkdownify`` (markitdown 0.1.8 is pinned in pyproject.toml), so
the Markdown is written exactly as MarkItDown writes it, with the options passed in.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any, BinaryIO

from bs4 import BeautifulSoup, Tag
from markitdown import DocumentConverterResult, StreamInfo
from markitdown.converters import HtmlConverter
from markitdown.converters._markdownify import _CustomMarkdownify

from ingest.html_tables import escape_cell_pipes, square_tables

# Not document text. <head> itself is unwrapped, not dropped: html.parser leaves a page whose </head>
# is missing with its whole body inside the head.
_NOT_TEXT = ["title", "meta", "link", "base", "script", "style", "noscript", "template"]
_HIDING_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden|mso-hide\s*:\s*all", re.I)


class HtmlResult(DocumentConverterResult):
    """A MarkItDown result that also says whether the HTML held hidden text (see the module doc)."""

    def __init__(self, markdown: str, title: str | None, hidden_text: bool):
        super().__init__(markdown=markdown, title=title)
        self.hidden_text = hidden_text


def has_hidden_text(soup: BeautifulSoup) -> bool:
    """Whether an element hidden by its ``style`` or ``hidden`` attribute holds any words."""
    return any(element.get_text().strip() for element in soup.find_all(_hides))


def _hides(element: Tag) -> bool:
    return element.has_attr("hidden") or bool(_HIDING_STYLE.search(str(element.get("style", ""))))


class WholeHtmlConverter(HtmlConverter):
    """HTML to Markdown over the whole document (see the module doc).

    ``decode`` turns the file's bytes into text (for EPUB chapters, :func:`ingest.charsets.decode_html`);
    without it the bytes are read in the stream's charset, UTF-8 if none is given.
    """

    def __init__(self, decode: Callable[[bytes], str] | None = None):
        super().__init__()
        self._decode = decode

    def convert(
        self, file_stream: BinaryIO, stream_info: StreamInfo, **kwargs: Any
    ) -> DocumentConverterResult:
        kwargs.pop("strict", None)
        if self._decode is not None:
            soup = BeautifulSoup(self._decode(file_stream.read()), "html.parser")
        else:
            soup = BeautifulSoup(file_stream, "html.parser", from_encoding=stream_info.charset or "utf-8")
        title = soup.title.string if soup.title is not None else None
        for element in soup(_NOT_TEXT):
            element.decompose()
        for wrapper in soup(["head", "body"]):
            wrapper.unwrap()
        hidden = has_hidden_text(soup)
        square_tables(soup)
        escape_cell_pipes(soup)
        try:
            markdown = _CustomMarkdownify(**kwargs).convert_soup(soup)
        except RecursionError:  # nesting too deep for markdownify: plain text rather than nothing
            warnings.warn("HTML too deeply nested for Markdown; read as plain text.", stacklevel=2)
            markdown = soup.get_text("\n", strip=True)
        return HtmlResult(markdown.strip(), title, hidden)
