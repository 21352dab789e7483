"""Citation verification: the server, not the model, decides where a quote is.

For each citation ``{chunk_id, page, quote}`` the quote is searched in the cited
chunk's text after normalisation (whitespace runs incl. ``\\f``/newlines collapse
to one space, curly quotes and dashes fold to ASCII, soft hyphens and
line-end hyphenation vanish, superscript digits and "^1^" marks read as a space,
NFKD with accents dropped, so precomposed and decomposed letters match). A quote
must start and end on whole words and whole numbers, with their currency and
percent signs ("$247" or "247.83" of "$247.83" is refused; Chinese and Japanese,
written without spaces, excepted). The match is
mapped back to EXACT absolute offsets in the document; the page comes from the
document's page table, never from the model. A quote may run past the cited chunk
into an overlapping neighbour as long as it starts or ends inside the cited chunk;
it is then kept as one citation per chunk (``within_chunks``), so every stored
quote lies inside the chunk it names. A quote that reads across a page break
without the running header/footer in between (``furniture``) is found and kept
as the parts on each side (``around_furniture``).

Exact values in ``clause_text`` (money, percentages, dates, IDs, numbers with
units, bare numbers) must occur verbatim in the verified cited text, so a
paraphrased value ("~$250" for "$247.83") fails. And ``clause_text`` itself must
be the cited text, word for word and in order (``check_grounding``: words left out
are marked "…"), so a clause the model wrote itself cannot pass on the strength of
a quote of two words, and a dropped "not" or a swapped party cannot pass at all.

Errors are specific sentences meant to be shown to the model on retry.
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import asdict, dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from extraction.types import ChunkView, PageTable, page_of

NOT_FOUND = "not_found"
MIN_QUOTE_CHARS = 2
_SHOW = 160  # chars of a quote/passage shown in an error

_SOFT_HYPHEN = "\u00ad"  # kept until hyphenation is resolved, then dropped (see _drop_hyphenation)
_DROP = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
_FOLD = {
    **{c: "'" for c in "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4"},
    **{c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"},
    **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"},
    "\u2026": "...",
}
# A superscript as converted Word/HTML text writes it ("$5,000^1^", a footnote "^[[1]](#footnote-1)^"):
# read like "¹", as a space, so a quote may leave the mark out and it never joins the number.
_SUPERSCRIPT_MARK = re.compile(r"\^[^\s^]{1,40}\^")
_HYPHENS = {"-", "\u00ad"} | {c for c, v in _FOLD.items() if v == "-"}


# --------------------------------------------------------------------------- normalisation

def normalise(text: str, *, fold_case: bool = False) -> tuple[str, list[int]]:
    """Normalise ``text`` for matching; return it with a map to source indices.

    ``src[i]`` is the index in ``text`` of the character that produced normalised
    character ``i``. Leading/trailing whitespace is dropped. The same function is
    applied to quote and source so any tolerance is symmetric.
    """
    chars: list[str] = []
    src: list[int] = []
    pending_space = -1
    marks = {i for m in _SUPERSCRIPT_MARK.finditer(text) for i in range(m.start(), m.end())} if "^" in text else ()
    for i, ch in enumerate(text):
        if ch in _DROP or (ch == "\\" and text[i + 1:i + 2] == "|"):  # a table cell's "\|" reads as "|"
            continue
        out = " " if i in marks else _FOLD.get(ch)
        if out is None:
            out = ch
            if ch.isascii():  # (most of a contract: nothing below applies to it)
                pass
            elif _is_index_mark(ch):  # "$5,000¹" is not "$5,0001"
                out = " "  # (a fraction such as "½" decomposes to "1⁄2" below and stays a value)
            else:  # compatibility forms (ligatures, nbsp, full-width) and accents
                out = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        for o in out:
            if o.isspace():
                if pending_space < 0:
                    pending_space = i
                continue
            if pending_space >= 0:
                if chars:
                    chars.append(" ")
                    src.append(pending_space)
                pending_space = -1
            if fold_case:
                low = o.lower()
                o = low if len(low) == 1 else o
            chars.append(o)
            src.append(i)
    return _drop_hyphenation(chars, src)


def _is_index_mark(ch: str) -> bool:
    """A superscript or subscript digit or sign ("¹", "₂", "⁺"): a footnote mark or an index, never part
    of the number before it. "º", "ª" and "™" are letters and stay ("nº" reads "no")."""
    return (unicodedata.decomposition(ch).startswith(("<super>", "<sub>"))
            and all(c in "0123456789+-=()\u2212" for c in unicodedata.normalize("NFKD", ch)))


def _drop_hyphenation(chars: list[str], src: list[int]) -> tuple[str, list[int]]:
    """'indemni- fication' / 'indemni-fication' -> 'indemnification' (letter-hyphen-lowercase).

    Applied to both sides, so "non-compete" still matches "non-compete"; it also
    lets a line-end hyphenation in the source match the joined word in a quote.
    """
    out_c: list[str] = []
    out_s: list[int] = []
    n = len(chars)
    i = 0
    while i < n:
        c = chars[i]
        if c == _SOFT_HYPHEN:  # invisible: it and a line end after it vanish ("indemni\u00ad\nfication")
            i += 2 if i + 2 < n and chars[i + 1] == " " and chars[i + 2].isalpha() else 1
            continue
        if c == "-" and out_c and out_c[-1].isalpha():
            j = i + 1
            if j < n and chars[j] == " ":
                j += 1
            if j < n and chars[j].isalpha() and chars[j].islower():
                i = j
                continue
        out_c.append(c)
        out_s.append(src[i])
        i += 1
    return "".join(out_c), out_s


def norm(text: str) -> str:
    """Normalised text without the index map."""
    return normalise(text)[0]


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class VerifiedCitation:
    """A citation the server located itself. ``quote == document_text[start:end]``."""

    chunk_id: str
    page: int          # physical page of ``start`` (from the page table)
    page_end: int      # physical page of ``end - 1``
    start: int         # absolute char offset in the document text
    end: int           # exclusive
    quote: str         # exact source text
    model_page: int | None
    page_matched: bool  # the model's page lies within [page, page_end]
    match: str         # "exact" | "normalised" | "casefold"
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
    chunks: Mapping[str, ChunkView] | Iterable[ChunkView],
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
            errs.append('clause_text is "not_found" but citations were given; '
                        "either cite the clause and give its text, or give not_found with no citations")
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
        vc, err = verify_citation(cit, by_id, pages, document_text=document_text, hint=hint, furniture=furniture)
        if err:
            errors.append(f"citation {n}: {err}")
        elif vc is not None:
            for part in around_furniture(vc, pages):
                located.append(part)
                verified.extend(piece for piece in within_chunks(part, by_id, pages)
                                if all((v.start, v.end) != (piece.start, piece.end) for v in verified))

    values: list[str] = []
    if verified and clause_text.strip():
        values = exact_values(clause_text)
        quotes = joined_quotes(located)
        errors.extend(check_values(values, quotes))
        errors.extend(check_grounding(clause_text, quotes))
    return VerificationResult(False, tuple(verified), tuple(errors), tuple(values))


def verify_citation(
    citation: Mapping,
    chunks: Mapping[str, ChunkView],
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
        hint = f' (did you mean "{near[0]}"?)' if near else ""
        return None, f'chunk "{chunk_id}" does not exist in this document{hint}; cite a chunk id from a context tag'
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
        skip = [f for f in furniture if f[1] > chunk.char_start - _slack(nq) and f[0] < chunk.char_end + _slack(nq)]
        matches, how = _locate(nq, chunk, chunks, document_text, skip) if skip else ([], "")
    if not matches:
        if "..." in nq:
            return None, (f'quote "{_short(quote)}" joins separate passages with an ellipsis; cite each '
                          f"contiguous passage as its own citation")
        return None, _not_found_message(quote, nq, chunk)
    if not matches[0].whole:
        m = matches[0]
        return None, (f'quote "{_short(quote)}" starts or ends inside a word or number (the source reads '
                      f'"{_short(_around(chunk, chunks, m, document_text))}"); quote whole words and whole '
                      "numbers, each with its currency or percent sign")
    start, end = _choose(matches, hint, model_page, pages)
    if dangling and _source(chunk, chunks, end, end + 1, document_text) in _HYPHENS:
        end += 1
    exact = _source(chunk, chunks, start, end, document_text)
    if pages:
        p1, p2 = page_of(start, pages), page_of(max(start, end - 1), pages)
    else:
        p1, p2 = chunk.page_start, chunk.page_end
    matched = model_page is not None and p1 <= model_page <= p2
    if exact == quote:
        how = "exact"
    skipped = tuple((a, b) for a, b in skip if start < a and b < end)
    return VerifiedCitation(chunk_id, p1, p2, start, end, exact, model_page, matched, how, len(matches),
                            skipped), None


def _choose(matches: Sequence[_Match], hint, model_page: int | None, pages: PageTable) -> tuple[int, int]:
    """Which of a repeated quote's places is meant: the one nearest ``hint`` (an offset the offline
    engine chose itself; never a model's number), else the first on the page the model named, else
    the first."""
    if len(matches) > 1 and isinstance(hint, int) and not isinstance(hint, bool):
        best = min(matches, key=lambda m: abs(m.start - hint))
        return best.start, best.end
    if len(matches) > 1 and model_page is not None and pages:
        for m in matches:
            if page_of(m.start, pages) <= model_page <= page_of(max(m.start, m.end - 1), pages):
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


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", norm(text).lower())


ELISION = "..."  # "…", "...", "[…]" in clause_text: words of a quote left out, on purpose and visibly


def check_grounding(clause_text: str, quotes: Sequence[str]) -> list[str]:
    """An error unless ``clause_text`` is its quotes, word for word and in order.

    Words are compared case-folded, punctuation aside. A run of the clause may begin anywhere in a
    quote and may end anywhere; it may pass from one quote into another only where the first ends
    and the next begins, so no word inside a quote can be dropped silently ("shall not sublicense"
    is not "shall sublicense"). Words left out must be marked with an ellipsis."""
    quoted = [_words(q) for q in quotes]
    for part in norm(clause_text).split(ELISION):
        words = _words(part)
        reached = _covered(words, quoted)
        if reached < len(words):
            shown = " ".join(words[max(0, reached - 4):reached + 4])
            return [f'clause_text is not the cited text word for word: at "{shown}" it departs from the quotes. '
                    "Give the clause exactly as the quotes have it, in their order; where you leave words of a "
                    'quote out, write "…" in their place']
    return []


def _covered(words: list[str], quoted: list[list[str]]) -> int:
    """How many of ``words`` (from the start) the quotes cover as described in :func:`check_grounding`:
    ``len(words)`` when all. A run goes on only into another quote's first word."""
    best = 0
    todo, seen = [(0, -1)], set()  # (position in words, the quote the last run ended; -1: none)
    while todo:
        i, last = todo.pop()
        for k, q in enumerate(quoted):
            if k == last:
                continue
            for o in (range(len(q)) if last < 0 else range(min(1, len(q)))):
                n = 0
                while i + n < len(words) and o + n < len(q) and words[i + n] == q[o + n]:
                    n += 1
                if not n:
                    continue
                best = max(best, i + n)
                if i + n == len(words):
                    return best
                if o + n == len(q) and (i + n, k) not in seen:  # run on into the next quote
                    seen.add((i + n, k))
                    todo.append((i + n, k))
    return best if words else 0


def joined_quotes(located: Sequence[VerifiedCitation]) -> list[str]:
    """The located quotes' texts, quotes that overlap or touch in the document joined into one (two
    citations of the overlapping ends of neighbouring chunks are one passage of the source)."""
    spans: list[tuple[int, int, str]] = []
    for v in sorted(located, key=lambda v: (v.start, v.end)):
        if spans and v.start <= spans[-1][1]:
            start, end, text = spans[-1]
            if v.end > end:
                spans[-1] = (start, v.end, text + v.quote[end - v.start:])
        else:
            spans.append((v.start, v.end, v.quote))
    return [text for _, _, text in spans]


def _piece(vc: VerifiedCitation, start: int, end: int, chunk: ChunkView, pages: PageTable) -> VerifiedCitation | None:
    """The part ``[start, end)`` of ``vc``, cited to ``chunk``, edge whitespace trimmed (None when blank)."""
    text = vc.quote[start - vc.start:end - vc.start]
    start, end = start + len(text) - len(text.lstrip()), end - (len(text) - len(text.rstrip()))
    if start >= end:
        return None
    p1, p2 = (page_of(start, pages), page_of(end - 1, pages)) if pages else (chunk.page_start, chunk.page_end)
    return replace(vc, chunk_id=chunk.chunk_id, page=p1, page_end=p2, start=start, end=end,
                   quote=vc.quote[start - vc.start:end - vc.start], skipped=(),
                   page_matched=vc.model_page is not None and p1 <= vc.model_page <= p2)


def around_furniture(vc: VerifiedCitation, pages: PageTable) -> list[VerifiedCitation]:
    """``vc`` as the parts between the page furniture it was read across (``vc.skipped``)."""
    if not vc.skipped:
        return [vc]
    cited = ChunkView(vc.chunk_id, 0, "", vc.start, vc.end, vc.page, vc.page_end, 0, "")
    bounds = [vc.start] + [x for span in vc.skipped for x in span] + [vc.end]
    parts = (_piece(vc, a, b, cited, pages) for a, b in zip(bounds[::2], bounds[1::2]))
    return [p for p in parts if p is not None]


def within_chunks(vc: VerifiedCitation, chunks: Mapping[str, ChunkView], pages: PageTable) -> list[VerifiedCitation]:
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
            if not after or vc.quote[pos - vc.start:min(after) - vc.start].strip():
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


# --------------------------------------------------------------------------- locating

def _index(chunks) -> dict[str, ChunkView]:
    if isinstance(chunks, Mapping):
        return dict(chunks)
    return {c.chunk_id: c for c in chunks}


def _window(chunk: ChunkView, chunks: Mapping[str, ChunkView], lo: int, hi: int,
            document_text: str | None) -> tuple[str, int]:
    """Contiguous source text covering ``[lo, hi)`` around ``chunk``: (text, absolute base).

    Cut from ``document_text`` when given, else stitched from the overlapping
    chunks (``chunk.text == document_text[char_start:char_end]``); it stops at a
    gap in chunk coverage.
    """
    lo, hi = min(lo, chunk.char_start), max(hi, chunk.char_end)
    if document_text is not None:
        lo, hi = max(lo, 0), min(hi, len(document_text))
        return document_text[lo:hi], lo
    near = sorted((c for c in chunks.values() if c.char_end > lo and c.char_start < hi),
                  key=lambda c: (c.char_start, c.char_end))
    start, end = chunk.char_start, chunk.char_end
    grown = True
    while grown:  # grow the contiguous cover to both sides, within [lo, hi)
        grown = False
        for c in near:
            if c.char_start <= end < c.char_end and end < hi:
                end, grown = c.char_end, True
            if c.char_start < start <= c.char_end and start > lo:
                start, grown = c.char_start, True
    parts, covered = [], start
    for c in near:
        if c.char_start <= covered < c.char_end:
            parts.append(c.text[covered - c.char_start:])
            covered = c.char_end
    text = "".join(parts)[: end - start]
    a, b = max(lo, start), min(hi, end)
    return text[a - start:b - start], a


def _source(chunk, chunks, start, end, document_text) -> str:
    """Exact source text of the absolute span ``[start, end)``."""
    if document_text is not None:
        return document_text[start:end]
    text, base = _window(chunk, chunks, start, end, None)
    return text[start - base:end - base]


def _find_all(hay: str, needle: str) -> list[int]:
    out, i = [], hay.find(needle)
    while i >= 0:
        out.append(i)
        i = hay.find(needle, i + 1)
    return out


def _splits(text: str, i: int) -> bool:
    """Whether position ``i`` of ``text`` lies inside a word or a value ("$247|.83", "cust_47|11"), or
    between a number and its currency or percent sign ("$|247.83", "5|%"): a quote cut there drops the sign."""
    if i <= 0 or i >= len(text):
        return False
    a, b = text[i - 1], text[i]
    if (a.isalnum() or a == "_") and (b.isalnum() or b == "_"):
        if a.isnumeric() and b.isnumeric():  # "５|００", "三|十": a number is never cut
            return True
        return not (_ideographic(a) and _ideographic(b))  # Chinese, Japanese: no spaces between words
    j = i - 1
    while j > 0 and text[j].isspace() and i - j < 8:
        j -= 1
    if text[j].isdigit() and _SCALE_AFTER.match(text, i):
        return True  # "$5| million", "$5|\nmillion": the scale word belongs to the number
    if a in ".," and b.isdigit() and i >= 2 and text[i - 2].isdigit():
        return True
    if _DIGIT_AFTER.match(text, i) and _SIGN_BEFORE.search(text, max(0, i - 5), i):
        return True  # "$|247.83", "USD| 1,000": the currency belongs to the number
    if text[j].isdigit() and _PERCENT_AFTER.match(text, i):
        return True  # "5|%", "5| percent"
    return b in ".," and a.isdigit() and i + 1 < len(text) and text[i + 1].isdigit()


_SCALE_AFTER = re.compile(r"\s*(?i:million|billion|thousand|trillion)\b")
_IDEOGRAPHIC = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA")


def _ideographic(ch: str) -> bool:
    """Han, hiragana or katakana: scripts written without spaces between words (Korean has them)."""
    return ord(ch) > 0x2E7F and unicodedata.name(ch, "").startswith(_IDEOGRAPHIC)


@dataclass(frozen=True)
class _Match:
    start: int   # absolute
    end: int
    whole: bool  # neither end cuts a word or a number


def _search(nq: str, text: str, base: int, chunk: ChunkView, fold: bool) -> list[_Match]:
    """Every normalised match of ``nq`` overlapping ``chunk``, with absolute offsets."""
    needle = normalise(nq, fold_case=True)[0] if fold else nq
    nt, src = normalise(text, fold_case=fold)
    found = []
    for a in _find_all(nt, needle):
        s, e = base + src[a], base + src[a + len(needle) - 1] + 1
        while e - base < len(text) and unicodedata.combining(text[e - base]):
            e += 1  # keep the accents of a decomposed last letter
        if s < chunk.char_end and e > chunk.char_start:
            found.append(_Match(s, e, not (_splits(text, s - base) or _splits(text, e - base))))
    return found


def _slack(nq: str) -> int:
    return 2 * len(nq) + 200


def _blank(text: str, base: int, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` (starting at absolute ``base``) with the absolute ``spans`` turned to spaces."""
    if not spans:
        return text
    chars = list(text)
    for a, b in spans:
        for i in range(max(a - base, 0), min(b - base, len(chars))):
            chars[i] = " "
    return "".join(chars)


def _matches(nq, chunk, chunks, document_text, fold, skip=()) -> list[_Match]:
    """All matches anchored in ``chunk``, searching the chunk and its overlapping neighbours, the
    ``skip`` spans read as blank."""
    text, base = _window(chunk, chunks, chunk.char_start - _slack(nq), chunk.char_end + _slack(nq),
                         document_text)
    return _search(nq, _blank(text, base, skip), base, chunk, fold)


def _locate(nq, chunk, chunks, document_text, skip=()) -> tuple[list[_Match], str]:
    """The matches anchored in ``chunk`` and how they matched ("normalised" or "casefold"): whole ones
    (cutting no word or number) when there are any, else those that cut one; ``[]`` when none.

    Tries the chunk alone, then the chunk stitched with its neighbours (a quote crossing a chunk
    boundary), first case-sensitively, then case-folded.
    """
    cut: tuple[list[_Match], str] = ([], "")
    for fold in (False, True):
        how = "casefold" if fold else "normalised"
        inside = _search(nq, _blank(chunk.text, chunk.char_start, skip), chunk.char_start, chunk, fold)
        matches = inside + [m for m in _matches(nq, chunk, chunks, document_text, fold, skip) if m not in inside]
        whole = [m for m in matches if m.whole]
        if whole:
            return whole, how
        if matches and not cut[0]:
            cut = (matches, how)
    return cut


def closest_passage(nq: str, text: str) -> str:
    """The passage of ``text`` (normalised) most similar to the normalised quote ``nq``."""
    nt = norm(text)
    if not nt or not nq:
        return ""
    sm = difflib.SequenceMatcher(None, nt, nq, autojunk=False)
    blocks = sorted(sm.get_matching_blocks(), key=lambda b: -b.size)[:4]
    best, best_ratio = "", -1.0
    for b in blocks:
        if b.size == 0:
            continue
        s = max(0, b.a - b.b)
        e = min(len(nt), s + len(nq))
        s = nt.rfind(" ", 0, s) + 1 if s > 0 else 0          # widen to word boundaries
        e_sp = nt.find(" ", e)
        e = len(nt) if e_sp < 0 else e_sp
        cand = nt[s:e]
        r = difflib.SequenceMatcher(None, cand, nq, autojunk=False).ratio()
        if r > best_ratio:
            best, best_ratio = cand, r
    return best


def _not_found_message(quote: str, nq: str, chunk: ChunkView) -> str:
    near = closest_passage(nq, chunk.text)
    msg = f'quote "{_short(quote)}" not found in chunk {chunk.chunk_id}'
    if near:
        msg += f'; closest passage: "{_short(near)}"'
    return msg


def _short(s: str, n: int = _SHOW) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


# --------------------------------------------------------------------------- exact values

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_NUM = r"\d[\d,]*(?:\.\d+)*"
_UNITS = (r"(?:business days?|calendar days?|working days?|days?|months?|years?|hours?|weeks?|minutes?|"
          r"units?|shares?|kg|km|miles?|lbs?|tons?|seats?|users?|licenses?|copies)")
_SCALE = r"(?i:million|billion|thousand|trillion)\b"  # part of the value: "$5" is not "$5 Million"
_SIGN = r"(?:(?<![\w.,)-])-)?"  # a minus sign belongs to the value ("-5%" is not "5%")
_CODES = "USD|EUR|GBP|CHF|JPY|CAD|AUD|INR|RMB|CNY"
# Where a quote may not start or end (``_splits``): right after a currency sign, right before a percent sign.
_SIGN_BEFORE = re.compile(rf"(?:[$€£¥₹]|(?<![A-Za-z])(?:{_CODES}))[ \t]?$")
_PERCENT_AFTER = re.compile(r"[ \t]?(?:%|(?i:per\s?cent)\b)")
_DIGIT_AFTER = re.compile(r"[ \t]?\d")
# A currency or a percent sign belongs to its number: "247.83" is not "$247.83", "5 per year" not "5% per year".
_NO_CURRENCY_BEFORE = "".join(rf"(?<!{c})(?<!{c}\s)" for c in ["[$€£¥₹]", *_CODES.split("|")])
_NO_UNIT_AFTER = r"(?!\s?(?:%|(?i:per\s?cent|dollars|euros|pounds)\b))"
_HAS_UNIT_AFTER = re.compile(r"(?:%|(?i:per\s?cent|dollars|euros|pounds|USD|EUR|GBP))$")
_VALUE_PATTERNS = [
    # money: $247.83, € 1.000, USD 5,000, US$10 million, 5,000 dollars
    rf"{_SIGN}(?:(?:US\$|[$€£¥₹])\s?|\b(?:{_CODES})\s?){_NUM}(?:\s?{_SCALE})?",
    rf"\b{_NUM}\s?(?:{_SCALE}\s)?\s?(?:dollars|euros|pounds|USD|EUR|GBP)\b",
    # percentages
    rf"{_SIGN}\b{_NUM}\s?(?:%|percent\b|per cent\b)",
    # dates
    rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b",
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:day\s+)?(?:of\s+)?{_MONTH},?\s+\d{{4}}\b",
    r"\b\d{4}-\d{2}-\d{2}\b",
    r"\b\d{4}[/.]\d{1,2}[/.]\d{1,2}\b",
    r"\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b",
    # identifiers: cust_4711, INV-2020-001, A12B, PO#123
    r"\b[A-Za-z][A-Za-z0-9]*(?:[_#-]+[A-Za-z0-9]+)*[_#-]*\d[A-Za-z0-9_#-]*\b",
    r"\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b",
    # numbers with units
    rf"\b{_NUM}\s?{_UNITS}\b",
    # any other number, with letters glued to it ("29.5mL", "150gm", "3x")
    rf"\b{_NUM}[A-Za-z]*",
]
_VALUE_RE = re.compile("|".join(f"(?:{p})" for p in _VALUE_PATTERNS))


def exact_values(text: str) -> list[str]:
    """Values in ``text`` that must be quoted verbatim, in order, de-duplicated.

    The regex alternatives are tried most specific first, so "$247.83" is one value
    (not "247.83"), "30 days" one value, "cust_4711" one value.
    """
    out: list[str] = []
    for m in _VALUE_RE.finditer(norm(text)):
        v = m.group(0).rstrip(".,;:-_#")
        if any(ch.isdigit() for ch in v) and v not in out:
            out.append(v)
    return out


_UNIT_WORD = re.compile(rf"(?<=\d)(\s?)((?i:{_UNITS}|million|billion|thousand|trillion))\b")


def _loose(s: str) -> str:
    """Forgive only layout around a value: parentheses around a whole number ("thirty (30) days"), a
    space after a currency sign, and the capitals of a unit or scale word after a number ("30 Days" is
    "30 days", "$5 Million" "$5 million"). "5(1)" stays "5(1)"."""
    s = re.sub(r"(?<![\w.,])\((\d[\d,.]*)\)", r"\1", norm(s))
    s = _UNIT_WORD.sub(lambda m: m.group(1) + m.group(2).lower(), s)
    return re.sub(r"(US\$|[$€£¥₹])\s+(?=\d)", r"\1", s)




def _contains_value(hay: str, value: str) -> bool:
    """``value`` in ``hay`` as a whole: no digit, letter or decimal on either side, no minus sign
    before it unless it has one, no "million" after it unless it has one ("$5" is not "$5 million"),
    no currency sign before it and no "%" or currency word after it unless it has them ("247.83" is
    not "$247.83")."""
    pat = r"(?<![A-Za-z0-9])(?<!\d[.,])" + re.escape(value) + r"(?![A-Za-z0-9])(?![.,]\d)"
    if not value.startswith("-"):
        pat = r"(?<![\s(]-)(?<!^-)" + pat
    if value[:1].isdigit():
        pat = _NO_CURRENCY_BEFORE + pat
    if not _HAS_UNIT_AFTER.search(value):
        pat += _NO_UNIT_AFTER
    if not re.search(_SCALE + "$", value):
        pat += r"(?!\s?" + _SCALE + ")"
    return re.search(pat, hay) is not None


class ValueSource:
    """Texts that values are looked up in, normalised and scanned once: a summary checks every value
    of every point against one whole document."""

    def __init__(self, cited: Sequence[str]):
        self.text = " \u2016 ".join(norm(c) for c in cited)
        self.loose = _loose(self.text)
        self.values = exact_values(self.text)  # the values the texts hold, in order
        self._held = set(self.values)

    def absent(self, values: Sequence[str]) -> list[str]:
        """The ``values`` that do not appear verbatim here (layout around them forgiven)."""
        return [v for v in values if not (v in self._held or _contains_value(self.text, v)
                                          or _contains_value(self.loose, _loose(v)))]


def check_values(values: Sequence[str], cited: Sequence[str]) -> list[str]:
    """Errors for values that do not appear verbatim in the cited texts."""
    source = ValueSource(cited)
    errs = []
    for v in source.absent(values):
        cands = [c for c in source.values if c != v]
        similar = difflib.get_close_matches(v, cands, n=3, cutoff=0.3) or cands[:3]
        hint = (" (the cited text has: " + ", ".join(f'"{c}"' for c in similar) + ")") if similar else ""
        errs.append(f'value "{v}" in clause_text does not appear verbatim in the cited text{hint}; '
                    "copy values exactly as the source writes them, never round or reformat them")
    return errs
