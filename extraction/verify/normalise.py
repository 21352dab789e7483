"""Normalisation for citation matching: what two spellings of one passage have in common. Pure.

Whitespace runs (incl. ``\\f``/newlines) collapse to one space, curly quotes and dashes fold to
ASCII, soft hyphens and line-end hyphenation vanish, superscript digits and "^1^" marks read as a
space, NFKD with accents dropped. ``normalise`` also returns, for each character it keeps, its
offset in the source, so a match maps back to exact offsets.
"""

from __future__ import annotations

import re
import unicodedata

_SOFT_HYPHEN = "\u00ad"  # kept until hyphenation is resolved, then dropped (see _drop_hyphenation)
_DROP = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
_FOLD = {
    **{c: "'" for c in "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4"},
    **{c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"},
    **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"},
    "\u2026": "...",
}
# each folded character and the forms that fold to it (a pattern's character class)
_FORMS = {
    folded: folded + "".join(form for form, to in _FOLD.items() if to == folded)
    for folded in set(_FOLD.values())
    if len(folded) == 1
}


def spelling_pattern(text: str) -> str:
    """A regular expression that finds ``text`` in a source whatever its whitespace runs (line and page
    breaks) and its quote and dash forms, as :func:`normalise` sets them aside; "" for a text of no
    words. The cheap way to find a passage in a whole document (``normalise`` reads every character)."""
    words = []
    for word in text.split():
        chars = [_FORMS.get(_FOLD.get(c, c)) or c for c in word]
        words.append("".join(f"[{re.escape(c)}]" if len(c) > 1 else re.escape(c) for c in chars))
    return r"\s+".join(words)


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
    marks = (
        {i for m in _SUPERSCRIPT_MARK.finditer(text) for i in range(m.start(), m.end())}
        if "^" in text
        else ()
    )
    for i, ch in enumerate(text):
        if ch in _DROP or (ch == "\\" and text[i + 1 : i + 2] == "|"):  # a table cell's "\|" reads as "|"
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
    return unicodedata.decomposition(ch).startswith(("<super>", "<sub>")) and all(
        c in "0123456789+-=()\u2212" for c in unicodedata.normalize("NFKD", ch)
    )


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
