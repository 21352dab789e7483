"""A workbook is laid out by LibreOffice from a copy that prints every value whole
(``ingest.office_pdf.xlsx_for_print``); what cannot be fitted prints as it is."""

import io

import openpyxl
import pytest

from ingest import office_pdf


def workbook(rows) -> bytes:
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_columns_fit_their_values_and_the_sheet_fits_the_page_width():
    terms = "Invoices are payable within thirty (30) days of the invoice date, in US dollars. " * 2
    fitted = openpyxl.load_workbook(
        io.BytesIO(office_pdf.xlsx_for_print(workbook([["Route Planner subscription", 184500.25, terms]])))
    )
    sheet = fitted.active
    assert sheet.column_dimensions["A"].width == len("Route Planner subscription") + 2
    assert sheet.column_dimensions["B"].width == len("184500.25") + 4 + 2  # room for "$184,500.25"
    assert sheet.column_dimensions["C"].width == office_pdf.PRINT_MAX_WIDTH + 2
    assert sheet["C1"].alignment.wrap_text and sheet["C1"].value == terms  # the long value wraps, whole
    assert sheet.sheet_properties.pageSetUpPr.fitToPage and sheet.page_setup.fitToWidth == 1


@pytest.mark.parametrize("data", [b"not a workbook", b"PK\x03\x04 a broken zip"])
def test_what_openpyxl_cannot_open_prints_as_it_is(data):
    assert office_pdf.xlsx_for_print(data) is data


def test_a_workbook_over_the_cell_limit_prints_as_it_is(monkeypatch):
    data = workbook([["a", "b", "c"]] * 4)
    monkeypatch.setattr(office_pdf, "PRINT_PREP_MAX_CELLS", 11)
    assert office_pdf.xlsx_for_print(data) is data
    monkeypatch.setattr(office_pdf, "PRINT_PREP_MAX_CELLS", 12)
    assert office_pdf.xlsx_for_print(data) is not data
