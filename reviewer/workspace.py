"""What the review workspace shows: the source page(s) with the cited span, the clause's
state and history. Loads a bounded number of rows (no N+1) and hands plain data to
``reviewer.source`` for the escaping and highlighting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection
from django.http import Http404

from extraction.closest import ClosestPassage
from extraction.evaluation.stratify import answer_is_absent
from extraction.models import Citation, Extraction
from extraction.verify import find_passage
from ingest.memo import kept
from ingest.models import Document
from ingest.ocr import LOW_CONFIDENCE
from ingest.page_view import KEEP_SECONDS, document_version, has_page_images, page_labels
from ingest.pages import PageSpan, page_of
from ingest.sections import section_at
from reviewer import rows as rows_module
from reviewer import source
from reviewer.decisions import ClauseState, derive_state
from reviewer.models import Review
from reviewer.states import CORRECT


@dataclass
class ShownPage:
    number: int
    html: str
    estimated: bool
    label: str = ""  # the page label the PDF prints ("iii"), when it is not the physical number
    start: int = 0  # absolute offsets into Document.text
    end: int = 0
    ocr_confidence: float | None = None  # a page read by OCR: its mean word confidence (0-100)

    @property
    def ocr_low(self) -> bool:
        """Read by OCR with a low confidence: the reviewer is told to check its words on the page image."""
        return self.ocr_confidence is not None and self.ocr_confidence < LOW_CONFIDENCE


@dataclass(frozen=True)
class CorrectionPassage:
    """Where the clause's corrected text (its latest correction) stands in the document."""

    page: int
    start: int
    end: int


@dataclass
class Workspace:
    document: Document
    extraction: Extraction | None = None
    citations: list = field(default_factory=list)  # Citation or reviewer.rows.CitationRow
    citation: Citation | rows_module.CitationRow | None = None
    pages: list[ShownPage] = field(default_factory=list)
    before: dict | None = None  # {"number", "text"} tail of the page before
    after: dict | None = None  # {"number", "text"} head of the page after
    page_number: int = 0
    state: ClauseState | None = None
    history: list = field(default_factory=list)  # Review or reviewer.rows.ReviewRow, newest first
    missing_page: bool = False
    page_images: bool = False  # a PDF original: its pages can be shown as drawn, with glyph boxes
    box_citations: list[int] = field(default_factory=list)  # citations whose boxes the page images show
    citation_section: str = ""  # the heading path the cited quote itself is under
    citation_label: str = ""  # the printed label of the cited page, when the PDF has one
    closest: ClosestPassage | None = None  # a not_found's nearest miss, shown on its page
    correction: CorrectionPassage | None = None  # where the corrected text stands, when it is found there
    correction_unlocated: bool = False  # the clause is corrected and its text is not in the document as typed

    @property
    def citation_ocr_low(self) -> list[ShownPage]:
        """The pages shown for the citation that OCR read with a low confidence (flagged by the clause)."""
        return [p for p in self.pages if p.ocr_low] if self.citation is not None else []

    @property
    def citation_index(self) -> int:
        return self.citations.index(self.citation) if self.citation in self.citations else -1

    @property
    def prev_citation(self) -> Citation | None:
        i = self.citation_index
        return self.citations[i - 1] if i > 0 else None

    @property
    def next_citation(self) -> Citation | None:
        i = self.citation_index
        return self.citations[i + 1] if 0 <= i < len(self.citations) - 1 else None

    @property
    def prev_page(self) -> int | None:
        first = self.pages[0].number if self.pages else self.page_number
        return first - 1 if first > 1 else None

    @property
    def next_page(self) -> int | None:
        last = self.pages[-1].number if self.pages else self.page_number
        return last + 1 if last < self.document.page_count else None

    @property
    def closest_shown(self) -> bool:
        """The nearest miss lies on a page shown (its glyph boxes are drawn there)."""
        c = self.closest
        return c is not None and any(c.start < p.end and p.start < c.end for p in self.pages)

    @property
    def correction_shown(self) -> bool:
        """The corrected text lies on a page shown and no citation is (it is marked there)."""
        c = self.correction
        return (
            c is not None
            and self.citation is None
            and any(c.start < p.end and p.start < c.end for p in self.pages)
        )

    @property
    def latest_review_id(self) -> int:
        return self.state.latest_review_id if self.state else 0

    @property
    def absent(self) -> bool:
        """The clause's answer as it stands says it is not in the document."""
        return (
            self.extraction is not None
            and self.state is not None
            and answer_is_absent(self.extraction.status, self.state.text)
        )


def clause_citations(extraction: Extraction) -> list[Citation]:
    return list(
        Citation.objects.filter(extraction_id=extraction.pk)
        .select_related("chunk")
        .only(
            "id",
            "extraction_id",
            "ordinal",
            "page",
            "start",
            "end",
            "quote",
            "chunk__chunk_id",
            "chunk__section",
        )
        .order_by("ordinal", "id")
    )


def clause_history(extraction: Extraction) -> list[Review]:
    return list(Review.objects.filter(extraction_id=extraction.pk).select_related("reviewer").order_by("-id"))


def build(
    document: Document,
    *,
    extraction: Extraction | None = None,
    citation_id: int | None = None,
    page_number: int | None = None,
    strict: bool = True,
) -> Workspace:
    """The workspace for a document, optionally a clause, a citation of it, or a page."""
    ws = Workspace(document=document, extraction=extraction, page_images=has_page_images(document))
    spans: list[source.Span] = []
    lo = hi = page_number or 1
    focus: CorrectionPassage | None = None  # the correction, when it is shown in place of a citation
    if extraction is not None:
        if hasattr(extraction, "citation_rows_json"):  # loaded with reviewer.rows.with_rows: no more queries
            ws.citations, ws.history = (
                rows_module.citation_rows(extraction),
                rows_module.review_rows(extraction),
            )
        else:
            ws.citations, ws.history = clause_citations(extraction), clause_history(extraction)
        ws.state = derive_state(extraction.clause_text, ws.history)
        if not ws.absent:
            ws.correction, ws.correction_unlocated = located_correction(
                document, ws.history, near=cited_at(extraction, ws.citations)
            )
        if citation_id is not None:
            ws.citation = next((c for c in ws.citations if c.pk == citation_id), None)
            if ws.citation is None and strict:
                raise Http404("No such citation on this clause.")
        if ws.citation is None and page_number is None and ws.citations and ws.correction is None:
            ws.citation = ws.citations[0]  # a corrected clause opens on its correction instead
        if ws.citation is not None:
            spans = [source.Span(ws.citation.pk, ws.citation.start, ws.citation.end)]
            lo = hi = ws.citation.page
            ws.citation_section = section_at(document, ws.citation.start)
        elif ws.correction is not None and page_number in (None, ws.correction.page):
            focus = ws.correction
            spans = [source.Span(0, focus.start, focus.end, passage="correction")]
            lo = hi = focus.page
        else:
            spans = [source.Span(c.pk, c.start, c.end) for c in ws.citations]  # clipped to the page
    if extraction is not None and ws.citation is None and focus is None:
        ws.closest = ClosestPassage.of(extraction)
        if ws.closest is not None:
            spans = [source.Span(0, ws.closest.start, ws.closest.end, passage="closest")]
            lo = hi = page_number or ws.closest.page
        elif page_number is None:
            return ws  # nothing cited and nothing near: no page to show until asked
    _load_pages(ws, lo, hi, spans, focus)
    return ws


# Pages lo - 1 to hi + 1, every page the cited span (end, start) touches, and the page after the one it
# ends on (a clause may run on from the foot of a page; greatest() ignores the NULL of no span).
PAGES_SQL = """
SELECT p.number, p.char_start, p.char_end, substr(d.text, p.char_start + 1, p.char_end - p.char_start),
       p.ocr_confidence
FROM ingest_page p JOIN ingest_document d ON d.id = p.document_id
WHERE p.document_id = %(doc)s AND (
  p.number BETWEEN %(lo)s - 1 AND greatest(%(hi)s, (SELECT max(lp.number) FROM ingest_page lp
                                                    WHERE lp.document_id = %(doc)s
                                                      AND lp.char_start < %(end)s)) + 1
  OR (p.char_start < %(end)s AND p.char_end > %(start)s))
ORDER BY p.number"""


def cited_at(extraction: Extraction, citations) -> int:
    """Where the engine put the clause: its first citation, else a not_found's closest sentence (0)."""
    if citations:
        return min(c.start for c in citations)
    closest = ClosestPassage.of(extraction)
    return closest.start if closest is not None else 0


def located_correction(document: Document, history, near: int = 0) -> tuple[CorrectionPassage | None, bool]:
    """Where the latest corrected text of a clause (``history``: its reviews, newest first) stands in the
    document (of several places, the nearest ``near``: where the engine put the clause), and whether it
    is a correction that is not there as typed; (None, False) when the clause was never corrected. Kept
    by review: the search reads the whole text of the document once."""
    review = next((r for r in history if r.decision == CORRECT and r.corrected_text), None)
    if review is None:
        return None, False

    def locate() -> tuple[int, ...]:
        text = Document.objects.filter(pk=document.pk).values_list("text", flat=True).first() or ""
        found = find_passage(text, review.corrected_text, near)
        if found is None:
            return ()
        pages = [PageSpan(*p) for p in document.pages.values_list("number", "char_start", "char_end")]
        return (page_of(found[0], pages), *found)

    at = kept(f"correction-at:v2:{document_version(document)}:{review.pk}", locate, KEEP_SECONDS)
    return (CorrectionPassage(*at), False) if at else (None, True)


def _load_pages(
    ws: Workspace, lo: int, hi: int, spans: list[source.Span], correction: CorrectionPassage | None = None
) -> None:
    """The shown page(s) and their neighbours, sliced out of Document.text by the database
    (or already loaded with the clause, see ``reviewer.rows.with_rows(pages_for=...)``). ``correction``:
    shown in place of a citation, every page it touches."""
    rows = rows_module.page_rows(ws.extraction, ws.citation.pk) if ws.citation is not None else None
    near = ws.closest if ws.closest is not None and lo == ws.closest.page else None
    focus: Citation | rows_module.CitationRow | ClosestPassage | CorrectionPassage | None = (
        ws.citation or correction or near
    )  # the span whose pages are shown
    if rows is None:
        end, start = (focus.end, focus.start) if focus is not None else (0, 0)
        with connection.cursor() as cursor:
            cursor.execute(PAGES_SQL, {"doc": ws.document.pk, "lo": lo, "hi": hi, "end": end, "start": start})
            rows = cursor.fetchall()
    texts = [source.PageText(n, s, e, body or "") for n, s, e, body, _ in rows]
    read_by_ocr = {row[0]: row[4] for row in rows}  # a page read by OCR: its confidence (else None)
    shown = (set(source.pages_of_span(focus.start, focus.end, texts)) if focus is not None else set()) or {lo}
    ws.page_number = min(shown)
    estimated = ws.document.pages_estimated
    labels = page_labels(ws.document) if ws.page_images else {}
    ws.citation_label = labels.get(ws.citation.page, "") if ws.citation is not None else ""
    for p in texts:
        if p.number in shown:
            html = source.highlight(p, spans)
            ws.pages.append(ShownPage(p.number, html, estimated, labels.get(p.number, ""), p.start, p.end))
        elif p.number == min(shown) - 1:
            ws.before = {"number": p.number, "text": source.tail(p.text)}
        elif p.number == max(shown) + 1:
            ws.after = {"number": p.number, "text": source.head(p.text)}
    ws.missing_page = not ws.pages
    for shown_page in ws.pages:
        shown_page.ocr_confidence = read_by_ocr.get(shown_page.number)
    if ws.page_images:  # the quote's boxes, or on a page read through, those of the clause's quotes on it
        touched = [
            s for s in spans if any(s.start < p.end and p.start < max(s.end, s.start + 1) for p in ws.pages)
        ]
        ws.box_citations = [s.citation_id for s in touched if not s.passage]
