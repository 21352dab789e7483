"""Exact values (money, percentages, dates, IDs, numbers with units): found in a text and checked
verbatim against the cited text, so a paraphrased value ("~$250" for "$247.83") fails. Pure."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from extraction.verify.normalise import norm, normalise

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_NUM = r"\d[\d,]*(?:\.\d+)*"
_UNITS = (
    r"(?:business days?|calendar days?|working days?|days?|months?|years?|hours?|weeks?|minutes?|"
    r"units?|shares?|kg|km|miles?|lbs?|tons?|seats?|users?|licenses?|copies)"
)
_SCALE = r"(?i:million|billion|thousand|trillion)\b"  # part of the value: "$5" is not "$5 Million"
_SIGN = r"(?:(?<![\w.,)-])-)?"  # a minus sign belongs to the value ("-5%" is not "5%")
_CODES = "USD|EUR|GBP|CHF|JPY|CAD|AUD|INR|RMB|CNY"
# Where a quote may not start or end (``_splits``): right after a currency sign, right before a percent sign.
_SIGN_BEFORE = re.compile(rf"(?:[$€£¥₹]|(?<![A-Za-z])(?:{_CODES}))[ \t]?$")
_PERCENT_AFTER = re.compile(r"[ \t]?(?:%|(?i:per\s?cent)\b)")
_DIGIT_AFTER = re.compile(r"[ \t]?\d")
# A currency or a percent sign belongs to its number: "247.83" is not "$247.83", "5 per year" not
# "5% per year".
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


def _value_pattern(value: str, core: str | None = None) -> str:
    """``value`` as a whole: no digit, letter or decimal on either side, no minus sign before it unless
    it has one, no "million" after it unless it has one ("$5" is not "$5 million"), no currency sign
    before it and no "%" or currency word after it unless it has them ("247.83" is not "$247.83").
    ``core``: the pattern of the value itself (default: its exact text)."""
    core = re.escape(value) if core is None else core
    pat = r"(?<![A-Za-z0-9])(?<!\d[.,])" + core + r"(?![A-Za-z0-9])(?![.,]\d)"
    if not value.startswith("-"):
        pat = r"(?<![\s(]-)(?<!^-)" + pat
    if value[:1].isdigit():
        pat = _NO_CURRENCY_BEFORE + pat
    if not _HAS_UNIT_AFTER.search(value):
        pat += _NO_UNIT_AFTER
    if not re.search(_SCALE + "$", value):
        pat += r"(?!\s?" + _SCALE + ")"
    return pat


def _contains_value(hay: str, value: str) -> bool:
    return re.search(_value_pattern(value), hay) is not None


def _digits_in(text: str, value: str) -> bool:
    """Whether every run of digits of ``value`` is in ``text``: else the value cannot be there."""
    return all(run in text for run in re.findall(r"\d+", value))


def values_asked(query: str) -> list[str]:
    """The exact values a search query asks for, as :func:`exact_values` reads them once the layout the
    verifier forgives is set aside: "sixty (60) days" asks for "60 days", not "60"."""
    return exact_values(_loose(query))


def holds_values(text: str, values: Sequence[str]) -> bool:
    """Whether ``text`` states every one of ``values`` as the verifier reads a quote (``ValueSource``:
    layout around a value forgiven, "thirty (30) days" holds "30 days"), without reading its other values:
    only the text around each place a value's first digits stand is normalised."""
    folded = text.casefold()
    return all(
        _digits_in(text, v)
        and all(word in folded for word in re.findall(r"[a-z]+", v.casefold()))
        and _holds(text, v)
        for v in values
    )


def _holds(text: str, value: str) -> bool:
    if _contains_value(text, value):
        return True
    reach = len(value) + 40  # the value's own length and a margin of the words around it
    for m in re.finditer(re.escape(re.findall(r"\d+", value)[0]), text):
        around = norm(text[max(0, m.start() - reach) : m.end() + reach])
        if _contains_value(around, value) or _contains_value(_loose(around), _loose(value)):
            return True
    return False


def _loose_core(value: str) -> str:
    """A pattern of ``value`` that forgives what ``_loose`` forgives: a whole number in parentheses
    ("(30) days" for "30 days"), a space after a currency sign, the capitals of a word."""
    out = []
    for part in re.split(r"(\d[\d,.]*\d|\d)", value):
        if part[:1].isdigit():
            number = re.escape(part)
            out.append(rf"(?:{number}|\({number}\))")
            continue
        for ch in part:
            if ch in "$€£¥₹":
                out.append(re.escape(ch) + r"\s?")
            elif ch.isalpha():
                out.append(f"[{re.escape(ch.lower())}{re.escape(ch.upper())}]")
            else:
                out.append(re.escape(ch))
    return "".join(out)


def value_spans(text: str, values: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end, value) in ``text`` of each place a value of ``values`` stands as written (as
    ``_value_pattern`` bounds it; quote, dash and space forms aside), or, for a value nowhere as written,
    where the verifier would find it (``_loose_core``), in order of start. A value whose
    digits are not all in ``text`` is not there: the text is normalised only when one may be."""
    values = [v for v in values if _digits_in(text, v)]
    if not values:
        return []
    normalised, src = normalise(text)
    spans = []
    for value in values:
        exact = norm(value)
        found = list(re.finditer(_value_pattern(exact), normalised))
        # as the verifier forgives it when it is nowhere as written: "thirty (30) days" for "30 days"
        found = found or list(re.finditer(_value_pattern(exact, _loose_core(exact)), normalised))
        spans += [(src[m.start()], src[m.end() - 1] + 1, value) for m in found]
    return sorted(spans)


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
        return [
            v
            for v in values
            if not (
                v in self._held or _contains_value(self.text, v) or _contains_value(self.loose, _loose(v))
            )
        ]


def check_values(values: Sequence[str], cited: Sequence[str]) -> list[str]:
    """Errors for values that do not appear verbatim in the cited texts."""
    source = ValueSource(cited)
    errs = []
    for v in source.absent(values):
        cands = [c for c in source.values if c != v]
        similar = difflib.get_close_matches(v, cands, n=3, cutoff=0.3) or cands[:3]
        hint = (" (the cited text has: " + ", ".join(f'"{c}"' for c in similar) + ")") if similar else ""
        errs.append(
            f'value "{v}" in clause_text does not appear verbatim in the cited text{hint}; '
            "copy values exactly as the source writes them, never round or reformat them"
        )
    return errs
