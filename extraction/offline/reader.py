"""Offline extraction engine: no network, no model calls of its own; pure and deterministic.

Given a clause type and the chunks retrieved for it, it scores every sentence of
those chunks against the clause's retrieval query and returns the best verbatim
passage(s) as an ``extract_clause`` tool input, or ``not_found`` when the best
score is under ``threshold``. The output goes through the same citation
verifier as the model's answers.

Sentence score, in [0, 1] (a weighted mean over the signals available):
- ``embed`` (optional, ``embed(list[str]) -> np.ndarray``): cosine between the
  query and the sentence embeddings, weight 0.60;
- lexical overlap with the query and the type's name (saturating in the number
  of distinct query stems and bigrams matched), weight 0.40;
- the chunk's own retrieval cosine (``ScoredChunk.cosine``) when given, weight 0.15.

Default thresholds (priors; calibrate them with the evaluate command):
- with an embedding signal, 0.35: for MiniLM-class sentence embeddings the cosine
  of unrelated sentence pairs sits around 0.0-0.15 and that of a sentence and a
  query on the same topic around 0.35-0.7, so 0.35 is the lower edge of "on topic";
- lexical only, 0.5: three distinct query stems/phrases (1 - e^-1 = 0.63 > 0.5 >
  0.49 for two). Two shared terms is what any contract sentence near the topic has, so
  a two-term bar would accept most absent clause types (docs/decisions.md,
  extraction.offline.reader.DEFAULT_THRESHOLD and LEXICAL_THRESHOLD).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from extraction.catalog import TEXT, ClauseType
from extraction.docview import ScoredChunk
from extraction.evaluation.stratify import LIST_SEPARATOR
from extraction.lexical import terms
from ingest.chunker import ChunkSpec
from ingest.headings import line_heading, title_line
from ingest.pages import PageTable, page_of
from ingest.sentences import evidence_sentences

DEFAULT_THRESHOLD = 0.35  # when an embedding signal is present
LEXICAL_THRESHOLD = 0.5  # lexical overlap alone
# Signal weights, tuned with extract_offline's relative cutoff (docs/decisions.md,
# extraction.offline.reader.W_LEX).
W_EMBED, W_LEX, W_CHUNK = 0.60, 0.40, 0.15
# The retrieval rank of a sentence's chunk as a prior, weight W_RANK on 1/sqrt(1 + rank): higher-ranked
# chunks hold the clause more often (docs/decisions.md, extraction.offline.reader.W_RANK).
W_RANK = 0.10
LEX_SCALE = 3.0  # lexical = 1 - exp(-matches / LEX_SCALE)
NOT_FOUND = "not_found"

Embed = Callable[[list[str]], "object"]  # returns an (n, d) array-like

_DATE = re.compile(
    r"\b(?:(?i:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s+\d{1,2}(?:st|nd|rd|th)?\s?,?\s+\d{4}"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:day\s+)?(?:of\s+)?(?i:January|February|March|April|May|June|July|August|"
    r"September|October|November|December)\s?,?\s+\d{4}"
    r"|\d{1,2}/\d{1,2}/\d{2,4}|\d{4}-\d{2}-\d{2})\b"
    # a date left blank in a draft or a filed form: "[ ] day of [ ], 2020", "[·], 2019", "March __, 2020"
    r"|(?:\[[^\]\n]{0,15}\]|_{2,})(?:\s+day\s+of\s+(?:\[[^\]\n]{0,15}\]|_{2,}|[A-Z][a-z]{2,8}))?,?\s+(?:\d{4}|20_+)"
    r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+"
    r"(?:\[[^\]\n]{0,15}\]|_{2,}),?\s+(?:\d{4}|20_+)"
    # ...or with its blanks lost in text extraction: "this day of , 2009"
    r"|\bday\s+of\s*,\s*\d{4}\b"
)
_TITLE_WORD = r"(?:[A-Z][\w&'’\-]*,?|and|of|for|to|the|on|in)"
_TITLE_NOUN = (
    r"(?:Agreement|Contract|License|Licence|Amendment|Addendum|Memorandum|Deed|Terms|Conditions|Form|Order"
    r"|Term Sheet|Lease)"
)
_UPPER_NOUN = (
    r"\b(?:AGREEMENT|CONTRACT|LICENSE|LICENCE|AMENDMENT|ADDENDUM|MEMORANDUM|ARRANGEMENT|TERMS|DEED|NOTE|PLAN"
    r"|STATEMENT OF WORK|TERM SHEET|LEASE)\b"
)
# The title: an upper-case heading line (or two, when the first names the kind and the second is the
# noun alone: "COMMERCIAL LEASE" over "AGREEMENT"), a Title Case line ending in a document noun (or in
# it and a year: "Reseller Programme Terms 2026"; either without a Markdown heading's "#"), or the name
# the preamble gives the contract ("This Consulting and Product Development Agreement (the ...").
_TITLE = re.compile(
    rf"^(?:#{{1,6}}[ \t]+)?(?P<upper>(?!#)(?:[A-Z][A-Z&'’\- ]{{1,60}}\n[ \t]*(?={_UPPER_NOUN}))?"
    rf"[^a-z\n]{{0,80}}{_UPPER_NOUN}[^a-z\n]{{0,80}})$"
    rf"|^[ \t]*(?:#{{1,6}}[ \t]+)?(?P<line>(?:{_TITLE_WORD}[ \t]+){{1,8}}{_TITLE_NOUN}(?:[ \t]+\d{{4}})?)"
    r"[ \t]*$"
    rf"|\bThis\s+(?P<preamble>(?:{_TITLE_WORD}\s+){{1,8}}{_TITLE_NOUN})\b",
    re.M,
)
_MARKDOWN_HEADING = re.compile(r"#{1,6}[ \t]+(?=\S)")
# a party: one to six capitalised words (or "&" between them: "Keswick & Rowe LLP") ending in a company
# form ("Eton Pharmaceuticals, Inc.", "ADAMS GOLF, LTD.", "Tri City National Bank"), a trust or a fund
# with its series ("Meridian Receivables Trust 2026-1", "RGA Capital Trust I", "Morgan Stanley Direct
# Lending Fund")
# (the form in Title or upper case: "a Delaware corporation" describes a party, it does not name one)
_FORMS = (
    "Inc.?",
    "Incorporated",
    "Corp.",
    "Corporation",
    "Company",
    "Co.",
    "Ltd.?",
    "Limited Partnership",  # before "Limited": the longer form is tried first where both start
    "Limited",
    "GmbH",
    "AG",
    "Bank",
)
_SERIES = (
    r"(?:Trust|Fund|TRUST|FUND)(?:[ \t]+(?:\d{4}-[A-Z0-9]{1,3}|[IVX]{1,4}(?![A-Za-z0-9])))?"
    r"(?:,?[ \t]+(?:Inc\.?|INC\.?)(?![A-Za-z]))?"  # "HERTZ GROUP REALTY TRUST, INC."
)
# Forms that are also short words ("AS", "SE") name a party only after Title Case words: "Halvorsen
# Analytics AS", never "REFERRED TO AS".
_TITLE_CASE_FORMS = r"AS|ASA|A/S|ApS|AB|Oyj?|SE|SAS|S\.A\.S\.|SARL|S\.r\.l\.|K\.K\.|KG"
_PARTY = re.compile(
    r"\b(?:[A-Z][A-Za-z0-9&'’.\-]*,?[ \t]+(?:(?:[A-Z][A-Za-z0-9&'’.\-]*,?|&)[ \t]+){0,5}?(?:"
    + "|".join(f.replace(".", r"\.") for form in _FORMS for f in dict.fromkeys((form, form.upper())))
    + f"|{_SERIES}"
    + r"|L\.?L\.?C\.?|L\.P\.|LLP|PLC|S\.A\.|N\.V\.|B\.V\.|S\.p\.A\.)"
    + r"|[A-Z][a-z][A-Za-z0-9&'’.\-]*,?[ \t]+(?:(?:[A-Z][a-z][A-Za-z0-9&'’.\-]*,?|&)[ \t]+){0,5}?"
    + rf"(?:{_TITLE_CASE_FORMS}))(?![A-Za-z])"
)
# "a Nevada Corporation", "a Florida Limited Liability Company", "a registered Non-banking Financial
# Company" describe a party, they do not name one ("an affiliate of HOF Village, LLC" names one)
_DESCRIBED = re.compile(r"\b(?:a|an)\s+(?:[a-z]+\s+)?(?:[A-Z][A-Za-z\-]*\s+){0,2}(?:limited\s+)?$")
_LINK = r"[\s\"'“”‘’:,(]*"  # quotes, brackets and punctuation between a cue and its value
_CUE_WORDS = r"(?:as|of|on|from|upon|is|shall|be|will|become|means|date|the|this)"
# recitals tell the background: "WHEREAS, the parties entered into a Letter of Intent dated May 3, 2005" dates
# another document, not this one
RECITAL = re.compile(
    r"^\W*(?:WITNESSETH\W*)?(?:[A-Z0-9]{1,3}[.)]\s+)?"
    r"(?:WHEREAS|Whereas|RECITALS?|Recitals?|BACKGROUND)\b"
)
# a definition says what a word means, not what the parties agreed: the royalty clause is "Licensee shall
# pay 5% of Net Sales", not "“Net Sales” means ..." (docs/decisions.md,
# extraction.offline.reader.DEFINITION_DISCOUNT)
DEFINITION_DISCOUNT = 0.8
DEFINITION = re.compile(
    r"""
    ^\W*(?:[\dA-Za-z]{1,3}(?:\.\d+)*[.)]?\s+)?                            # a clause number: "1.22", "a)"
    (?:(?:For\ (?:the\ )?purposes?\ of\ this\ \w+(?:\ [\d.]+)?|As\ used\ (?:herein|in\ this\ \w+)),?\s+)?
    (?:the\ term\s+)?
    (?:[“"][^”"]{1,60}[”"]                                                 # a quoted term...
      |[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,3}(?=\s+(?:shall\s+)?means?\b))     # ...or a capitalised one
    (?:\s*\([^)]{0,40}\))?\s+
    (?:shall\s+)?(?:means?|includes?|shall\ be\ defined\ as|is\ defined\ as|refers?\ to)\b""",
    re.I | re.X,
)
# a clause binds someone: a sentence with no operative word ("shall", "may", "grants", "warrants" ...) is a
# heading, a table-of-contents entry or a legend, and keeps OPERATIVE_DISCOUNT of its score for a text
# clause (docs/decisions.md, extraction.offline.reader.OPERATIVE_DISCOUNT)
OPERATIVE_DISCOUNT = 0.9
OPERATIVE = re.compile(
    r"\b(?:shall|may|will|must|agrees?|hereby|can|cannot|entitled|obligat\w*|required?|not|"
    r"grants?|granted|acknowledges?|represents?|warrants?|covenants?|undertakes?)\b",
    re.I,
)
# a right to end the contract for convenience needs no cause: a sentence that names one (breach, insolvency,
# force majeure, a change of control) and says nothing like "without cause" is termination for cause
# (extraction/agent/skills/termination-for-convenience) and keeps CAUSE_DISCOUNT of its score
# (docs/decisions.md, extraction.offline.reader.CAUSE_DISCOUNT)
CAUSE_DISCOUNT = 0.8
CAUSE = re.compile(
    r"\b(?:breach\w*|insolven\w*|bankrupt\w*|force\s+majeure|default\w*|receiver\w*|liquidat\w*|"
    r"change\s+(?:of|in)\s+control|fail\w*\s+to\s+(?:cure|pay|perform|remedy))\b",
    re.I,
)
NO_CAUSE = re.compile(
    r"\b(?:without\s+(?:any\s+)?(?:cause|reason)|for\s+(?:its\s+)?convenience|for\s+any\s+reason|"
    r"for\s+no\s+reason|(?:sole|absolute)\s+discretion|for\s+whatever\s+reason)\b",
    re.I,
)
PATTERN_BONUS = 2.0  # a pattern match counts as two query-term matches
PREAMBLE_BONUS = 1.0  # ...and being in the document's first chunk as one more
HEADING_DISCOUNT = 0.5  # a heading names a clause; its score passes to the text it heads
ADJACENT_GAP = 4  # characters (whitespace) between two sentences that follow each other


@dataclass(frozen=True)
class TypeRules:
    """What the engine knows of a clause type beyond its wordings; most types have no rules."""

    value: re.Pattern | None = None  # a value type: the answer is this phrase inside a sentence
    cue: str | None = None  # a value its sentence names ("effective as of <date>") wins
    preamble: bool = False  # stated in the opening lines: the first chunk scores more
    not_in_recitals: bool = False  # a recital's value belongs to another document (RECITAL)
    needs_no_cause: bool = False  # a sentence naming a cause (CAUSE) is not this clause
    every: bool = False  # a list: the answer is every value its sentence states, each cited


# "effective as of July 15, 2005" is the effective date even when the preamble opens with another date
# ("dated May 3, 2005"). Types without rules here, and why: docs/decisions.md,
# extraction.offline.reader.RULES.
RULES: dict[str, TypeRules] = {
    "Document Name": TypeRules(value=_TITLE, preamble=True),
    "Parties": TypeRules(value=_PARTY, preamble=True, every=True),
    "Agreement Date": TypeRules(value=_DATE, preamble=True, not_in_recitals=True),
    "Effective Date": TypeRules(
        value=_DATE, cue=r"effective|commenc\w*", preamble=True, not_in_recitals=True
    ),
    "Termination For Convenience": TypeRules(needs_no_cause=True),
}
NO_RULES = TypeRules()

Spans = Sequence[tuple[int, int]]


# --------------------------------------------------------------------------- text helpers


def lexical_score(query_terms: Sequence[str], sentence: str, bonus: float = 0.0) -> float:
    """1 - exp(-m / LEX_SCALE), m = distinct query stems in the sentence + query bigrams in it
    (+ ``bonus`` matches for type-specific evidence such as a date in an Agreement Date sentence)."""
    s_terms = terms(sentence)
    s_set = set(s_terms)
    s_bigrams = set(zip(s_terms, s_terms[1:]))
    q_set = set(query_terms)
    q_bigrams = set(zip(query_terms, query_terms[1:]))
    m = len(q_set & s_set) + len(q_bigrams & s_bigrams) + bonus
    return 1.0 - math.exp(-m / LEX_SCALE)


# --------------------------------------------------------------------------- engine


@dataclass(frozen=True)
class Candidate:
    chunk_id: str
    chunk_rank: int
    start: int  # absolute offsets of the sentence
    end: int
    text: str
    score: float
    lexical: float
    embedding: float | None


@dataclass(frozen=True)
class OfflineResult:
    tool_input: dict  # {clause_id, clause_type, clause_text, citations:[{chunk_id, page, quote}]}
    best_score: float
    threshold: float
    candidates: tuple[Candidate, ...]  # best first
    value_cued: bool = False  # the answer is a value its sentence names ("effective as of <date>")
    offsets: tuple[int, ...] = ()  # where each citation's quote starts in the document (a repeated
    # quote is verified at the place chosen here, not its first copy)

    @property
    def not_found(self) -> bool:
        return self.tool_input["clause_text"] == NOT_FOUND


def unit_rows(vectors) -> np.ndarray:
    """``vectors`` (n x d) scaled to unit length (a zero row stays zero)."""
    v = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


def _cosines(embed: Embed, queries: Sequence[str], sentences: list[str]) -> list[float]:
    """Each sentence's best cosine to any of ``queries`` (one embedding call)."""
    vecs = unit_rows(embed(list(queries) + sentences))
    q = len(queries)
    return [float(x) for x in (vecs[q:] @ vecs[:q].T).max(axis=1)]


def score_sentences(
    clause: ClauseType,
    retrieved: Sequence[ScoredChunk | ChunkSpec],
    *,
    embed: Embed | None = None,
    furniture: Spans = (),
    learned: Mapping[tuple[int, int], float] | None = None,
    learned_weight: float = 0.0,
) -> list[Candidate]:
    """Every sentence of the retrieved chunks, scored; best first (deterministic ties).

    A sentence seen in two overlapping chunks is scored once (first ranked chunk);
    a fragment cut by a chunk edge is dropped when a fuller copy contains it; a sentence
    inside page ``furniture`` (absolute spans of running headers/footers) is never a
    candidate. A heading ("12. LIMITATION OF LIABILITY") or a bare title ("Governing Law.") names a
    clause without being it: for clause (not value) types the sentence right after it takes the
    heading's score when that is higher, and the heading keeps ``HEADING_DISCOUNT`` of its own (bare
    titles too, for a free question that names one). A definition ("“Net Sales” means ...") keeps
    ``DEFINITION_DISCOUNT`` of its score; a sentence of a text clause with no operative word keeps
    ``OPERATIVE_DISCOUNT``. A sentence's embedding similarity is its best cosine to the clause's
    query or its example clause. Why: docs/decisions.md, extraction.offline.reader.score_sentences.
    ``learned``: the clause finder's probability per sentence span (``extraction.finder``); the score
    is then ``learned_weight`` of it and the rest of the score above, before the discounts.
    """
    scored = [r if isinstance(r, ScoredChunk) else ScoredChunk(r) for r in retrieved]
    q_terms = terms(f"{clause.name} {clause.query}")
    found: dict[tuple[int, int], tuple[int, ScoredChunk, str]] = {}
    for rank, sc in enumerate(scored):
        c = sc.chunk
        for s, e in evidence_sentences(c.text):
            found.setdefault((c.char_start + s, c.char_start + e), (rank, sc, c.text[s:e]))
    spans = sorted(found)
    raw = [
        (found[k][0], found[k][1], k[0], k[1], found[k][2])
        for k in spans
        if not any(o != k and o[0] <= k[0] and k[1] <= o[1] for o in spans)
        and not _inside(k[0], k[1], furniture)
    ]
    if not raw:
        return []
    queries = [clause.query] + ([clause.example] if clause.example.strip() else [])
    cos: Sequence[float | None] = (
        [None] * len(raw) if embed is None else _cosines(embed, queries, [r[4] for r in raw])
    )
    rules = RULES.get(clause.name, NO_RULES)
    narrow = rules.value
    out = []
    for (rank, sc, s, e, text), emb in zip(raw, cos):
        bonus = 0.0
        if narrow is not None:
            bonus += PATTERN_BONUS if narrow.search(text) else 0.0
        if rules.preamble and sc.chunk.ordinal == 0:
            bonus += PREAMBLE_BONUS
        lex = lexical_score(q_terms, text, bonus)
        parts = [(W_LEX, lex)]
        if emb is not None:
            parts.append((W_EMBED, max(0.0, emb)))
        if sc.cosine is not None:
            parts.append((W_CHUNK, max(0.0, sc.cosine)))
        parts.append((W_RANK, (1.0 + rank) ** -0.5))
        score = sum(w * v for w, v in parts) / sum(w for w, _ in parts)
        if learned is not None:
            score = (1.0 - learned_weight) * score + learned_weight * learned.get((s, e), 0.0)
        if narrow is not None and not narrow.search(text):
            score *= 0.5
        if narrow is None and DEFINITION.match(text):
            score *= DEFINITION_DISCOUNT
        if clause.kind == TEXT and not OPERATIVE.search(text):
            score *= OPERATIVE_DISCOUNT
        if rules.needs_no_cause and CAUSE.search(text) and not NO_CAUSE.search(text):
            score *= CAUSE_DISCOUNT
        out.append(Candidate(sc.chunk.chunk_id, rank, s, e, text, score, lex, emb))
    if narrow is None:
        out = _pass_on_heading_scores(out)
    out.sort(key=lambda c: (-round(c.score, 9), c.chunk_rank, c.start))
    return out


def _inside(start: int, end: int, spans: Spans) -> bool:
    return any(a <= start and end <= b for a, b in spans)


def is_heading(text: str) -> bool:
    """A one-line section heading ("ARTICLE 9", "9.2 Limitation of Liability", "INSURANCE")."""
    return "\n" not in text.strip() and line_heading(text.strip()) is not None


def names_a_clause(text: str) -> bool:
    """A heading, or a bare title: what is left when a clause number was cut off ("Section 11." |
    "Governing Law") or a clause opens with its title ("Governing Law. This Agreement ...")."""
    return is_heading(text) or ("\n" not in text.strip() and title_line(text) is not None)


def _pass_on_heading_scores(cands: list[Candidate]) -> list[Candidate]:
    """Candidates in document order, each heading's (or bare title's) score handed on to the sentence
    after it."""
    ordered = sorted(cands, key=lambda c: c.start)
    for i, c in enumerate(ordered):
        if not names_a_clause(c.text):
            continue
        nxt = ordered[i + 1] if i + 1 < len(ordered) else None
        if nxt is not None and 0 <= nxt.start - c.end <= ADJACENT_GAP and nxt.score < c.score:
            ordered[i + 1] = replace(nxt, score=c.score)
        ordered[i] = replace(c, score=c.score * HEADING_DISCOUNT)
    return ordered


def extract_offline(
    clause: ClauseType,
    retrieved: Sequence[ScoredChunk | ChunkSpec],
    *,
    pages: PageTable | None = None,
    embed: Embed | None = None,
    threshold: float | None = None,
    clause_id: str | None = None,
    max_citations: int = 2,
    relative_cutoff: float = 0.95,
    max_window: int = 2,
    furniture: Spans = (),
    learned: Mapping[tuple[int, int], float] | None = None,
    learned_weight: float = 0.0,
    best_first: bool = False,
) -> OfflineResult:
    """Pick verbatim passage(s) for ``clause`` from ``retrieved`` chunks, or not_found.

    ``threshold=None`` takes ``default_threshold`` (depends on the signals present).

    The best sentence is widened to a window of up to ``max_window`` adjacent
    sentences (in document order, across chunk edges) while a neighbour also scores at
    least ``relative_cutoff`` of the best; further passages (non-overlapping) are added up
    to ``max_citations`` when they score at least ``relative_cutoff`` of the best.
    Value types with a pattern (dates, document title, parties) answer with one phrase:
    the pattern's match in the best sentence or, for what a contract states in its
    preamble (title, parties, dates), its first match in the document's opening chunk,
    else its first match in document order among the sentences within ``relative_cutoff``
    of the best. ``furniture``: absolute spans of running headers/footers, never quoted
    (a filing stamp's date is not the agreement's). The passages are cited in document order (a
    clause reads as the contract does), or with ``best_first`` the best first (a free question's
    answer is its best passage; the others are further reading).

    The cutoff (0.95) goes with the lexical weight ``W_LEX`` (docs/decisions.md,
    extraction.offline.reader.W_LEX); further passages are not filtered by ``type_margin``
    (docs/decisions.md, extraction.offline.reader.extract_offline).
    """
    cands = score_sentences(
        clause, retrieved, embed=embed, furniture=furniture, learned=learned, learned_weight=learned_weight
    )
    if threshold is None:
        threshold = default_threshold(retrieved, embed)
    cid = clause_id or clause.slug
    best = cands[0].score if cands else 0.0
    if not cands or best < threshold:
        return OfflineResult(
            {"clause_id": cid, "clause_type": clause.name, "clause_text": NOT_FOUND, "citations": []},
            best,
            threshold,
            tuple(cands),
        )
    chunks = [r.chunk if isinstance(r, ScoredChunk) else r for r in retrieved]
    by_id = {c.chunk_id: c for c in chunks}
    floor = max(threshold, relative_cutoff * best)
    rules = RULES.get(clause.name, NO_RULES)
    if rules.value is not None:
        tool_input, cued, starts = _value_answer(clause, cid, rules, cands, floor, chunks, pages, furniture)
        return OfflineResult(tool_input, best, threshold, tuple(cands), value_cued=cued, offsets=starts)
    spans: list[tuple[str, int, int]] = []
    for cand in cands:
        if len(spans) >= max_citations or cand.score < floor:
            break
        if any(a < cand.end and cand.start < b for _, a, b in spans):
            continue
        wide = _widen(cand, cands, floor, max_window)
        if any(a < wide[2] and wide[1] < b for _, a, b in spans):
            wide = (cand.chunk_id, cand.start, cand.end)
        spans.append(wide)
    if not best_first:
        spans.sort(key=lambda x: x[1])
    citations, texts = [], []
    for chunk_id, a, b in spans:
        quote = _stitch(chunks, a, b)
        page = page_of(a, pages) if pages else by_id[chunk_id].page_start
        citations.append({"chunk_id": chunk_id, "page": page, "quote": quote})
        texts.append(quote)
    tool_input = {
        "clause_id": cid,
        "clause_type": clause.name,
        "clause_text": "\n\n".join(texts),
        "citations": citations,
    }
    return OfflineResult(tool_input, best, threshold, tuple(cands), offsets=tuple(a for _, a, _ in spans))


def _value_answer(
    clause: ClauseType,
    cid: str,
    rules: TypeRules,
    cands: Sequence[Candidate],
    floor: float,
    chunks: Sequence[ChunkSpec],
    pages: PageTable | None,
    furniture: Spans,
) -> tuple[dict, bool, tuple[int, ...]]:
    """One cited phrase for a value type (see :func:`extract_offline`), or for a list type
    (``TypeRules.every``: the parties) every phrase the chosen sentence states, each cited and
    joined by ``LIST_SEPARATOR``; the best sentence whole when no pattern match qualifies. Also says
    whether the phrase was named by the type's cue (``TypeRules.cue``): the earliest such value wins
    over the preamble's first date; and where each cited phrase starts."""
    opening = {c.chunk_id for c in chunks if c.ordinal == 0} if rules.preamble else set()
    pattern, cue = rules.value, rules.cue
    assert pattern is not None  # only a value type (``rules.value`` set) is answered here
    matches, cued = [], []  # (absolute start, phrase, candidate)
    found_in: dict[int, list[tuple[int, str, Candidate]]] = {}  # a candidate's matches, by id
    for cand in cands:
        if cand.score < floor and cand.chunk_id not in opening:
            continue
        if rules.not_in_recitals and RECITAL.match(cand.text):
            continue
        found = []
        for m in pattern.finditer(cand.text):
            group = m.lastgroup or 0  # a pattern's named group is the value inside its match
            phrase = m.group(group).strip()
            start = cand.start + m.start(group) + len(m.group(group)) - len(m.group(group).lstrip())
            described = rules.every and _DESCRIBED.search(cand.text, 0, start - cand.start)
            if phrase and not described and not _inside(start, start + len(phrase), furniture):
                found.append((start, phrase, cand))
        if found:
            matches.append(found[0])
            found_in[id(cand)] = found
        if cue is not None:
            cued += [f for f in found if _next_to_cue(cue, cand.text, f[0] - cand.start, len(f[1]))][:1]
    in_opening = [m for m in matches if m[2].chunk_id in opening]
    if cued:
        start, quote, cand = min(cued, key=lambda m: m[0])
    elif in_opening:
        start, quote, cand = min(in_opening, key=lambda m: m[0])
    elif matches and rules.preamble:
        start, quote, cand = min(matches, key=lambda m: m[0])
    elif matches:
        start, quote, cand = matches[0]
    else:  # the best sentence whole, without a Markdown heading's "#" (no page shows it)
        cand = cands[0]
        marker = _MARKDOWN_HEADING.match(cand.text)
        skip = marker.end() if marker else 0
        start, quote = cand.start + skip, cand.text[skip:]
    values = [(start, quote)]
    if rules.every and id(cand) in found_in:
        seen: set[str] = set()
        values = []
        for at, phrase, _ in found_in[id(cand)]:
            if phrase.casefold() not in seen:
                seen.add(phrase.casefold())
                values.append((at, phrase))
    first_page = next(c for c in chunks if c.chunk_id == cand.chunk_id).page_start
    citations = [
        {"chunk_id": cand.chunk_id, "page": page_of(at, pages) if pages else first_page, "quote": phrase}
        for at, phrase in values
    ]
    return (
        {
            "clause_id": cid,
            "clause_type": clause.name,
            "clause_text": LIST_SEPARATOR.join(phrase for _, phrase in values),
            "citations": citations,
        },
        bool(cued),
        tuple(at for at, _ in values),
    )


def _next_to_cue(cue: str, text: str, start: int, length: int) -> bool:
    """Is the value at ``text[start:start+length]`` named by a cue word (``TypeRules.cue``) right before
    it ("effective as of <date>", "“Effective Date” means <date>") or right after it ("<date> (the
    “Effective Date”)")? Only linking words may stand between: "commence on the Effective Date and
    last until <date>" does not name the date."""
    before = re.search(
        rf"\b(?:{cue}){_LINK}(?:{_CUE_WORDS}\b{_LINK}){{0,4}}$", text[max(0, start - 80) : start], re.I
    )
    after = re.match(
        rf"{_LINK}(?:(?:the|this)\s+{_LINK})?(?:{cue})\b", text[start + length : start + length + 80], re.I
    )
    return bool(before or after)


def section_match(
    clause: ClauseType, retrieved: Sequence[ScoredChunk | ChunkSpec], candidates: Sequence[Candidate]
) -> float:
    """Share of the clause name's content words found in the retrieved chunks' section headings
    (their section paths, and heading lines among the candidates): contracts title their clauses,
    so "15. GOVERNING LAW" is evidence that a Governing Law clause is there."""
    name_terms = set(terms(clause.name))
    if not name_terms:
        return 0.0
    chunks = [r.chunk if isinstance(r, ScoredChunk) else r for r in retrieved]
    headings = [c.section for c in chunks] + [c.text for c in candidates if is_heading(c.text)]
    return len(name_terms & set(terms(" ".join(headings)))) / len(name_terms)


def default_threshold(retrieved: Sequence[ScoredChunk | ChunkSpec], embed: Embed | None) -> float:
    """DEFAULT_THRESHOLD when an embedding signal is available, else LEXICAL_THRESHOLD."""
    has_cos = any(isinstance(r, ScoredChunk) and r.cosine is not None for r in retrieved)
    return DEFAULT_THRESHOLD if (embed is not None or has_cos) else LEXICAL_THRESHOLD


def _widen(
    best: Candidate, cands: Sequence[Candidate], floor: float, max_window: int
) -> tuple[str, int, int]:
    """Grow the best sentence with the sentences right before/after it (in document order,
    across chunk edges) while they also score >= floor; (chunk_id of best, start, end)."""
    ordered = sorted(cands, key=lambda c: c.start)
    i = next(k for k, c in enumerate(ordered) if c is best)
    lo = hi = i

    def adjacent(a: Candidate, b: Candidate) -> bool:
        return 0 <= b.start - a.end <= ADJACENT_GAP

    while hi - lo + 1 < max_window:
        left = ordered[lo - 1] if lo > 0 and adjacent(ordered[lo - 1], ordered[lo]) else None
        right = ordered[hi + 1] if hi + 1 < len(ordered) and adjacent(ordered[hi], ordered[hi + 1]) else None
        pick = max(
            (x for x in (left, right) if x is not None and x.score >= floor),
            key=lambda x: (x.score, -x.start),
            default=None,
        )
        if pick is None:
            break
        if pick is left:
            lo -= 1
        else:
            hi += 1
    return best.chunk_id, ordered[lo].start, ordered[hi].end


def _stitch(chunks: Sequence[ChunkSpec], a: int, b: int) -> str:
    """Source text of absolute ``[a, b)`` from chunks that cover it contiguously."""
    out, pos = [], a
    for c in sorted(chunks, key=lambda c: (c.char_start, -c.char_end)):
        if c.char_start <= pos < c.char_end:
            take = c.text[pos - c.char_start : min(b, c.char_end) - c.char_start]
            out.append(take)
            pos += len(take)
            if pos >= b:
                break
    if pos < b:
        raise ValueError(f"span {a}-{b} is not covered by the retrieved chunks")
    return "".join(out)
