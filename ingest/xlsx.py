"""An Excel workbook as Markdown, one page per sheet, every cell as the sheet shows it.

MarkItDown reads workbooks through pandas, which rewrites values: text cells "N/A", "NA",
"None" and "NULL" become NaN, empty cells NaN/NaT, and number formats are lost (``$247.83``
becomes ``247.83``, ``5%`` becomes ``0.050``, ``00123`` becomes ``123.00``). Exact values are
what reviewers quote, so we read the cells with openpyxl (the cached values of formulas) and
apply each cell's number format ourselves for the common cases: currency and other literal
text, percent, fixed and optional decimals, thousands separators, leading zeros (``00000``),
separate negative/zero sections, scientific notation and dates/times. A format we cannot read
falls back to Excel's "General" display. Text cells are kept verbatim (a line break inside a
cell becomes a space, so the table row stays one line); empty cells are ``""``.

Each sheet is a page: ``## SheetName`` and a Markdown table whose header is the sheet's first
non-empty row. Rows and columns that are empty throughout are left out.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import openpyxl

from ingest.convert_errors import ConversionError

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PLACEHOLDERS = "0#?"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# A sheet's table (filled rows times filled columns) beyond this is refused: some 40 MB of text at least.
MAX_TABLE_CELLS = 10_000_000


def sheet_pages(data: bytes) -> list[str]:
    """One Markdown page per worksheet of the workbook in ``data`` (raises what openpyxl raises, and
    :class:`ConversionError` ``too_large`` for a sheet too large to review, see :func:`_sheet_markdown`)."""
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        pages = []
        for sheet in workbook.worksheets:
            if hasattr(sheet, "reset_dimensions"):  # read-only mode trusts the file's <dimension>, which
                sheet.reset_dimensions()  # some writers set to "A1": every other cell was lost
            pages.append(_sheet_markdown(sheet.title, sheet.iter_rows()))
        return pages
    finally:
        workbook.close()


def _sheet_markdown(title: str, rows) -> str:
    """The sheet's table. Only filled cells are kept while reading (openpyxl hands each row padded with
    empty cells up to its last one: a row whose other cell is in column XFD is 16,384 cells), and a
    table of more than :data:`MAX_TABLE_CELLS` (its filled rows times its filled columns) is refused
    before it is written: cells spread far apart in a small file would be gigabytes of empty cells."""
    table: list[dict[int, str]] = []
    for row in rows:
        filled = {}
        for column, cell in enumerate(row):
            if cell.value is not None:
                text = cell_text(cell.value, getattr(cell, "number_format", "General"))
                if text:
                    filled[column] = text
        if filled:
            table.append(filled)
    used = sorted({column for filled in table for column in filled})
    if len(table) * len(used) > MAX_TABLE_CELLS:
        raise ConversionError(
            "too_large",
            f"Sheet “{title}” is too large to review: its filled cells spread over {len(table):,} rows and "
            f"{len(used):,} columns, more than {MAX_TABLE_CELLS:,} cells as a table. "
            "Split it, or delete what lies far from its data.",
        )
    lines = [f"## {title}"]
    if table:
        lines.append(_row([table[0].get(c, "") for c in used]))
        lines.append(_row(["---"] * len(used)))
        lines.extend(_row([filled.get(c, "") for c in used]) for filled in table[1:])
    return "\n".join(lines)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def cell_text(value, number_format: str | None = "General") -> str:
    """A cell's value as Excel displays it under ``number_format``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _LINE_BREAK.sub(" ", value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    fmt = number_format or "General"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return format_date(value, fmt)
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, (int, float)):
        try:
            return format_number(value, fmt)
        except (ValueError, IndexError, InvalidOperation, OverflowError):
            return _general(value)
    return str(value)


# --------------------------------------------------------------------------- numbers


def format_number(value: float | int, fmt: str) -> str:
    """``value`` under an Excel number format (the common subset; see the module docstring)."""
    sections = _sections(fmt)
    if len(sections) >= 2 and value < 0:
        section, value, sign = sections[1], -value, ""  # the negative section writes its own sign
    elif len(sections) >= 3 and value == 0:
        section, sign = sections[2], ""
    else:
        section, sign = sections[0], "-" if value < 0 else ""
        value = abs(value)
    tokens = _tokens(section)
    if any(kind == "general" for kind, _ in tokens) or "/" in _unquoted(section):
        # a fraction ("# ?/?", "# ?/4") is not read here: General keeps the value
        return sign + _general(value)
    places = [i for i, (kind, _) in enumerate(tokens) if kind == "digit"]
    if not places:
        return sign + "".join(text for kind, text in tokens if kind == "literal")
    first, last = places[0], places[-1]
    prefix = "".join(text for kind, text in tokens[:first] if kind == "literal")
    suffix = "".join(text for kind, text in tokens[last + 1 :] if kind == "literal")
    pattern = "".join(text for _, text in tokens[first : last + 1])
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    number *= Decimal(100) ** tokens.count(("literal", "%"))
    if "E" in pattern.upper():
        return sign + prefix + _scientific(number, pattern) + suffix
    scaled = len(pattern) - len(pattern.rstrip(","))  # "#,##0," shows thousands, "0.0,," millions
    integer_part, _, decimal_part = pattern.rstrip(",").partition(".")
    number /= Decimal(1000) ** scaled
    required = decimal_part.count("0")
    optional = sum(decimal_part.count(c) for c in "#?")
    rounded = number.quantize(Decimal(1).scaleb(-(required + optional)), rounding=ROUND_HALF_UP)
    whole, _, fraction = f"{rounded:f}".partition(".")
    fraction = fraction.rstrip("0").ljust(required, "0") if optional else fraction
    text = _integer(int(whole), integer_part) + ("." + fraction if "." in pattern else "")
    return sign + prefix + text + suffix


def _integer(whole: int, template: str) -> str:
    placeholders = [c for c in template if c in _PLACEHOLDERS]
    literals = [c for c in template if c not in _PLACEHOLDERS and c != ","]
    if literals:  # "000-00-0000": fill the placeholders from the right, extra digits to the left
        digits = str(whole) if whole else ""
        digits = digits.rjust(template.count("0"), "0")
        out, k = [], len(digits)
        slots = [i for i, c in enumerate(template) if c in _PLACEHOLDERS]
        for i in range(len(template) - 1, -1, -1):
            c = template[i]
            if c in _PLACEHOLDERS:
                piece = digits[max(k - 1, 0) : k] if i != slots[0] else digits[:k]
                k -= len(piece)
                out.append(piece)
            elif c != ",":
                out.append(c)
        return "".join(reversed(out))
    minimum = placeholders.count("0")
    if whole == 0 and minimum == 0:
        return ""
    grouped = "," in template
    return (
        f"{whole:0{minimum},d}"
        if grouped and minimum
        else (f"{whole:,d}" if grouped else f"{whole:0{minimum}d}")
    )


def _scientific(number: Decimal, pattern: str) -> str:
    mantissa = pattern.upper().split("E")[0]
    places = len(mantissa.partition(".")[2])
    return f"{float(number):.{places}E}"  # "2.48E+02", as Excel writes it


def _general(value: float | int) -> str:
    if isinstance(value, int) or value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}".upper()


def _sections(fmt: str) -> list[str]:
    """The ``;``-separated sections of a format (positive; negative; zero; text)."""
    sections, current, i = [], "", 0
    while i < len(fmt):
        c = fmt[i]
        if c == '"':
            end = fmt.find('"', i + 1)
            end = len(fmt) if end < 0 else end
            current += fmt[i : end + 1]
            i = end + 1
            continue
        if c == "\\" and i + 1 < len(fmt):
            current += fmt[i : i + 2]
            i += 2
            continue
        if c == ";":
            sections.append(current)
            current = ""
        else:
            current += c
        i += 1
    sections.append(current)
    return sections


def _unquoted(section: str) -> str:
    """``section`` without its literals ("text", \\x): what is left are codes."""
    return re.sub(r'"[^"]*"?|\\.', "", section)


def _literal_at(section: str, i: int) -> tuple[str, int] | None:
    """The literal starting at ``section[i]`` ("quoted text" or a backslash-escaped character) and
    where the next piece starts; None when none starts there."""
    if section[i] == '"':
        end = section.find('"', i + 1)
        end = len(section) if end < 0 else end
        return section[i + 1 : end], end + 1
    if section[i] == "\\" and i + 1 < len(section):
        return section[i + 1], i + 2
    return None


def _tokens(section: str) -> list[tuple[str, str]]:
    """``(kind, text)`` pieces of a number section: ``digit`` (placeholders and the ``,``/``.``/``E+``
    between them), ``literal`` (what is printed as is) and ``general``."""
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        c = section[i]
        literal = _literal_at(section, i)
        if literal is not None:
            tokens.append(("literal", literal[0]))
            i = literal[1]
        elif c == "[":  # [Red], [>100], or [$€-407]: only the currency symbol is printed
            end = section.find("]", i)
            end = len(section) if end < 0 else end
            inner = section[i + 1 : end]
            if inner.startswith("$"):
                tokens.append(("literal", inner[1:].split("-")[0]))
            i = end + 1
        elif c in "_*":  # padding to the width of a character, and fill: no text
            i += 2
        elif section[i : i + 7].lower() == "general" or c == "@":  # "@": a number in a text format
            tokens.append(("general", ""))
            i += 7 if c != "@" else 1
        elif c in _PLACEHOLDERS or (c in ",." and _next_is_placeholder(section, i)):
            tokens.append(("digit", c))
            i += 1
        elif c in "eE" and section[i + 1 : i + 2] in ("+", "-") and tokens and tokens[-1][0] == "digit":
            tokens.append(("digit", section[i : i + 2]))
            i += 2
        else:
            tokens.append(("literal", c))
            i += 1
    return tokens


def _next_is_placeholder(section: str, i: int) -> bool:
    """True when the ``,``/``.`` at ``i`` is part of the number: a placeholder before it, or a
    placeholder after it (through more commas), as in ``#,##0``, ``.00`` and ``#,##0,``."""
    before = section[:i].rstrip(",")
    after = section[i + 1 :].lstrip(",")
    return (before[-1:] in tuple(_PLACEHOLDERS)) or (after[:1] in tuple(_PLACEHOLDERS))


# --------------------------------------------------------------------------- dates


def format_date(value: dt.date | dt.time, fmt: str) -> str:
    """A date, datetime or time under an Excel date format (y, m, d, h, m, s, AM/PM)."""
    if isinstance(value, dt.time):
        value = dt.datetime.combine(dt.date(1899, 12, 31), value)
    elif not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    codes = _date_codes(_sections(fmt)[0])
    if not any(kind == "code" for kind, _ in codes):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    twelve = any(kind == "ampm" for kind, _ in codes)
    out = []
    for n, (kind, text) in enumerate(codes):
        if kind == "literal":
            out.append(text)
        elif kind == "ampm":
            mark = "AM" if value.hour < 12 else "PM"
            out.append(mark if len(text) > 3 else mark[0])
        else:
            out.append(_date_part(value, text, _is_minute(codes, n), twelve))
    return "".join(out)


def _date_codes(section: str) -> list[tuple[str, str]]:
    codes: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        c = section[i]
        literal = _literal_at(section, i)
        if literal is not None:
            codes.append(("literal", literal[0]))
            i = literal[1]
        elif c == "[":
            end = section.find("]", i)
            i = len(section) if end < 0 else end + 1
        elif c in "_*":
            i += 2
        elif section[i : i + 5].upper() == "AM/PM":
            codes.append(("ampm", "AM/PM"))
            i += 5
        elif section[i : i + 3].upper() == "A/P":
            codes.append(("ampm", "A/P"))
            i += 3
        elif c.lower() in "ymdhs":
            j = i
            while j < len(section) and section[j].lower() == c.lower():
                j += 1
            codes.append(("code", section[i:j].lower()))
            i = j
        elif c == "." and section[i + 1 : i + 2] == "0":  # fractions of a second: not shown
            i += 1
            while i < len(section) and section[i] == "0":
                i += 1
        else:
            codes.append(("literal", c))
            i += 1
    return codes


def _is_minute(codes: list[tuple[str, str]], n: int) -> bool:
    """An ``m`` run means minutes right after an hour or right before a second."""
    if codes[n][1][0] != "m" or len(codes[n][1]) > 2:
        return False
    before = [text for kind, text in codes[:n] if kind == "code"]
    after = [text for kind, text in codes[n + 1 :] if kind == "code"]
    return bool(before and before[-1][0] == "h") or bool(after and after[0][0] == "s")


def _date_part(value: dt.datetime, code: str, minute: bool, twelve: bool) -> str:
    letter, size = code[0], len(code)
    if letter == "y":
        return f"{value.year % 100:02d}" if size <= 2 else f"{value.year:04d}"
    if letter == "m" and minute:
        return f"{value.minute:0{min(size, 2)}d}"
    if letter == "m":
        name = _MONTHS[value.month - 1]
        return {1: str(value.month), 2: f"{value.month:02d}", 3: name[:3], 5: name[0]}.get(size, name)
    if letter == "d":
        name = _DAYS[value.weekday()]
        return {1: str(value.day), 2: f"{value.day:02d}", 3: name[:3]}.get(size, name)
    if letter == "h":
        hour = (value.hour % 12 or 12) if twelve else value.hour
        return f"{hour:0{min(size, 2)}d}"
    return f"{value.second:0{min(size, 2)}d}"  # s
