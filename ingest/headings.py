"""Recognise section headings in contract text: Markdown ``#`` headings and the plain-text
headings contracts use (``ARTICLE V``, ``Section 12.3 Indemnification``, ``12. INDEMNIFICATION``,
a short all-caps line), plus inline headings that open a clause (``5.2 Indemnification. Each
party shall ...``).

Each recogniser answers for one line (or a paragraph's opening) and returns a
:class:`Heading` with a nesting level (1 = article/part/exhibit or Markdown ``#``, 2 = a
top-level numbered or all-caps heading, 3+ = deeper numbering) or ``None``. The rules lean
towards *not* calling something a heading: a clause sentence, a table row, a table-of-contents
entry (ends with a page number) or a line of an all-caps disclaimer must stay text. Whether the
line stands alone (starts a paragraph) is the caller's job (:mod:`ingest.blocks`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_HEADING_CHARS = 120
MAX_TITLE_WORDS = 10


@dataclass(frozen=True)
class Heading:
    level: int
    label: str  # the heading as shown in a section path, e.g. "5.2 Indemnification"
    bare: bool = False  # "ARTICLE V" with no title: the next line may carry the title


_MD_HEADING = re.compile(r"#{1,6}(?=\s)")
_EMPHASIS = re.compile(r"^(\*\*|__)(.+?)\1$")
_KEYWORD = re.compile(
    r"(ARTICLE|Article|PART|Part|CHAPTER|Chapter|SCHEDULE|Schedule|EXHIBIT|Exhibit|ANNEX|Annex|"
    r"APPENDIX|Appendix|ADDENDUM|Addendum|ATTACHMENT|Attachment)"
    r"\s+([IVXLCDM]{1,7}|\d{1,3}(?:\.\d{1,3})*[A-Za-z]?|[A-Z])\b\.?(?:\s*[-–—:.]*\s*(.*))?$"
)
_SECTION = re.compile(r"(?:Section|SECTION|Sec\.|SEC\.|§)\s*(\d{1,3}(?:\.\d{1,3})*[A-Za-z]?)\.?\s*(.*)$")
_NUMBERED = re.compile(r"(\d{1,3}(?:\.\d{1,3})*)\.?\s+(.+)$")
_LETTERED = re.compile(r"([A-Z]|[IVX]{1,5})[.)]\s+(.+)$")
_INLINE = re.compile(
    r"(?:(?:Section|SECTION)\s+)?(\d{1,3}(?:\.\d{1,3})*)\.?\s+([A-Z][^.:;\n]{1,80}?)[.:](?=\s)"
)
_TOC_PAGE = re.compile(r"(?:\s|\.{2,})\d{1,3}$")
_SENTENCE_WORDS = re.compile(
    r"\b(?:shall|will|must|may|agrees?|is|are|was|were|be|been|has|have|hereby|means)\b"
)
_CONNECTOR_END = re.compile(r"\b(?:and|or|of|the|to|for|in|with|by|a|an|on|at|as|any|such)$", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
_WHITESPACE = re.compile(r"\s+")
_NON_LETTER = re.compile(r"[\W\d_]+")
_SMALL_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "as",
        "at",
        "but",
        "by",
        "for",
        "from",
        "in",
        "into",
        "of",
        "on",
        "or",
        "per",
        "the",
        "to",
        "upon",
        "via",
        "with",
    ]
)


def line_heading(line: str) -> Heading | None:
    """Classify one stripped line as a heading, or return None."""
    if not line or len(line) > MAX_HEADING_CHARS + 10:
        return None
    m = _MD_HEADING.match(line)
    if m:
        label = line[m.end() :].strip().strip("#").strip()
        label = _strip_emphasis(label)
        return Heading(len(m.group()), _tidy(label)) if label else None
    if len(line) > MAX_HEADING_CHARS or line.count(" ") > MAX_TITLE_WORDS + 4:
        return None  # too long for a heading (quick reject: most lines are sentences)
    line = _strip_emphasis(line)
    if line.startswith("|"):
        return None  # a table row
    m = _KEYWORD.match(line)
    if m:
        keyword, ident, title = m.group(1), m.group(2), (m.group(3) or "").strip()
        if not title:
            return Heading(1, f"{keyword} {ident}", bare=True)
        if _title_like(title, allow_sentence_case=keyword.isupper()):
            return Heading(1, _tidy(f"{keyword} {ident} {title}"))
        return None
    m = _SECTION.match(line)
    if m:
        number, title = m.group(1), m.group(2).strip()
        if not title or _title_like(title, allow_sentence_case=True):
            return Heading(_number_level(number), _tidy(line))
        return None
    m = _NUMBERED.match(line)
    if m and _plausible_number(m.group(1)):
        if _title_like(m.group(2), allow_sentence_case=True):
            return Heading(_number_level(m.group(1)), _tidy(line))
        return None
    m = _LETTERED.match(line)
    if m:
        title = m.group(2)
        if _is_caps(title) and _title_like(title, allow_sentence_case=False):
            return Heading(2, _tidy(line))
        return None
    if _is_caps(line) and _title_like(line, allow_sentence_case=False) and len(line.split()) <= 8:
        return Heading(2, _tidy(line))
    return None


def inline_heading(paragraph_start: str) -> Heading | None:
    """A numbered clause that opens with its own title: ``"12.3 Indemnification. Each ..."``."""
    m = _INLINE.match(paragraph_start)
    if not m or not _plausible_number(m.group(1)):
        return None
    title = m.group(2).strip()
    if len(title.split()) > 8 or not (_is_caps(title) or _is_title_case(title)):
        return None
    if _SENTENCE_WORDS.search(title):
        return None
    return Heading(_number_level(m.group(1)), _tidy(paragraph_start[: m.end() - 1]))


def caps_title_words(line: str) -> int:
    """Words of an unnumbered all-caps line that could be (part of) a heading, else 0."""
    line = _strip_emphasis(line)
    if not _is_caps(line) or _KEYWORD.match(line) or _NUMBERED.match(line) or _LETTERED.match(line):
        return 0
    core = line.rstrip(".:")
    letters = sum(ch.isalpha() for ch in core)
    if letters < 0.5 * len(core.replace(" ", "")) or core[-1:] in ",;":
        return 0
    return len(core.split())


def starts_with_keyword(line: str) -> bool:
    """Whether the line opens with ARTICLE/Section/EXHIBIT-style heading words."""
    return bool(_KEYWORD.match(line) or _SECTION.match(line))


def title_line(line: str) -> str | None:
    """The title of a bare ``ARTICLE V`` when it sits on the following line, else None."""
    line = _strip_emphasis(line.strip())
    if line and _title_like(line, allow_sentence_case=False) and (_is_caps(line) or _is_title_case(line)):
        return line.rstrip(".:")
    return None


def _title_like(title: str, *, allow_sentence_case: bool) -> bool:
    """Short, not a sentence, not a table-of-contents entry, capitalised like a heading."""
    title = title.strip()
    if not title or len(title) > MAX_HEADING_CHARS:
        return False
    if _TOC_PAGE.search(title) and len(title.split()) > 1:
        return False  # "Indemnification ....... 12": a table-of-contents entry
    core = title.rstrip(".:").strip()
    if not core or core[-1] in ",;(" or _CONNECTOR_END.search(core):
        return False
    words = core.split()
    if len(words) > MAX_TITLE_WORDS or core.count(",") > 1 or ". " in core:
        return False
    letters = len(_NON_LETTER.sub("", core))
    if letters < 3 or letters < 0.5 * len(core.replace(" ", "")):
        return False  # numbers, redaction marks, amounts: not a heading
    if not (core[0].isupper() or core[0].isdigit() or core[0] in "\"“'("):
        return False
    if _is_caps(core):
        return True
    if _SENTENCE_WORDS.search(core):
        return False
    return allow_sentence_case or _is_title_case(core)


def _is_caps(text: str) -> bool:
    return text.isupper() and len(_NON_LETTER.sub("", text)) >= 3


def _is_title_case(text: str) -> bool:
    words = [w for w in _WORD.findall(text) if w.lower() not in _SMALL_WORDS]
    if not words:
        return False
    return sum(w[0].isupper() for w in words) >= 0.75 * len(words)


def _plausible_number(number: str) -> bool:
    """A clause number, not a year, an amount or a quantity."""
    first = number.split(".")[0]
    return len(first) <= 3 and int(first) <= 200


def _number_level(number: str) -> int:
    parts = [p for p in number.rstrip(".").split(".") if p]
    while len(parts) > 1 and parts[-1].strip("0") == "":
        parts.pop()  # "18.0" is a top-level number
    return 1 + len(parts)


def _strip_emphasis(text: str) -> str:
    m = _EMPHASIS.match(text)
    return m.group(2).strip() if m else text


def _tidy(label: str) -> str:
    label = _WHITESPACE.sub(" ", label).strip().rstrip(".:").strip()
    return label[:MAX_HEADING_CHARS]
