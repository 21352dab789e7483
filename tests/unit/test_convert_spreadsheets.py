"""Spreadsheets: a sheet is a page, cells read as the sheet shows them (number formats), and sparse
or huge sheets cost memory for their cells, or are refused with words.
"""

from __future__ import annotations

import io
import re
import zipfile

import pytest

from ingest.convert import convert_file
from ingest.pages import page_of
from tests.unit.convert_helpers import expect, make_xlsx, write


def test_xlsx_sheets_are_pages(tmp_path):
    converted = convert_file(write(tmp_path, "prices.xlsx", make_xlsx()))
    assert converted.kind == "xlsx" and converted.pages_estimated is False
    assert len(converted.pages) == 2
    assert page_of(converted.text.index("## Terms"), converted.pages) == 2
    assert page_of(converted.text.index("247.83"), converted.pages) == 1


def test_xlsx_cells_read_as_the_sheet_shows_them(tmp_path):
    # pandas read "N/A"/"NULL" as NaN, wrote empty cells as NaN, "$247.83" as 247.83, "5.00%" as 0.050
    import datetime

    import openpyxl

    workbook = openpyxl.Workbook()
    fees = workbook.active
    fees.title = "Fees"
    fees.append(["Item", "Amount", "Rate", "Due", "Cap", "Notes", "Account"])
    fees.append(["Setup", 247.83, 0.05, datetime.date(2025, 3, 31), "N/A", "NULL", 123])
    fees.append(["Support", 1234567.5, 0.125, datetime.date(2025, 6, 30), "None", "NA", None])
    fees.append(["Credit", -1200, 1, None, None, "", 7])
    for cell, number_format in (
        ("B2", '"$"#,##0.00'),
        ("B3", "#,##0.00"),
        ("B4", '"$"#,##0.00;("$"#,##0.00)'),
        ("C2", "0.00%"),
        ("C3", "0.0%"),
        ("C4", "0%"),
        ("D2", "mm/dd/yyyy"),
        ("D3", "d mmmm yyyy"),
        ("G2", "00000"),
        ("G4", "0.000"),
    ):
        fees[cell].number_format = number_format
    workbook.create_sheet("Terms").append(["Note", "Line one\n## Not a sheet"])
    buffer = io.BytesIO()
    workbook.save(buffer)
    converted = convert_file(write(tmp_path, "fees.xlsx", buffer.getvalue()))
    assert converted.kind == "xlsx" and len(converted.pages) == 2
    first = converted.text[converted.pages[0].char_start : converted.pages[0].char_end]
    assert first.splitlines() == [
        "## Fees",
        "| Item | Amount | Rate | Due | Cap | Notes | Account |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| Setup | $247.83 | 5.00% | 03/31/2025 | N/A | NULL | 00123 |",
        "| Support | 1,234,567.50 | 12.5% | 30 June 2025 | None | NA |  |",
        "| Credit | ($1,200.00) | 100% |  |  |  | 7.000 |",
    ]
    assert "nan" not in converted.text.lower() and "NaT" not in converted.text
    assert (
        page_of(converted.text.index("## Not a sheet"), converted.pages) == 2
    )  # a cell's text never starts a page


@pytest.mark.parametrize(
    "value,number_format,shown",
    [
        (1234.5, "#,##0", "1,235"),
        (0.0725, "0.00%", "7.25%"),
        (1234567, '#,##0,"K"', "1,235K"),
        (123456789, "000-00-0000", "123-45-6789"),
        (12.5, "[$\u20ac-407] #,##0.00", "\u20ac 12.50"),
        (247.83, "0.00E+00", "2.48E+02"),
        (0.1 + 0.2, "General", "0.3"),
        (3, "@", "3"),
        (2.675, "0.00", "2.68"),  # Excel rounds half away from zero, on the decimal value
    ],
)
def test_xlsx_number_formats(value, number_format, shown):
    from ingest.xlsx import cell_text

    assert cell_text(value, number_format) == shown


@pytest.mark.parametrize(
    "value,number_format,shown",
    [
        (12345678, "#,##0.0,,", "12.3"),
        (12345678, '$#,##0.0,,"M"', "$12.3M"),
        (1.5, "# ?/?", "1.5"),
        (2.5, "# ?/4", "2.5"),
        (12, '0"/"0', "1/2"),
    ],
)
def test_xlsx_scaling_commas_anywhere_and_fractions_keep_the_value(value, number_format, shown):
    from ingest.xlsx import cell_text

    assert cell_text(value, number_format) == shown


def test_an_xlsx_whose_dimension_says_a1_is_read_whole():
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Fees"
    for row in (["Item", "Fee"], ["Support", "$247.83"], ["Licence", "$5,000"]):
        sheet.append(row)
    raw = io.BytesIO()
    book.save(raw)
    fixed = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as zin, zipfile.ZipFile(fixed, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":  # as some writers leave it
                data = re.sub(rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1"/>', data)
            zout.writestr(item, data)
    from ingest.xlsx import sheet_pages

    assert "| Licence | $5,000 |" in sheet_pages(fixed.getvalue())[0]


def sparse_xlsx(cells) -> bytes:
    """A workbook whose one sheet holds inline-string ``cells`` ((reference, text), e.g. ("XFD7", "x")), as
    a small hand-written (or hostile) file can: Excel's own writer has no say in where cells lie."""
    rows: dict[int, list[str]] = {}
    for ref, text in cells:
        rows.setdefault(int(re.sub(r"[A-Z]", "", ref)), []).append(
            f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'
        )
    sheet = "".join(f'<row r="{n}">{"".join(row)}</row>' for n, row in sorted(rows.items()))
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(make_xlsx())) as source,
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(
                    rb"<sheetData>.*</sheetData>|<sheetData/>",
                    f"<sheetData>{sheet}</sheetData>".encode(),
                    data,
                    flags=re.S,
                )
            out.writestr(item, data)
    return buffer.getvalue()


def _column(n: int) -> str:
    letters = ""
    while n:
        n, rest = divmod(n - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def test_a_sheet_whose_cells_lie_far_apart_costs_memory_for_its_cells_not_their_grid(tmp_path):
    # a row whose only other cell is in column XFD was read as 16,384 cells, every one kept until the sheet
    # was written: a 1 MB workbook of such rows took tens of GB, and the out-of-memory killer took the worker
    import tracemalloc

    from ingest.xlsx import sheet_pages

    data = sparse_xlsx(
        [cell for n in range(1, 301) for cell in ((f"A{n}", f"Item {n}"), (f"XFD{n}", f"Note {n}"))]
    )
    tracemalloc.start()
    pages = sheet_pages(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 1024 * 1024
    assert "| Item 1 | Note 1 |" in pages[0] and "| Item 300 | Note 300 |" in pages[0]


def test_a_sheet_that_would_be_a_table_of_millions_of_empty_cells_is_refused_with_words(
    tmp_path, monkeypatch
):
    # cells on a diagonal (row n, column n) are a table of n x n cells, nearly all empty: 16,384 such cells in a
    # 200 KB file made a table of 268 million cells, gigabytes of text, and a worker killed for its memory
    from ingest import xlsx

    monkeypatch.setattr(xlsx, "MAX_TABLE_CELLS", 2500)
    error = expect(
        "too_large",
        write(tmp_path, "diagonal.xlsx", sparse_xlsx([(f"{_column(n)}{n}", f"v{n}") for n in range(1, 60)])),
    )
    assert "“Prices”" in error.message and "59 rows and 59 columns" in error.message
    square = [
        (f"{_column(c)}{r}", f"{r}.{c}") for r in range(1, 41) for c in range(1, 41)
    ]  # 1,600 cells, all filled
    assert "| 40.1 |" in convert_file(write(tmp_path, "square.xlsx", sparse_xlsx(square))).text
