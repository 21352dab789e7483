"""The labels PowerPoint shows for automatically numbered paragraphs (``a:buAutoNum``).

python-pptx, and so MarkItDown, read a paragraph's text without its automatic number: "(a) Fees
of $247.83" came out as "Fees of $247.83", the clause without its number.
:func:`paragraph_labels` counts the paragraphs of one text frame as PowerPoint does and
:func:`format_label` writes each label ("1.", "(a)", "iv.") in its scheme;
:mod:`ingest.pptx_prep` puts the labels into the text.

Counting, per text frame:

* each level counts on its own; a numbered paragraph continues the count of the paragraph
  before it at its level when both use the same scheme and ``startAt``, and starts again at
  ``startAt`` (1 if not given) otherwise;
* a paragraph at a shallower level ends the counts of the deeper levels (a new "(a)" list under
  each "1.", "2.");
* a paragraph at the same level that is not numbered ends the count there;
* an empty paragraph shows no number and neither counts nor ends a count.

This follows what PowerPoint shows for the usual lists; its exact rules are not published.
A scheme not in :data:`SCHEMES` (the East Asian and Hebrew/Arabic/Thai ones) gets no label.

Pure: plain data in and out; no XML, no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.docx_numbering import format_number

# buAutoNum type → (number format as ingest.docx_numbering.format_number knows it, text before, text after)
SCHEMES: dict[str, tuple[str, str, str]] = {}
for _name, _fmt in (
    ("arabic", "decimal"),
    ("alphaLc", "lowerLetter"),
    ("alphaUc", "upperLetter"),
    ("romanLc", "lowerRoman"),
    ("romanUc", "upperRoman"),
):
    SCHEMES[f"{_name}Period"] = (_fmt, "", ".")
    SCHEMES[f"{_name}ParenR"] = (_fmt, "", ")")
    SCHEMES[f"{_name}ParenBoth"] = (_fmt, "(", ")")
SCHEMES["arabicPlain"] = ("decimal", "", "")


@dataclass(frozen=True)
class Paragraph:
    """What numbering needs to know of one paragraph."""

    level: int  # a:pPr/@lvl, 0 to 8
    scheme: str | None  # buAutoNum/@type, or None when the paragraph is not auto-numbered
    start: int = 1  # buAutoNum/@startAt
    empty: bool = False  # no text at all


def paragraph_labels(paragraphs: list[Paragraph]) -> list[str | None]:
    """The label PowerPoint shows before each paragraph of one text frame, None where none is shown."""
    counts: dict[int, tuple[str, int, int]] = {}  # level -> (scheme, startAt, last number)
    labels: list[str | None] = []
    for paragraph in paragraphs:
        if paragraph.empty:
            labels.append(None)
            continue
        level = paragraph.level
        for deeper in [lvl for lvl in counts if lvl > level]:
            del counts[deeper]
        if paragraph.scheme is None:
            counts.pop(level, None)
            labels.append(None)
            continue
        previous = counts.get(level)
        if previous is not None and previous[:2] == (paragraph.scheme, paragraph.start):
            number = previous[2] + 1
        else:
            number = paragraph.start
        counts[level] = (paragraph.scheme, paragraph.start, number)
        labels.append(format_label(paragraph.scheme, number))
    return labels


def format_label(scheme: str, number: int) -> str | None:
    """``number`` written in the ``buAutoNum`` scheme ("alphaLcParenBoth", 3 → "(c)"); None if unknown."""
    if scheme not in SCHEMES:
        return None
    fmt, before, after = SCHEMES[scheme]
    return f"{before}{format_number(number, fmt)}{after}"
