"""A text that remembers, for each of its characters, where in a source string it came from.

The PDF converter cleans pdfium's raw page text (ligatures spelt out, spaces collapsed, lines
stripped, NFC). A citation's offsets are offsets into the cleaned text; the glyph boxes belong
to the raw text's characters. :class:`Traced` runs the same cleaning steps as :class:`Plain`
(``str`` operations) and carries each character's origin along, so an offset in the cleaned
text leads back to a raw character. ``ingest.pdf_pages`` writes its cleaning once, over either
class: the text with origins is the converter's text by construction.

Pure functions over plain data.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence

NO_ORIGIN = -1  # a character the cleaning added (a blank line between paragraphs)

TranslateTable = Mapping[int, "str | int | None"]


class Plain:
    """The cleaning steps on a bare ``str`` (what the converter runs on every page)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    @classmethod
    def lines(cls, raw: str, separators: Sequence[tuple[int, int]], gaps: Sequence[bool]) -> Plain:
        pieces: list[str] = []
        for (start, end), gap in zip(_line_spans(raw, separators), gaps):
            if gap:
                pieces.append("")
            pieces.append(raw[start:end])
        return cls("\n".join(pieces))

    def translate(self, table: TranslateTable) -> Plain:
        return Plain(self.text.translate(table))

    def nfc(self) -> Plain:
        return Plain(unicodedata.normalize("NFC", self.text))

    def sub(self, pattern: re.Pattern[str], repl: str) -> Plain:
        return Plain(pattern.sub(repl, self.text))

    def strip(self, chars: str) -> Plain:
        return Plain(self.text.strip(chars))


class Traced:
    """The same steps as :class:`Plain`, each character's origin (an index into the raw text, or
    ``NO_ORIGIN``) kept in ``origins`` (as long as ``text``)."""

    __slots__ = ("origins", "text")

    def __init__(self, text: str, origins: list[int]):
        assert len(text) == len(origins)
        self.text = text
        self.origins = origins

    @classmethod
    def lines(cls, raw: str, separators: Sequence[tuple[int, int]], gaps: Sequence[bool]) -> Traced:
        """The lines of ``raw`` (split at ``separators``) joined by "\\n", a blank line before each line
        whose gap is set. A joining "\\n" comes from the separator before its line; the extra "\\n" of a
        blank line comes from nowhere."""
        text: list[str] = []
        origins: list[int] = []
        spans = _line_spans(raw, separators)
        for i, ((start, end), gap) in enumerate(zip(spans, gaps)):
            newlines = int(i > 0) + int(gap)
            if newlines:
                text.append("\n" * newlines)
                first = separators[i - 1][0] if i > 0 else NO_ORIGIN
                origins.extend([first] + [NO_ORIGIN] * (newlines - 1))
            text.append(raw[start:end])
            origins.extend(range(start, end))
        return cls("".join(text), origins)

    def translate(self, table: TranslateTable) -> Traced:
        text: list[str] = []
        origins: list[int] = []
        pos = 0
        for m in _pattern_of(table).finditer(self.text):  # only the characters the table changes
            at = m.start()
            text.append(self.text[pos:at])
            origins.extend(self.origins[pos:at])
            out = table[ord(self.text[at])]
            if out is not None:
                out = chr(out) if isinstance(out, int) else out
                text.append(out)
                origins.extend([self.origins[at]] * len(out))  # "ﬁ" -> "fi": both from the ligature's glyph
            pos = at + 1
        if not pos:
            return self
        text.append(self.text[pos:])
        origins.extend(self.origins[pos:])
        return Traced("".join(text), origins)

    def nfc(self) -> Traced:
        if unicodedata.is_normalized("NFC", self.text):
            return self
        whole = unicodedata.normalize("NFC", self.text)
        # ASCII is NFC and never the second of a composed pair: compose each run of other characters (with
        # the character before it, a possible base) on its own, and within it each base with its marks
        text: list[str] = []
        origins: list[int] = []
        pos = 0
        for m in _NOT_ASCII.finditer(self.text):
            start, end = max(m.start() - 1, pos), m.end()
            text.append(self.text[pos:start])
            origins.extend(self.origins[pos:start])
            for a, b in _runs(self.text, start, end):
                part = unicodedata.normalize("NFC", self.text[a:b])
                text.append(part)
                if len(part) == b - a:
                    origins.extend(self.origins[a:b])
                else:  # "e" + U+0301 -> "é": from the base letter
                    origins.extend([self.origins[a]] * len(part))
            pos = end
        text.append(self.text[pos:])
        origins.extend(self.origins[pos:])
        if "".join(text) == whole:
            return Traced(whole, origins)
        return self._aligned(whole)  # a composition across runs (Hangul jamo): align the two texts

    def sub(self, pattern: re.Pattern[str], repl: str) -> Traced:
        """``pattern.sub(repl, text)`` for a literal ``repl``: each replacement character comes from the
        first character of the match equal to it (in order), else from the match's first character."""
        assert "\\" not in repl
        text: list[str] = []
        origins: list[int] = []
        pos = 0
        for m in pattern.finditer(self.text):
            start, end = m.span()
            text.append(self.text[pos:start])
            origins.extend(self.origins[pos:start])
            text.append(repl)
            origins.extend(_replacement_origins(self.text, self.origins, start, end, repl))
            pos = end
        text.append(self.text[pos:])
        origins.extend(self.origins[pos:])
        return Traced("".join(text), origins)

    def strip(self, chars: str) -> Traced:
        stripped = self.text.lstrip(chars)
        start = len(self.text) - len(stripped)
        end = start + len(stripped.rstrip(chars))
        return Traced(self.text[start:end], self.origins[start:end])

    def _aligned(self, target: str) -> Traced:
        origins = [NO_ORIGIN] * len(target)
        matcher = difflib.SequenceMatcher(None, self.text, target, autojunk=False)
        for _tag, a0, a1, b0, b1 in matcher.get_opcodes():
            for k in range(b0, b1):
                if a1 > a0:
                    origins[k] = self.origins[min(a0 + k - b0, a1 - 1)]
                elif a0 > 0:  # inserted: from the character before
                    origins[k] = self.origins[a0 - 1]
        return Traced(target, origins)


def _runs(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of each run of ``text[start:end]``: a character of combining class 0 and the combining
    marks after it."""
    starts = [i for i in range(start, end) if i == start or not unicodedata.combining(text[i])]
    return list(zip(starts, starts[1:] + [end]))


_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
_patterns: dict[int, tuple[TranslateTable, re.Pattern[str]]] = {}


def _pattern_of(table: TranslateTable) -> re.Pattern[str]:
    """A pattern matching one character ``table`` has an entry for (compiled once per table)."""
    found = _patterns.get(id(table))
    if found is None or found[0] is not table:
        chars = "".join(re.escape(chr(k)) for k in table)
        found = _patterns[id(table)] = (table, re.compile(f"[{chars}]" if chars else "(?!)"))
    return found[1]


def _line_spans(raw: str, separators: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(start, end) of each line of ``raw`` between the (start, end) of its line separators."""
    spans = []
    pos = 0
    for start, end in separators:
        spans.append((pos, start))
        pos = end
    spans.append((pos, len(raw)))
    return spans


def _replacement_origins(text: str, origins: list[int], start: int, end: int, repl: str) -> list[int]:
    out = []
    cursor = start
    for ch in repl:
        found = text.find(ch, cursor, end)
        if found < 0:
            out.append(origins[start])
        else:
            out.append(origins[found])
            cursor = found + 1
    return out


def offsets_map(stored: str, fresh: str) -> Callable[[int], int]:
    """A map from offsets in ``stored`` to offsets in ``fresh`` (or -1 where ``stored`` has a character
    ``fresh`` lacks): the identity when the texts are equal, else through their longest common blocks (a
    document converted by an earlier version of the converter)."""
    if stored == fresh:
        return lambda i: i
    table = [-1] * len(stored)
    matcher = difflib.SequenceMatcher(None, stored, fresh, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        table[a : a + size] = range(b, b + size)
    return lambda i: table[i] if 0 <= i < len(table) else -1
