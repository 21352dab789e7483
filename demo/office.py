"""A slide deck (PPTX) and a workbook (XLSX) with known strings at known slides / cells."""

from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Font
from pptx import Presentation

from demo.clauses import CUSTOMER_ID, PAYMENT_TERMS, UNIT_FEE
from demo.documents import FIXED_DATETIME, DocumentTruth, KnownText, _fix_core_properties, normalize_zip

DECK_TITLE = "Q3 Supplier Contract Review"
SLIDES = (
    (
        "Scope of the Review",
        [
            "48 supplier contracts, 3,912 pages in total",
            "Longest contract: Master Services Agreement, 200 pages",
            "Review window: 1 July to 30 September 2024",
        ],
    ),
    (
        "Key Commercial Terms",
        [
            f"Standard unit fee: {UNIT_FEE} per Processed Unit",
            f"Payment terms: {PAYMENT_TERMS} for 41 of 48 contracts",
            "Liability cap on Northwind MSA: $247,830.00",
        ],
    ),
    (
        "Findings",
        [
            "7 contracts lack an audit rights clause",
            "3 contracts renew automatically with 90 days' notice",
            "Governing law: Delaware (31), New York (12), other (5)",
        ],
    ),
    (
        "Exceptions Requiring Follow-up",
        [
            f"Invoices for {CUSTOMER_ID} quote an outdated unit fee",
            "Two change-of-control clauses allow termination within 60 days",
        ],
    ),
    (
        "Next Steps",
        [
            "Confirm corrected invoices with Accounts Payable by 15 October",
            "Escalate uncapped indemnities to Legal",
            "Re-run extraction after contract amendments are signed",
        ],
    ),
)


def make_slides_pptx(path: str | Path) -> DocumentTruth:
    """Title slide + 5 content slides (title and bullets)."""
    path = Path(path)
    prs = Presentation()
    title_slide = prs.slides.add_slide(prs.slide_layouts[0])
    title_slide.shapes.title.text = DECK_TITLE
    title_slide.placeholders[1].text = "Internal Audit - Contract Assurance Team"
    known = [KnownText(DECK_TITLE, "slide 1")]
    for number, (title, bullets) in enumerate(SLIDES, start=2):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        frame = slide.placeholders[1].text_frame
        frame.text = bullets[0]
        for bullet in bullets[1:]:
            frame.add_paragraph().text = bullet
        known += [KnownText(b, f"slide {number}") for b in bullets]
    _fix_core_properties(prs.core_properties, DECK_TITLE)
    path.parent.mkdir(parents=True, exist_ok=True)
    prs.save(str(path))
    normalize_zip(path)
    titles = (DECK_TITLE, *(t for t, _ in SLIDES))
    words = sum(len(k.text.split()) for k in known)
    return DocumentTruth(path, "pptx", DECK_TITLE, len(titles), "slide", titles, tuple(known), words=words)


FEES = (
    ("FS-001", "Standard Processed Unit", "per Processed Unit", 247.83, f"Standard unit fee {UNIT_FEE}"),
    ("FS-002", "Expedited Processed Unit", "per Processed Unit", 312.40, "Expedited unit fee $312.40"),
    ("FS-003", "Onboarding of a new Service Location", "per Service Location", 18500.00, "One-off"),
    ("FS-004", "Additional report (ad hoc)", "per report", 1275.00, "On request"),
    ("FS-005", "Senior consultant", "per day", 1640.00, "Time and materials"),
)
CUSTOMERS = (
    ("cust_4702", "Harbor Foods Co.", "Chicago, IL", "net 45"),
    (CUSTOMER_ID, "Northwind Holdings, Inc.", "Chicago, IL", PAYMENT_TERMS),
    ("cust_4718", "Aldermoor Capital Partners LLC", "New York, NY", "net 30"),
    ("cust_4725", "Cascade Packaging Ltd.", "Portland, OR", "net 60"),
)
INVOICES = (
    ("INV-2024-0311", CUSTOMER_ID, "2024-07-31", 1200, 297396.00, "2024-08-30"),
    ("INV-2024-0342", CUSTOMER_ID, "2024-08-31", 1350, 334570.50, "2024-09-30"),
    ("INV-2024-0350", "cust_4702", "2024-08-31", 410, 101610.30, "2024-10-15"),
)
MONEY = '"$"#,##0.00'


def make_workbook_xlsx(path: str | Path) -> DocumentTruth:
    """Sheets: Fee Schedule, Customers, Invoices."""
    path = Path(path)
    wb = Workbook()
    fees = wb.active
    fees.title = "Fee Schedule"
    _rows(fees, ("Code", "Fee Item", "Unit", "Fee (USD)", "Note"), FEES, money_cols=(4,))
    customers = wb.create_sheet("Customers")
    _rows(customers, ("Customer ID", "Name", "City", "Payment Terms"), CUSTOMERS)
    invoices = wb.create_sheet("Invoices")
    _rows(
        invoices,
        ("Invoice", "Customer ID", "Invoice Date", "Processed Units", "Amount (USD)", "Due Date"),
        INVOICES,
        money_cols=(5,),
    )
    wb.properties.creator = "Clause Review demo generator"
    wb.properties.title = "Fee Schedule"
    wb.properties.created = FIXED_DATETIME
    wb.properties.modified = FIXED_DATETIME
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(str(path))
    normalize_zip(path)
    known = (
        KnownText(f"Standard unit fee {UNIT_FEE}", "Fee Schedule!E2", values=(UNIT_FEE,)),
        KnownText(CUSTOMER_ID, "Customers!A3"),
        KnownText("Northwind Holdings, Inc.", "Customers!B3"),
        KnownText("INV-2024-0311", "Invoices!A2"),
    )
    sheets = tuple(wb.sheetnames)
    return DocumentTruth(path, "xlsx", "Fee Schedule", len(sheets), "sheet", sheets, known)


def _rows(sheet, header, rows, money_cols=()):
    sheet.append(header)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in rows:
        sheet.append(row)
    for col in money_cols:
        for (cell,) in sheet.iter_rows(min_row=2, min_col=col, max_col=col):
            cell.number_format = MONEY
    for column in sheet.columns:
        width = max(len(str(c.value)) for c in column) + 2
        sheet.column_dimensions[column[0].column_letter].width = min(width, 45)
