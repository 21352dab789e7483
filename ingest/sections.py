"""The section a character of a stored document is in: the heading path in force at its offset.

A citation's chunk records the section where the chunk's new text begins; a quote further down
the chunk may sit under a later heading. The document's headings (``ingest.chunker.section_starts``,
read as the chunker reads them) are found once per document and kept in the cache.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence

from ingest.chunker import section_starts
from ingest.memo import kept, kept_many
from ingest.models import Document

SECTIONS_TTL = 30 * 24 * 3600  # seconds; the table of a document's text never changes
SECTIONS_VERSION = 1  # part of the key: a change in heading rules reads every document again


def section_at(document: Document, offset: int) -> str:
    """The heading path in force at ``offset`` of the document's text ("" before its first heading)."""
    return _in(kept(_key(document), _reader(document), SECTIONS_TTL), offset)


def sections_at(offsets: Mapping[Document, Sequence[int]]) -> dict[int, dict[int, str]]:
    """``section_at`` of each offset of each document (document id -> offset -> heading path); every
    document's headings read in one round trip to the cache (a page of search hits)."""
    tables = kept_many({_key(d): _reader(d) for d in offsets}, SECTIONS_TTL)
    return {d.pk: {offset: _in(tables[_key(d)], offset) for offset in at} for d, at in offsets.items()}


def _in(starts: list[tuple[int, str]], offset: int) -> str:
    i = bisect.bisect_right(starts, (offset, "\uffff")) - 1
    return starts[i][1] if i >= 0 else ""


def _key(document: Document) -> str:
    changed = int(document.updated_at.timestamp())  # converted again: read again
    return f"sections:v{SECTIONS_VERSION}:{document.pk}:{document.sha256[:16]}:{changed}"


def _reader(document: Document) -> Callable[[], list[tuple[int, str]]]:
    def read() -> list[tuple[int, str]]:
        text = Document.objects.filter(pk=document.pk).values_list("text", flat=True).first() or ""
        return section_starts(text)

    return read
