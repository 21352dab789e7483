"""Export rows: one per citation, formula-looking cells neutralised, all three formats readable."""

import csv
import io
import json
import zipfile

from openpyxl import load_workbook

from reviewer.exports import COLUMNS, csv_chunks, flat_rows, json_chunks, safe_cell, write_xlsx


def to_csv(records) -> bytes:
    return b"".join(csv_chunks(records))


def to_json(records, **meta) -> bytes:
    return b"".join(json_chunks(records, **meta))


def to_xlsx(records) -> bytes:
    buf = io.BytesIO()
    write_xlsx(records, buf)
    return buf.getvalue()


RECORDS = [
    {
        "document_id": 1,
        "document": "MSA",
        "document_type": "Service",
        "extraction_id": 10,
        "clause": '=HYPERLINK("http://x")',
        "engine_text": "",
        "type": "Governing Law",
        "status": "found",
        "engine": "offline",
        "model": "",
        "extraction_version": 1,
        "citations": [
            {
                "citation_id": 5,
                "ordinal": 0,
                "chunk_id": "abc",
                "page": 3,
                "span": [10, 20],
                "quote": "+1 555",
            },
            {
                "citation_id": 6,
                "ordinal": 1,
                "chunk_id": "def",
                "page": 4,
                "span": [30, 40],
                "quote": "- The Supplier shall deliver.",
            },
        ],
        "current_decision": "accepted",
        "reviewer": "alice",
        "decided_at": "2026-03-01T10:00:00+00:00",
        "reason": "ok",
    },
    {
        "document_id": 1,
        "document": "MSA",
        "extraction_id": 11,
        "clause": "",
        "engine_text": "",
        "type": "Non-Compete",
        "status": "not_found",
        "engine": "offline",
        "model": "",
        "confidence": 0.91,
        "closest": {"page": 7, "span": [50, 90], "quote": "=Distributor shall not sell rival products."},
        "extraction_version": 1,
        "citations": [],
        "current_decision": "not reviewed",
        "reviewer": "",
        "decided_at": None,
        "reason": "",
    },
]


def test_one_row_per_citation_and_one_for_an_uncited_clause():
    rows = flat_rows(RECORDS)
    assert [(r["extraction_id"], r["chunk_id"], r["page"]) for r in rows] == [
        (10, "abc", 3),
        (10, "def", 4),
        (11, "", ""),
    ]
    assert (
        rows[0]["span_start"] == 10
        and rows[0]["span_end"] == 20
        and rows[0]["current_decision"] == "accepted"
    )
    assert [r["document_type"] for r in rows] == ["Service", "Service", ""]


def test_a_not_found_row_says_how_sure_and_names_its_closest_sentence_apart_from_citations():
    rows = flat_rows(RECORDS)
    assert (rows[2]["confidence"], rows[2]["closest_page"], rows[2]["quote"]) == (0.91, 7, "")
    assert rows[0]["confidence"] == rows[0]["closest_quote"] == ""  # the engine said neither
    (line,) = list(csv.DictReader(io.StringIO(to_csv(RECORDS[1:]).decode("utf-8-sig"))))
    assert line["closest_quote"] == "'=Distributor shall not sell rival products."  # a formula never runs


def test_formula_cells_are_neutralised():
    assert safe_cell("=1+1") == "'=1+1" and safe_cell("@SUM") == "'@SUM" and safe_cell("plain") == "plain"
    assert safe_cell(5) == 5


def test_csv_json_xlsx():
    rows = list(csv.DictReader(io.StringIO(to_csv(RECORDS).decode("utf-8-sig"))))
    assert list(rows[0].keys()) == list(COLUMNS)
    assert rows[0]["clause"].startswith("'=HYPERLINK") and rows[0]["quote"] == "'+1 555"
    data = json.loads(to_json(RECORDS, engagement={"id": 1}))
    assert data["engagement"] == {"id": 1} and data["clauses"][0]["clause"].startswith(
        "=HYPERLINK"
    )  # JSON is raw
    assert rows[1]["quote"] == "'- The Supplier shall deliver."  # CSV: guarded
    sheet = load_workbook(io.BytesIO(to_xlsx(RECORDS))).active
    values = list(sheet.iter_rows(values_only=True))
    assert values[0] == COLUMNS and len(values) == 4


def test_xlsx_keeps_the_exact_quote_as_text_that_never_runs():
    data = to_xlsx(RECORDS)
    rows = list(load_workbook(io.BytesIO(data)).active.iter_rows(min_row=2))
    clause, quote = rows[0][COLUMNS.index("clause")], rows[0][COLUMNS.index("quote")]
    assert (clause.value, clause.data_type) == ('=HYPERLINK("http://x")', "s")  # a string cell, not a formula
    assert (quote.value, quote.data_type) == ("+1 555", "s")
    assert rows[1][COLUMNS.index("quote")].value == "- The Supplier shall deliver."  # exact, no apostrophe
    assert rows[0][COLUMNS.index("page")].value == 3  # numbers stay numbers
    with zipfile.ZipFile(io.BytesIO(data)) as xlsx:
        sheet = xlsx.read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet and "<f " not in sheet  # no formula anywhere in the file


def test_xlsx_cuts_a_text_past_excels_cell_limit_and_keeps_page_broken_words_apart():
    long_clause = (
        "The Supplier shall indemnify the Customer. " * 1000
    )  # 43,000 characters: Excel takes 32,767
    records = [
        {
            **RECORDS[0],
            "clause": long_clause,
            "citations": [{**RECORDS[0]["citations"][0], "quote": "fee of\f$247.83 per unit"}],
        }
    ]
    row = list(load_workbook(io.BytesIO(to_xlsx(records))).active.iter_rows(min_row=2, values_only=True))[0]
    clause, quote = row[COLUMNS.index("clause")], row[COLUMNS.index("quote")]
    assert len(clause) == 32_767 and clause.endswith("the JSON export has it whole]")
    assert long_clause.startswith(clause[:32_000])
    assert quote == "fee of $247.83 per unit"  # the page break was dropped: "fee of$247.83"
    assert json.loads(to_json(records))["clauses"][0]["clause"] == long_clause  # whole in JSON


def test_streamed_json_and_csv_are_the_same_bytes_whatever_the_piece_size(monkeypatch):
    import reviewer.exports as exports

    meta = {"exported_at": "2026-11-28T07:00:00+00:00", "engagement": {"id": 1, "name": "Acme “audit”"}}
    whole_json, whole_csv = to_json(RECORDS, **meta), to_csv(RECORDS)
    assert whole_json == json.dumps({**meta, "clauses": RECORDS}, ensure_ascii=False, indent=2).encode()
    monkeypatch.setattr(exports, "CHUNK_BYTES", 7)  # many small pieces: none may lose or repeat a byte
    pieces = list(exports.json_chunks(iter(RECORDS), **meta))
    assert len(pieces) > 1 and b"".join(pieces) == whole_json
    assert b"".join(exports.csv_chunks(iter(RECORDS))) == whole_csv


def test_an_export_with_no_clauses_is_a_valid_empty_file():
    assert json.loads(to_json([], engagement={"id": 1})) == {"engagement": {"id": 1}, "clauses": []}
    assert to_csv([]).decode("utf-8-sig").splitlines() == [",".join(COLUMNS)]
    assert list(load_workbook(io.BytesIO(to_xlsx([]))).active.iter_rows(values_only=True)) == [COLUMNS]
