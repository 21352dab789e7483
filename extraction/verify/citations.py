"""The verifier: a model's citations located by the server, their values and grounding checked."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from extraction.verify.grounding import check_grounding
from extraction.verify.locate import (
    _index,
    _locate,
    _Match,
    _not_found_message,
    _short,
    _slack,
    _source,
    _window,
)
from extraction.verify.normalise import _HYPHENS, norm
from extraction.verify.values import check_values, exact_values
from ingest.chunker import ChunkSpec
from ingest.pages import PageTable, pages_of_span

NOT_FOUND = "not_found"
MIN_QUOTE_CHARS = 2


@dataclass(frozen=True)
class VerifiedCitation:
    """A citation the server located itself. ``quote == document_text[start:end]``."""

    chunk_id: str
    page: int  # physical page of ``start`` (from the page table)
    page_end: int  # physical page of ``end - 1``
    start: int  # absolute char offset in the document text
    end: int  # exclusive
    quote: str  # exact source text
    model_page: int | None
    page_matched: bool  # the model's page lies within [page, page_end]
    match: str  # "exact" | "normalised" | "casefold"
    occurrences: int = 1  # how many places in the searched window matched
    skipped: tuple[tuple[int, int], ...] = ()  # page furniture inside the span that the quote leaves out

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class VerificationResult:
    not_found: bool
    citations: tuple[VerifiedCitation, ...] = ()
    errors: tuple[str, ...] = ()
    values_checked: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.errors and (self.not_found or bool(self.citations))

    def feedback(self) -> str:
        """Errors as one message for the model's retry ('' when ok)."""
        if self.ok:
            return ""
        lines = ["Citation verification failed:"] + [f"- {e}" for e in self.errors]
        lines.append(
            "Fix the citations: copy each quote character-for-character from the cited chunk "
            "(one contiguous passage per citation), and copy every value exactly as written."
        )
        return "\n".join(lines)


# --------------------------------------------------------------------------- the verifier


def verify_extraction(
    citations: Sequence[Mapping],
    chunks: Mapping[str, ChunkSpec] | Iterable[ChunkSpec],
    pages: PageTable,
    clause_text: str,
    *,
    document_text: str | None = None,
    offsets: Sequence[int] = (),
    furniture: Sequence[tuple[int, int]] = (),
) -> VerificationResult:
    """Verify a model's ``extract_clause`` citations and values. Pure.

    ``chunks``: the document's chunks (a dict by id, or any iterable). Passing all
    chunks of the document is fine; a quote is only accepted when it overlaps the
    cited chunk. ``document_text`` is optional (chunks are enough), when given it
    is the source of the returned quotes. ``offsets``: where the offline engine found each quote
    (never a model's numbers); they only choose among the places of a repeated quote.
    ``furniture``: the document's running headers, footers and page numbers (``ingest.blocks``); a
    quote that reads across a page break without them is found, and cited as the parts around them.
    """
    by_id = _index(chunks)
    clause_text = clause_text if isinstance(clause_text, str) else ""
    citations = [c if isinstance(c, Mapping) else {} for c in (citations or [])]
    if clause_text.strip() == NOT_FOUND:
        errs = []
        if citations:
            errs.append(
                'clause_text is "not_found" but citations were given; '
                "either cite the clause and give its text, or give not_found with no citations"
            )
        return VerificationResult(not_found=True, errors=tuple(errs))

    errors: list[str] = []
    verified: list[VerifiedCitation] = []
    located: list[VerifiedCitation] = []  # each quote as located, before it is cut at chunk ends
    if not clause_text.strip():
        errors.append('clause_text is empty; give the clause text, or "not_found"')
    if not citations:
        errors.append("a found clause needs at least one citation {chunk_id, page, quote}")
    for n, cit in enumerate(citations, 1):
        hint = offsets[n - 1] if n <= len(offsets) else None
        vc, err = verify_citation(
            cit, by_id, pages, document_text=document_text, hint=hint, furniture=furniture
        )
        if err:
            errors.append(f"citation {n}: {err}")
        elif vc is not None:
            for part in around_furniture(vc, pages):
                located.append(part)
                verified.extend(
                    piece
                    for piece in within_chunks(part, by_id, pages)
                    if all((v.start, v.end) != (piece.start, piece.end) for v in verified)
                )

    values: list[str] = []
    if verified and clause_text.strip():
        values = exact_values(clause_text)
        quotes = joined_quotes(located)
        errors.extend(check_values(values, quotes))
        errors.extend(check_grounding(clause_text, quotes))
    return VerificationResult(False, tuple(verified), tuple(errors), tuple(values))


def verify_citation(
    citation: Mapping,
    chunks: Mapping[str, ChunkSpec],
    pages: PageTable,
    *,
    document_text: str | None = None,
    hint: int | None = None,
    furniture: Sequence[tuple[int, int]] = (),
) -> tuple[VerifiedCitation | None, str | None]:
    """Locate one citation. Returns ``(verified, None)`` or ``(None, error)``. ``hint``: an offset
    near the place meant, when the quote occurs more than once (see :func:`_choose`)."""
    chunk_id = str(citation.get("chunk_id") or "").strip()
    quote = citation.get("quote")
    model_page = citation.get("page")
    model_page = model_page if isinstance(model_page, int) and not isinstance(model_page, bool) else None
    if not chunk_id:
        return None, "chunk_id is missing"
    chunk = chunks.get(chunk_id)
    if chunk is None:
        near = difflib.get_close_matches(chunk_id, list(chunks), n=1)
        guess = f' (did you mean "{near[0]}"?)' if near else ""
        return (
            None,
            f'chunk "{chunk_id}" does not exist in this document{guess}; cite a chunk id from a context tag',
        )
    if not isinstance(quote, str) or not quote.strip():
        return None, f"quote is empty for chunk {chunk_id}"
    nq = norm(quote)
    if len(nq) < MIN_QUOTE_CHARS:
        return None, f'quote "{quote}" is too short to locate; quote at least a few words'

    dangling = len(nq) > 2 and nq.endswith("-") and nq[-2].isalpha()  # quote ends at a line-end hyphen
    if dangling:
        nq = nq[:-1]
    matches, how = _locate(nq, chunk, chunks, document_text)
    skip: Sequence[tuple[int, int]] = ()
    if not matches and furniture:  # read across a page break, leaving out its header/footer lines
        skip = [
            f
            for f in furniture
            if f[1] > chunk.char_start - _slack(nq) and f[0] < chunk.char_end + _slack(nq)
        ]
        matches, how = _locate(nq, chunk, chunks, document_text, skip) if skip else ([], "")
    if not matches:
        if "..." in nq:
            return None, (
                f'quote "{_short(quote)}" joins separate passages with an ellipsis; cite each '
                f"contiguous passage as its own citation"
            )
        return None, _not_found_message(quote, nq, chunk)
    if not matches[0].whole:
        m = matches[0]
        return None, (
            f'quote "{_short(quote)}" starts or ends inside a word or number (the source reads '
            f'"{_short(_around(chunk, chunks, m, document_text))}"); quote whole words and whole '
            "numbers, each with its currency or percent sign"
        )
    start, end = _choose(matches, hint, model_page, pages)
    if dangling and _source(chunk, chunks, end, end + 1, document_text) in _HYPHENS:
        end += 1
    exact = _source(chunk, chunks, start, end, document_text)
    if pages:
        p1, p2 = pages_of_span(start, end, pages)
    else:
        p1, p2 = chunk.page_start, chunk.page_end
    matched = model_page is not None and p1 <= model_page <= p2
    if exact == quote:
        how = "exact"
    skipped = tuple((a, b) for a, b in skip if start < a and b < end)
    return VerifiedCitation(
        chunk_id, p1, p2, start, end, exact, model_page, matched, how, len(matches), skipped
    ), None


def _choose(matches: Sequence[_Match], hint, model_page: int | None, pages: PageTable) -> tuple[int, int]:
    """Which of a repeated quote's places is meant: the one nearest ``hint`` (an offset the offline
    engine chose itself; never a model's number), else the first on the page the model named, else
    the first."""
    if len(matches) > 1 and isinstance(hint, int) and not isinstance(hint, bool):
        best = min(matches, key=lambda m: abs(m.start - hint))
        return best.start, best.end
    if len(matches) > 1 and model_page is not None and pages:
        for m in matches:
            if (span := pages_of_span(m.start, m.end, pages))[0] <= model_page <= span[1]:
                return m.start, m.end
    return matches[0].start, matches[0].end


def _around(chunk, chunks, m: _Match, document_text) -> str:
    """The source of a match widened to whole words, for an error message."""
    text, base = _window(chunk, chunks, m.start - 40, m.end + 40, document_text)
    a, b = m.start - base, m.end - base
    while a > 0 and not text[a - 1].isspace():
        a -= 1
    while b < len(text) and not text[b].isspace():
        b += 1
    return text[a:b]


def joined_quotes(located: Sequence[VerifiedCitation]) -> list[str]:
    """The located quotes' texts, quotes that overlap or touch in the document joined into one (two
    citations of the overlapping ends of neighbouring chunks are one passage of the source)."""
    spans: list[tuple[int, int, str]] = []
    for v in sorted(located, key=lambda v: (v.start, v.end)):
        if spans and v.start <= spans[-1][1]:
            start, end, text = spans[-1]
            if v.end > end:
                spans[-1] = (start, v.end, text + v.quote[end - v.start :])
        else:
            spans.append((v.start, v.end, v.quote))
    return [text for _, _, text in spans]


def _piece(
    vc: VerifiedCitation, start: int, end: int, chunk: ChunkSpec, pages: PageTable
) -> VerifiedCitation | None:
    """The part ``[start, end)`` of ``vc``, cited to ``chunk``, edge whitespace trimmed (None when blank)."""
    text = vc.quote[start - vc.start : end - vc.start]
    start, end = start + len(text) - len(text.lstrip()), end - (len(text) - len(text.rstrip()))
    if start >= end:
        return None
    p1, p2 = pages_of_span(start, end, pages) if pages else (chunk.page_start, chunk.page_end)
    return replace(
        vc,
        chunk_id=chunk.chunk_id,
        page=p1,
        page_end=p2,
        start=start,
        end=end,
        quote=vc.quote[start - vc.start : end - vc.start],
        skipped=(),
        page_matched=vc.model_page is not None and p1 <= vc.model_page <= p2,
    )


def around_furniture(vc: VerifiedCitation, pages: PageTable) -> list[VerifiedCitation]:
    """``vc`` as the parts between the page furniture it was read across (``vc.skipped``)."""
    if not vc.skipped:
        return [vc]
    cited = ChunkSpec(vc.chunk_id, 0, "", vc.start, vc.end, vc.page, vc.page_end, 0, "")
    bounds = [vc.start] + [x for span in vc.skipped for x in span] + [vc.end]
    parts = (_piece(vc, a, b, cited, pages) for a, b in zip(bounds[::2], bounds[1::2]))
    return [p for p in parts if p is not None]


def within_chunks(
    vc: VerifiedCitation, chunks: Mapping[str, ChunkSpec], pages: PageTable
) -> list[VerifiedCitation]:
    """``vc`` itself when it lies inside its chunk; else cut where it leaves it, each piece cited to a
    chunk that holds it whole (the one reaching furthest), edge whitespace trimmed; whitespace
    between two chunks that do not overlap is left out. Unchanged when text in the span lies in no
    chunk (chunks cover all of a document's other text)."""
    cited = chunks[vc.chunk_id]
    if cited.char_start <= vc.start and vc.end <= cited.char_end:
        return [vc]
    pieces, pos = [], vc.start
    while pos < vc.end:
        holders = [c for c in chunks.values() if c.char_start <= pos < c.char_end]
        if not holders:  # between two chunks that do not overlap: only whitespace lies there
            after = [c.char_start for c in chunks.values() if pos < c.char_start < vc.end]
            if not after or vc.quote[pos - vc.start : min(after) - vc.start].strip():
                return [vc]
            pos = min(after)
            continue
        holder = max(holders, key=lambda c: (c.char_end, c.chunk_id == vc.chunk_id))
        cut = min(vc.end, holder.char_end)
        piece = _piece(vc, pos, cut, holder, pages)
        if piece is not None:
            pieces.append(piece)
        pos = cut
    return pieces
