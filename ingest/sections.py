"""The section a character of a stored document is in: the heading path in force at its offset.

A citation's chunk records the section where the chunk's new text begins; a quote further down
the chunk may sit under a later heading. The document's headings (``ingest.chunker.section_starts``,
read as the chunker reads them) are found once per document and kept in the cache.
"""

from __future__ import annotations

import bisect

from ingest.chunker import section_starts
from ingest.memo import kept
from ingest.models import Document

SECTIONS_TTL = 30 * 24 * 3600  # seconds; the table of a document's text never changes
SECTIONS_VERSION = 1  # part of the key: a change in heading rules reads every document again


def section_at(document: Document, offset: int) -> str:
    """The heading path in force at ``offset`` of the document's text ("" before its first heading)."""
    return sections_at(document, [offset])[0]


def sections_at(document: Document, offsets: list[int]) -> list[str]:
    """``section_at`` of each offset, the document's headings read once (a page of search hits)."""
    starts = _table(document)
    out = []
    for offset in offsets:
        i = bisect.bisect_right(starts, (offset, "\uffff")) - 1
        out.append(starts[i][1] if i >= 0 else "")
    return out


def _table(document: Document) -> list[tuple[int, str]]:
    changed = int(document.updated_at.timestamp())  # converted again: read again
    key = f"sections:v{SECTIONS_VERSION}:{document.pk}:{document.sha256[:16]}:{changed}"

    def read() -> list[tuple[int, str]]:
        text = Document.objects.filter(pk=document.pk).values_list("text", flat=True).first() or ""
        return section_starts(text)

    return kept(key, read, SECTIONS_TTL)
