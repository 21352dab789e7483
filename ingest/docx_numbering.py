"""The clause numbers of auto-numbered DOCX paragraphs, computed as Word shows them.

A contract's clause numbers ("1.1", "(a)", "Schedule C", "ARTICLE IV") are usually Word list
numbering, not text. mammoth turns a numbered paragraph into a plain HTML list item and
markdownify then counts "1.", "2.", ... itself: "1.1" became "1.", lettered and roman items became
numbers, "Schedule C" became "1.", and a list interrupted by a plain paragraph started again. A
citation to "clause 2.1" could then not be found.

:class:`Labeller` follows Word's rules over ``numbering.xml``: each ``w:num`` points to an
``w:abstractNum`` whose levels give the format (``numFmt``), the pattern (``lvlText``, "%1.%2"), the
start value and when the level restarts (``lvlRestart``; by default when a shallower level is
used); a ``w:lvlOverride`` can replace a level or its start for one list. Lists that share an
abstract definition share its counters, as in Word. :func:`paragraph_numbering` finds a
paragraph's list and level, from its own ``w:numPr`` or its style's (``basedOn`` followed).
:mod:`ingest.docx_prep` writes the label at the start of the paragraph and takes the paragraph out
of mammoth's list handling. Bullets are left to mammoth (they are not clause numbers).

Pure functions over lxml elements; no Django. Not handled: ``numStyleLink`` indirection, and
formats other than decimal, zero-padded decimal, letters and roman numerals (they are written as
decimal numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

_PLACEHOLDER = re.compile(r"%([1-9])")
_ROMAN = (
    (1000, "m"),
    (900, "cm"),
    (500, "d"),
    (400, "cd"),
    (100, "c"),
    (90, "xc"),
    (50, "l"),
    (40, "xl"),
    (10, "x"),
    (9, "ix"),
    (5, "v"),
    (4, "iv"),
    (1, "i"),
)


@dataclass(frozen=True)
class Level:
    """One level of a list definition (``w:lvl``)."""

    fmt: str = "decimal"
    text: str = "%1."
    start: int = 1
    restart: int | None = None  # lvlRestart: 0 never; n: after a use of 1-based level n or shallower
    legal: bool = False  # isLgl: every number in the label as decimal
    suffix: str = "tab"  # what follows the label: tab, space or nothing


@dataclass
class Numbering:
    """``numbering.xml``: abstract definitions, and each list (``numId``) with its overrides."""

    abstract: dict[str, dict[int, Level]] = field(default_factory=dict)
    lists: dict[str, tuple[str, dict[int, Level], dict[int, int]]] = field(default_factory=dict)

    def level(self, num_id: str, ilvl: int) -> Level | None:
        if num_id not in self.lists:
            return None
        abstract_id, overrides, starts = self.lists[num_id]
        level = overrides.get(ilvl) or self.abstract.get(abstract_id, {}).get(ilvl)
        if level is None:
            return None
        return (
            Level(level.fmt, level.text, starts[ilvl], level.restart, level.legal, level.suffix)
            if ilvl in starts
            else level
        )


def read_numbering(root: etree._Element | None, w: str) -> Numbering:
    """Parse a ``w:numbering`` element (None: a document without numbering)."""
    numbering = Numbering()
    if root is None:
        return numbering
    for abstract in root.iterfind(f"{{{w}}}abstractNum"):
        numbering.abstract[abstract.get(f"{{{w}}}abstractNumId", "")] = {
            _int(lvl.get(f"{{{w}}}ilvl"), 0): _read_level(lvl, w) for lvl in abstract.iterfind(f"{{{w}}}lvl")
        }
    for num in root.iterfind(f"{{{w}}}num"):
        overrides: dict[int, Level] = {}
        starts: dict[int, int] = {}
        for override in num.iterfind(f"{{{w}}}lvlOverride"):
            ilvl = _int(override.get(f"{{{w}}}ilvl"), 0)
            lvl = override.find(f"{{{w}}}lvl")
            if lvl is not None:
                overrides[ilvl] = _read_level(lvl, w)
            start = override.find(f"{{{w}}}startOverride")
            if start is not None:
                starts[ilvl] = _int(start.get(f"{{{w}}}val"), 1)
        numbering.lists[num.get(f"{{{w}}}numId", "")] = (
            _val(num, "abstractNumId", w) or "",
            overrides,
            starts,
        )
    return numbering


def read_style_numbering(root: etree._Element | None, w: str) -> dict[str, tuple[str | None, int | None]]:
    """Paragraph style id → (numId, ilvl) its ``w:numPr`` gives, ``basedOn`` styles followed."""
    own: dict[str, tuple[str | None, int | None]] = {}
    parent: dict[str, str] = {}
    for style in root.iterfind(f"{{{w}}}style") if root is not None else ():
        style_id = style.get(f"{{{w}}}styleId", "")
        num_pr = style.find(f"{{{w}}}pPr/{{{w}}}numPr")
        if num_pr is not None:
            own[style_id] = (_val(num_pr, "numId", w), _opt_int(_val(num_pr, "ilvl", w)))
        based_on = _val(style, "basedOn", w)
        if based_on:
            parent[style_id] = based_on
    resolved: dict[str, tuple[str | None, int | None]] = {}
    for style_id in set(own) | set(parent):
        seen: set[str] = set()
        current: str | None = style_id
        while current and current not in own and current not in seen:
            seen.add(current)
            current = parent.get(current)
        if current in own:
            resolved[style_id] = own[current]
    return resolved


def paragraph_numbering(
    paragraph: etree._Element, w: str, styles: dict[str, tuple[str | None, int | None]]
) -> tuple[str, int] | None:
    """(numId, ilvl) of the list ``paragraph`` belongs to, or None; numId "0" means "not numbered"."""
    ppr = paragraph.find(f"{{{w}}}pPr")
    if ppr is None:
        return None
    style_num, style_ilvl = styles.get(_val(ppr, "pStyle", w) or "", (None, None))
    num_pr = ppr.find(f"{{{w}}}numPr")
    num_id = _val(num_pr, "numId", w) if num_pr is not None else None
    ilvl = _opt_int(_val(num_pr, "ilvl", w)) if num_pr is not None else None
    num_id = num_id or style_num
    if not num_id or num_id == "0":
        return None
    return num_id, ilvl if ilvl is not None else (style_ilvl or 0)


class Labeller:
    """Counts list paragraphs in reading order and gives each its label."""

    def __init__(self, numbering: Numbering):
        self._numbering = numbering
        self._counters: dict[str, dict[int, int]] = {}  # abstractNumId → level → current value
        self._started: set[str] = set()  # lists whose start overrides have been applied

    def label(self, num_id: str, ilvl: int) -> tuple[str, str] | None:
        """(label, suffix) of the next paragraph of list ``num_id`` at level ``ilvl``; None for an
        unknown list or level. A bullet's label is None too, but it still counts as a use."""
        level = self._numbering.level(num_id, ilvl)
        if level is None:
            return None
        abstract_id, _, starts = self._numbering.lists[num_id]
        counters = self._counters.setdefault(abstract_id, {})
        if num_id not in self._started:
            self._started.add(num_id)
            for overridden in starts:
                counters.pop(overridden, None)
        counters[ilvl] = counters[ilvl] + 1 if ilvl in counters else level.start
        for deeper in [d for d in counters if d > ilvl]:
            restart = self._level(num_id, deeper).restart
            if restart is None or (restart > 0 and ilvl <= restart - 1):
                del counters[deeper]
        if level.fmt == "bullet":
            return None
        text = _PLACEHOLDER.sub(
            lambda m: self._shown(num_id, int(m.group(1)) - 1, counters, level.legal), level.text
        )
        return text, level.suffix

    def _level(self, num_id: str, ilvl: int) -> Level:
        return self._numbering.level(num_id, ilvl) or Level()

    def _shown(self, num_id: str, ilvl: int, counters: dict[int, int], legal: bool) -> str:
        level = self._level(num_id, ilvl)
        value = counters.get(ilvl, level.start)
        return format_number(value, "decimal" if legal else level.fmt)


def format_number(value: int, fmt: str) -> str:
    """``value`` in Word's number format ``fmt`` ("lowerLetter": 27 → "aa", as Word counts)."""
    if fmt in ("none", "bullet"):
        return ""
    if fmt == "decimalZero":
        return f"{value:02d}"
    if fmt in ("lowerLetter", "upperLetter") and value > 0:
        letters = chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1)
        return letters.upper() if fmt == "upperLetter" else letters
    if fmt in ("lowerRoman", "upperRoman") and 0 < value < 4000:
        roman = ""
        for number, numeral in _ROMAN:
            count, value = divmod(value, number)
            roman += numeral * count
        return roman.upper() if fmt == "upperRoman" else roman
    return str(value)


def _read_level(lvl: etree._Element, w: str) -> Level:
    restart = _val(lvl, "lvlRestart", w)
    return Level(
        fmt=_val(lvl, "numFmt", w) or "decimal",
        text=_val(lvl, "lvlText", w) or "",
        start=_int(_val(lvl, "start", w), 1),
        restart=_opt_int(restart),
        legal=lvl.find(f"{{{w}}}isLgl") is not None and _val(lvl, "isLgl", w) not in ("0", "false"),
        suffix=_val(lvl, "suff", w) or "tab",
    )


def _val(element: etree._Element, child: str, w: str) -> str | None:
    found = element.find(f"{{{w}}}{child}")
    return found.get(f"{{{w}}}val") if found is not None else None


def _int(value: str | None, default: int) -> int:
    parsed = _opt_int(value)
    return default if parsed is None else parsed


def _opt_int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
