"""A not_found's closest sentence (``Extraction.closest``): the sentence the engine judged best or, for
an engine that names none (Claude's ``report_not_found``), the clause finder's best sentence among the
chunks it reads and those retrieval found. It is located in the source by the citation verifier, shown to
the reviewer with the not_found, and never counted as an answer: a wrong not_found still points at the
clause (docs/decisions.md, extraction.closest)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from extraction.catalog import ClauseType
from extraction.docview import DocumentView
from extraction.finder.runtime import assess
from extraction.models import Extraction
from extraction.outcome import NOT_FOUND, ClauseOutcome
from extraction.verify import verify_extraction
from ingest.pages import page_of


def locate(doc: DocumentView, chunk_id: str, start: int, text: str) -> dict | None:
    """The sentence ``text`` at ``start`` (in chunk ``chunk_id``) as the verifier locates a citation:
    {chunk_id, page, start, end, quote}; None when it cannot be located (it is then not shown)."""
    cited = {"chunk_id": chunk_id, "page": page_of(start, doc.pages), "quote": text}
    verified = verify_extraction(
        [cited],
        doc.by_id,
        doc.pages,
        text,
        document_text=doc.text,
        offsets=[start],
        furniture=doc.furniture,
    )
    if not verified.ok or len(verified.citations) != 1:
        return None
    v = verified.citations[0]
    return {"chunk_id": v.chunk_id, "page": v.page, "start": v.start, "end": v.end, "quote": v.quote}


def finder_closest(doc: DocumentView, clause: ClauseType, seen: Sequence[str] = ()) -> dict | None:
    """The clause finder's most likely sentence for ``clause`` (``seen``: retrieval's chunk ids, read
    too), located; None when the finder does not know the type or reads no sentence."""
    assessment = assess(doc, clause, seen)
    if assessment is None or not assessment.sentences:
        return None
    (start, end), _ = max(assessment.sentences.items(), key=lambda kv: kv[1])
    chunk = next((c for c in doc.chunks if c.char_start <= start and end <= c.char_end), None)
    return locate(doc, chunk.chunk_id, start, doc.text[start:end]) if chunk is not None else None


def with_closest(
    outcome: ClauseOutcome, doc: DocumentView, clause: ClauseType, seen: Sequence[str] = ()
) -> ClauseOutcome:
    """``outcome`` with the finder's closest sentence when it is a not_found that names none."""
    if outcome.status != NOT_FOUND or outcome.detail.get("closest"):
        return outcome
    closest = finder_closest(doc, clause, seen)
    return outcome if closest is None else replace(outcome, detail={**outcome.detail, "closest": closest})


@dataclass(frozen=True)
class ClosestPassage:
    """The sentence the engine judged best for a not_found (``Extraction.closest``): where, and what."""

    page: int
    start: int
    end: int
    quote: str

    @classmethod
    def of(cls, extraction: Extraction) -> ClosestPassage | None:
        saved = extraction.closest or {}
        try:
            passage = cls(int(saved["page"]), int(saved["start"]), int(saved["end"]), str(saved["quote"]))
        except (KeyError, TypeError, ValueError):
            return None
        return (
            passage
            if extraction.status == Extraction.Status.NOT_FOUND and passage.end > passage.start
            else None
        )
