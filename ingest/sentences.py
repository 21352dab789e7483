"""Fast sentence boundaries for legal English, as character spans into the original text.

Why not pysbd: it is the maintained rule-based splitter, but it is far slower than chunking
needs and it splits legal references such as ``Section 2.(b)``. This
splitter looks only at candidate ends (``.``, ``!``, ``?`` plus closing quotes/brackets,
followed by whitespace) and rejects a candidate when:

* the next word starts in lower case (``Inc. and``, ``e.g. the``);
* the word before the period is a known abbreviation (``Inc.``, ``Corp.``, ``No.``,
  ``Sec.``, ``Art.``, ``et al.``, months, titles, ...) or has inner periods (``U.S.``,
  ``i.e.``, ``N.A.``, ``L.L.C.``);
* it is a single letter (an initial, ``John Q. Public``), unless it names a schedule or
  exhibit (``... in Exhibit A. The``);
* it is the enumerator opening a clause (``1.``, ``iv.``, ``(a).`` at the start of a line
  or sentence).

A missed boundary only makes a sentence longer; a false one cuts a clause, so doubtful
cases are resolved towards *no* boundary. ``bench/chunk_quality.py --splitter pysbd``
compares the two inside the chunker (figures: docs/decisions.md, ingest.sentences.sentence_spans).
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    [
        "inc",
        "corp",
        "co",
        "cos",
        "ltd",
        "llc",
        "llp",
        "lp",
        "plc",
        "pty",
        "bros",
        "assn",
        "assoc",
        "dept",
        "div",
        "mfg",
        "intl",
        "natl",
        "govt",
        "mr",
        "mrs",
        "ms",
        "messrs",
        "dr",
        "prof",
        "jr",
        "sr",
        "esq",
        "hon",
        "rev",
        "st",
        "ste",
        "ave",
        "blvd",
        "rd",
        "fl",
        "mt",
        "ft",
        "no",
        "nos",
        "sec",
        "secs",
        "art",
        "arts",
        "para",
        "paras",
        "par",
        "cl",
        "sch",
        "sched",
        "exh",
        "ex",
        "pt",
        "pts",
        "ch",
        "chap",
        "subsec",
        "subpara",
        "vol",
        "p",
        "pp",
        "fig",
        "figs",
        "ref",
        "reg",
        "regs",
        "stat",
        "ann",
        "supp",
        "amend",
        "cf",
        "viz",
        "al",
        "seq",
        "approx",
        "est",
        "min",
        "max",
        "avg",
        "incl",
        "excl",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "v",
        "vs",
        "tel",
        "fax",
        "attn",
        "dba",
        "cal",
        "del",
        "fla",
        "mass",
        "tex",
        "ill",
    ]
)
# Words that, before a single capital letter, make "X." a reference ending a sentence.
REFERENCE_WORDS = frozenset(
    [
        "exhibit",
        "schedule",
        "annex",
        "appendix",
        "attachment",
        "addendum",
        "article",
        "part",
        "section",
        "clause",
        "item",
        "class",
        "series",
        "tranche",
        "plan",
    ]
)

_CANDIDATE = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)|[.!?]+[\"'”’)\]]*$")
_SPACE = re.compile(r"\s*")
_ANY_END = re.compile(r"[.!?]")
_INNER_PERIODS = re.compile(r"(?:[a-z]\.)+[a-z]{1,2}")
_ENUMERATOR = re.compile(r"\(?(?:\d{1,3}(?:\.\d{1,3})*|[ivxlc]{1,6}|[a-z])\)?")
_CLAUSE_BREAKS = (
    re.compile(
        r"(?<=[;:,])\s+(?=\((?:[a-z]{1,4}|[A-Z]|\d{1,2})\)\s)|\s+(?=(?:and|or)\s+\((?:[a-z]{1,4}|\d{1,2})\)\s)"
    ),
    re.compile(r"[;:](?=\s)"),
    re.compile(r",(?=\s)"),
    re.compile(r"\s"),
)


def _skip_space(text: str, pos: int, end: int) -> int:
    """The position after the spaces at ``pos`` (``\\s*`` always matches, if only the empty string)."""
    m = _SPACE.match(text, pos, end)
    return m.end() if m else pos


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans ``(s, e)`` of the sentences in ``text[start:end]``, in order.

    Each span starts at a non-space character and ends just after the sentence's last
    non-space character; together they cover every non-space character of the range.
    """
    if end is None:
        end = len(text)
    s = _skip_space(text, start, end)
    if s >= end:
        return []
    e = end
    while text[e - 1].isspace():
        e -= 1
    if _ANY_END.search(text, s, e - 1) is None:
        return [(s, e)]  # no sentence end before the last character: one sentence
    spans: list[tuple[int, int]] = []
    for m in _CANDIDATE.finditer(text, s, end):
        p = m.end()
        q = _skip_space(text, p, end)
        if q >= end:
            break
        if not _is_boundary(text, s, m.start(), m.group(), q):
            continue
        spans.append((s, p))
        s = q
    e = end
    while e > s and text[e - 1].isspace():
        e -= 1
    if e > s:
        spans.append((s, e))
    return spans


def _is_boundary(text: str, sentence_start: int, dot: int, punct: str, next_at: int) -> bool:
    nxt = text[next_at]
    if nxt.islower() or nxt in ",;:-–—":
        return False
    if punct[0] != ".":
        return True  # ? or ! followed by a capital
    if punct.startswith(".."):
        return True  # an ellipsis before a capital
    # The word before the period.
    w = dot
    while w > sentence_start and not text[w - 1].isspace():
        w -= 1
    word = text[w:dot]
    token = word.lstrip("(\"“'[").lower()
    if not token:
        return True
    if token in ABBREVIATIONS or _INNER_PERIODS.fullmatch(token):
        return False
    if len(token) == 1 and token.isalpha():
        return _previous_word(text, sentence_start, w).lower() in REFERENCE_WORDS
    return not (_ENUMERATOR.fullmatch(token) and _opens_clause(text, sentence_start, w))


def _previous_word(text: str, floor: int, before: int) -> str:
    e = before
    while e > floor and text[e - 1].isspace():
        e -= 1
    b = e
    while b > floor and not text[b - 1].isspace():
        b -= 1
    return text[b:e].strip("(\"“'[,")


def _opens_clause(text: str, sentence_start: int, word_start: int) -> bool:
    """True when the word is the first on its line or of its sentence (an enumerator)."""
    if word_start == sentence_start:
        return True
    i = word_start
    while i > sentence_start and text[i - 1] in " \t":
        i -= 1
    return i == sentence_start or text[i - 1] in "\n\f"


def split_oversized(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Cut one over-long sentence into pieces of at most ``max_chars`` characters.

    Last resort, used only for a single sentence longer than a chunk may be (long
    enumerations, run-on recitals, tables flattened to one line): each piece ends at the
    latest place that keeps it within the limit and at least 40% full, trying in order:
    before an enumerated item (``; (c) ...``), after clause punctuation (``;`` or ``:``),
    after a comma, at whitespace, and only then mid-word.
    Spans are trimmed like :func:`sentence_spans` spans.
    """
    pieces: list[tuple[int, int]] = []
    s = start
    while end - s > max_chars:
        limit = s + max_chars
        floor = s + int(0.4 * max_chars)
        cut = None
        for pattern in _CLAUSE_BREAKS:
            last = None
            for m in pattern.finditer(text, floor, limit):
                last = m
            if last is not None:
                cut = last.end() if last.group().strip() else last.start()
                break
        if cut is None or cut <= s:
            cut = limit
        e = cut
        while e > s and text[e - 1].isspace():
            e -= 1
        pieces.append((s, e))
        s = _skip_space(text, cut, end)
    if s < end:
        pieces.append((s, end))
    return pieces


# Sentences as units of evidence (the offline reader's and retrieval's sentence list).
MAX_SENTENCE_CHARS = 700  # longer sentences are cut at "; " boundaries
_UNIT_ABBREV = re.compile(
    r"(?:\b(?:Inc|Corp|Co|Ltd|No|NO|Nos|NOS|Mr|Mrs|Ms|Dr|St|Sec|Art|vs|etc|approx|Jr|Sr|L\.P|"
    r"U\.S|e\.g|i\.e|N\.A|S\.A)|\b[A-Z])\.$"
)
# a clause number alone before its full stop ("12. INDEMNIFICATION", "4.1. The term", a Markdown
# heading's "# 11. Governing Law"): no sentence end
_UNIT_ENUMERATOR = re.compile(r"(?:#{1,6}\s*)?\(?(?:\d{1,3}(?:\.\d{1,3})*|[ivxlcIVXLC]{1,6}|[A-Za-z])\)?")


# A Markdown table row ("| Fee | $1,950.00 |") and a Markdown heading ("# Territory"): lines, each between
# newlines or page breaks (each slide, sheet or page of a document starts after "\f", the last row of a
# sheet ends before it).
_TABLE_ROW = re.compile(r"(?:^|(?<=\f))[ \t]*\|[^\n\f]*\|[ \t]*(?=[\n\f]|\Z)", re.M)
_HEADING_LINE = re.compile(r"(?:^|(?<=\f))[ \t]*#{1,6}[ \t]+\S[^\n\f]*(?=[\n\f]|\Z)", re.M)


def evidence_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` as a reader scores it, whitespace trimmed, in order.

    Unlike :func:`sentence_spans` (the chunker's, which covers every non-space character), these
    are units of evidence: fragments without a word character are dropped.

    Breaks at ``.!?`` followed by space and a capital/digit/quote/bracket (not after
    common abbreviations or initials), at blank lines and page breaks, around each Markdown table
    row (a sheet's row is the answer to a question about its cells, never the whole sheet) and each
    Markdown heading line (a slide's or a Markdown file's body can follow its heading on the next
    line), and cuts sentences longer than ``MAX_SENTENCE_CHARS`` at ``; ``.
    """
    cuts = {0, len(text)}
    for m in re.finditer(r"[.!?][\"'”’)]?(?=\s+[\"'“‘(\[A-Z0-9])", text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not _UNIT_ABBREV.search(
            text[max(0, m.start() - 6) : m.start() + 1]
        ) and not _UNIT_ENUMERATOR.fullmatch(text[line_start : m.start()].strip()):
            cuts.add(m.end())
    for m in re.finditer(r"\n[ \t]*\n|\f", text):
        cuts.add(m.start())
        cuts.add(m.end())
    for m in _TABLE_ROW.finditer(text):  # a row of a sheet or table is one fact: a unit of its own
        cuts.add(m.start())
        cuts.add(m.end())
    for m in _HEADING_LINE.finditer(text):  # a heading names what follows, its own unit
        cuts.add(m.start())
        cuts.add(m.end())
    spans = []
    bounds = sorted(cuts)
    for a, b in zip(bounds, bounds[1:]):
        for s, e in _cut_long_unit(text, a, b):
            s, e = _trim_unit(text, s, e)
            if e - s >= 2 and re.search(r"\w", text[s:e]):
                spans.append((s, e))
    return spans


def _cut_long_unit(text: str, a: int, b: int) -> list[tuple[int, int]]:
    if b - a <= MAX_SENTENCE_CHARS:
        return [(a, b)]
    out, s = [], a
    for m in re.finditer(r";\s+", text[a:b]):
        e = a + m.end()
        if e - s >= MAX_SENTENCE_CHARS // 3:
            out.append((s, e))
            s = e
    out.append((s, b))
    return out


def _trim_unit(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e
