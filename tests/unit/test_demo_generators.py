"""Demo document generators: exact page placement, determinism, exact values, formats."""

from __future__ import annotations

import json
import re

import pypdfium2 as pdfium
import pytest
from docx import Document
from openpyxl import load_workbook
from pptx import Presentation

from demo import (
    CUAD_CATEGORIES,
    SEED_TYPES,
    make_contract_docx,
    make_contract_pdf,
    make_manual_docx,
    make_paper_markdown,
    make_slides_pptx,
    make_workbook_xlsx,
    write_demo_set,
)
from demo import clauses as C
from demo.contracts import main as contracts_cli
from demo.prose import FORBIDDEN_IN_FILLER, LegalProse


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _page_texts(path) -> list[str]:
    doc = pdfium.PdfDocument(str(path))
    try:
        return [_norm(doc[i].get_textpage().get_text_range()) for i in range(len(doc))]
    finally:
        doc.close()


@pytest.fixture(scope="module")
def long_contract(tmp_path_factory):
    """A 200-page contract and its page texts (how long it takes to write: bench/bench_demo.py)."""
    path = tmp_path_factory.mktemp("long") / "msa-200.pdf"
    truth = make_contract_pdf(path, pages=200, seed=0)
    return truth, _page_texts(path)


def _assert_placement(truth, pages):
    assert truth.clauses
    for clause in truth.clauses:
        assert clause.parts[0].page == clause.page and clause.parts[-1].page == clause.end_page
        assert " ".join(p.text for p in clause.parts) == clause.text
        for part in clause.parts:
            assert _norm(part.text) in pages[part.page - 1], (clause.clause_type, part.page)
        if clause.page > 1:  # starts exactly there, not on the page before
            assert _norm(clause.parts[0].text) not in pages[clause.page - 2]
        for value in clause.values:
            assert value in clause.text
            assert any(value in pages[p.page - 1] for p in clause.parts), value


def test_200_page_contract_really_has_200_pages(long_contract):
    truth, pages = long_contract
    assert truth.pages == 200 and len(pages) == 200
    assert "Page 200 of 200" in pages[-1] and "CONFIDENTIAL" in pages[99]
    words = sum(len(p.split()) for p in pages)
    assert 350 * 200 <= words <= 520 * 200


def test_planted_clauses_are_on_their_pages(long_contract):
    truth, pages = long_contract
    _assert_placement(truth, pages)
    # spread over the whole document, including deep in the middle and near the end
    by_type = {c.clause_type: c for c in truth.clauses}
    assert by_type["Parties"].page == 1
    assert 60 <= by_type["Cap On Liability"].page <= 160
    assert by_type["Governing Law"].page > 170
    assert truth.fee_schedule_page == 199 and truth.signature_page == 198


def test_a_clause_spans_a_page_break(long_contract):
    truth, pages = long_contract
    spanning = [c for c in truth.clauses if c.spans_pages]
    assert any(c.clause_type == "indemnification" for c in spanning)
    clause = spanning[0]
    assert len(clause.parts) == 2 and clause.end_page == clause.page + 1
    assert _norm(clause.text) not in pages[clause.page - 1]  # really split


def test_exact_values_verbatim(long_contract):
    truth, pages = long_contract
    full = " ".join(pages)
    assert C.CAP_AMOUNT == "$247,830.00" and C.UNIT_FEE == "$247.83"
    assert full.count("governed by") == 1
    assert full.count(C.CAP_AMOUNT) == 1
    assert C.UNIT_FEE in pages[truth.by_type("payment")[0].page - 1]
    assert C.UNIT_FEE in pages[truth.fee_schedule_page - 1]
    assert C.CUSTOMER_ID in pages[truth.fee_schedule_page - 1]
    values = {v for c in truth.clauses for v in c.values}
    for expected in (
        C.GOVERNING_LAW,
        C.CAP_AMOUNT,
        C.UNIT_FEE,
        C.CUSTOMER_ID,
        C.PAYMENT_TERMS,
        C.CONVENIENCE_NOTICE,
        C.EFFECTIVE_DATE,
        C.RENEWAL_TERM,
    ):
        assert expected in values
    assert "~" not in full and "approximately $" not in full


def test_clause_types_and_absent_categories(long_contract):
    truth, _ = long_contract
    present = set(truth.present_types)
    for required in (
        "Governing Law",
        "Cap On Liability",
        "Termination For Convenience",
        "Anti-Assignment",
        "Change Of Control",
        "Non-Compete",
        "Renewal Term",
        "Effective Date",
        "Parties",
        "Agreement Date",
        "Ip Ownership Assignment",
        "Audit Rights",
        "Insurance",
        "indemnification",
        "payment",
        "termination",
    ):
        assert required in present
    assert present <= set(CUAD_CATEGORIES) | set(SEED_TYPES)
    assert truth.absent and not set(truth.absent) & present
    assert set(truth.absent) | present >= set(CUAD_CATEGORIES)
    assert "Most Favored Nation" in truth.absent and "Source Code Escrow" in truth.absent


def test_filler_never_touches_a_clause_topic():
    prose = LegalProse(seed=5)
    text = " ".join(prose.paragraph() for _ in range(400)).lower()
    assert not [stem for stem in FORBIDDEN_IN_FILLER if stem in text]
    assert "lorem" not in text
    assert text.encode("latin-1")  # core-font safe


def test_same_seed_same_bytes_other_seed_other_text(tmp_path):
    a = make_contract_pdf(tmp_path / "a.pdf", pages=20, seed=11)
    b = make_contract_pdf(tmp_path / "b.pdf", pages=20, seed=11)
    c = make_contract_pdf(tmp_path / "c.pdf", pages=20, seed=12)
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
    assert [(x.clause_type, x.page, x.text) for x in a.clauses] == [
        (x.clause_type, x.page, x.text) for x in b.clauses
    ]
    assert _page_texts(tmp_path / "a.pdf")[5] != _page_texts(tmp_path / "c.pdf")[5]
    assert {x.text for x in a.clauses} == {x.text for x in c.clauses}  # same planted wording
    _assert_placement(c, _page_texts(tmp_path / "c.pdf"))


@pytest.mark.parametrize("seed", [0, 7, 19])
def test_short_decimal_numbered_contract(tmp_path, seed):
    path = tmp_path / "supply.pdf"
    truth = make_contract_pdf(
        path,
        pages=12,
        seed=seed,
        title="Supply Agreement",
        parties=("Harbor Foods Co.", "Cascade Packaging Ltd."),
        roles=("Buyer", "Supplier"),
        numbering="decimal",
    )
    pages = _page_texts(path)
    assert len(pages) == 12
    _assert_placement(truth, pages)
    assert any(c.spans_pages for c in truth.clauses)
    law = truth.by_type("Governing Law")[0]
    assert re.fullmatch(r"\d+\.\d+ Governing Law", law.section)
    assert "Buyer shall pay Supplier" in truth.by_type("payment")[0].text


def test_too_few_pages_is_refused(tmp_path):
    with pytest.raises(ValueError):
        make_contract_pdf(tmp_path / "x.pdf", pages=5)


def test_contract_docx_has_heading_styles_and_clauses(tmp_path):
    truth = make_contract_docx(tmp_path / "nda.docx", seed=3)
    doc = Document(str(tmp_path / "nda.docx"))
    styles = {p.style.name for p in doc.paragraphs}
    assert {"Title", "Heading 1", "Heading 2"} <= styles
    headings = [p.text for p in doc.paragraphs if p.style.name.startswith(("Heading", "Title"))]
    assert headings == list(truth.headings)
    texts = [p.text for p in doc.paragraphs]
    for known in truth.known:
        assert known.text in texts
        assert all(v in known.text for v in known.values)
        if known.location not in ("Title", "Preamble"):
            assert texts.index(known.text) == texts.index(known.location) + 1  # right under its heading
    assert truth.by_type("Governing Law")[0].values == ("State of New York",)
    assert 8 <= truth.approx_pages <= 13
    again = make_contract_docx(tmp_path / "again.docx", seed=3)
    assert (tmp_path / "nda.docx").read_bytes() == (tmp_path / "again.docx").read_bytes()
    assert again.known == truth.known


def test_manual_and_paper(tmp_path):
    manual = make_manual_docx(tmp_path / "manual.docx")
    doc = Document(str(tmp_path / "manual.docx"))
    body = "\n".join(p.text for p in doc.paragraphs)
    cells = "\n".join(c.text for t in doc.tables for r in t.rows for c in r.cells)
    for known in manual.known:
        assert known.text in body or known.text in cells
    paper = make_paper_markdown(tmp_path / "paper.md")
    text = (tmp_path / "paper.md").read_text()
    for section in ("Abstract", "Introduction", "Methods", "Results", "Discussion", "Conclusion"):
        assert f"\n# {section}\n" in text
    for known in paper.known:
        section = text.split(f"# {known.location}\n", 1)[1].split("\n# ", 1)[0]
        assert known.text in section


def test_slides_pptx(tmp_path):
    truth = make_slides_pptx(tmp_path / "deck.pptx")
    prs = Presentation(str(tmp_path / "deck.pptx"))
    slides = list(prs.slides)
    assert len(slides) == truth.count >= 6
    assert [s.shapes.title.text for s in slides] == list(truth.headings)
    for known in truth.known:
        number = int(known.location.split()[1])
        slide_text = " ".join(sh.text_frame.text for sh in slides[number - 1].shapes if sh.has_text_frame)
        assert known.text in slide_text


def test_workbook_xlsx(tmp_path):
    truth = make_workbook_xlsx(tmp_path / "fees.xlsx")
    wb = load_workbook(tmp_path / "fees.xlsx")
    assert wb.sheetnames == list(truth.headings) and truth.count == 3
    for known in truth.known:
        sheet, cell = known.location.split("!")
        assert known.text in str(wb[sheet][cell].value)
    assert wb["Fee Schedule"]["D2"].value == 247.83
    assert wb["Customers"]["A3"].value == "cust_4711"


def test_demo_set_is_deterministic_and_idempotent(tmp_path):
    first = write_demo_set(tmp_path)
    assert [p.suffix for p in first] == [".pdf", ".pdf", ".docx", ".xlsx"]
    stamps = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in first}
    second = write_demo_set(tmp_path)
    assert second == first
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in second} == stamps
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in first)  # no temp files
    page_counts = [len(pdfium.PdfDocument(str(p))) for p in first if p.suffix == ".pdf"]
    assert page_counts == [40, 12]


def test_cli_writes_contract_and_truth(tmp_path, capsys):
    assert contracts_cli([str(tmp_path), "--pages", "14", "--seed", "2"]) == 0
    pdf = tmp_path / "msa-14p-seed2.pdf"
    truth = json.loads(pdf.with_suffix(".truth.json").read_text())
    assert truth["pages"] == 14 and len(pdfium.PdfDocument(str(pdf))) == 14
    assert {c["clause_type"] for c in truth["clauses"]} >= {"Governing Law", "Cap On Liability"}
    assert str(pdf) in capsys.readouterr().out


def test_demo_benchmark_corpus_is_a_valid_corpus_whose_gold_sits_on_its_pages(tmp_path):
    from dashboards.corpus import summarise
    from demo.benchmark_corpus import write_demo_corpus

    folder = write_demo_corpus(tmp_path / "demo-benchmark")
    summary = summarise(folder)
    documents = [json.loads(line) for line in (folder / "documents.jsonl").read_text().splitlines()]
    gold = [json.loads(line) for line in (folder / "gold.jsonl").read_text().splitlines()]
    assert summary.problems == [] and summary.credit == ""  # synthetic: no CUAD credit claimed
    assert summary.document_count == len(documents) == 2
    assert summary.pair_count == len(gold) == 2 * len(CUAD_CATEGORIES)
    for document in documents:
        pages = _page_texts(folder / document["pdf"])
        assert len(pages) == document["pages"]
        rows = {row["clause_type"]: row for row in gold if row["doc"] == document["doc"]}
        assert {t for t, row in rows.items() if not row["present"]} == set(C.absent_cuad_types())
        present = [row for row in rows.values() if row["present"]]
        assert {"Governing Law", "Cap On Liability", "Parties"} <= {row["clause_type"] for row in present}
        for row in present:
            for span in row["spans"]:
                assert " ".join(part["text"] for part in span["parts"]) == span["text"]
                for part in span["parts"]:
                    assert _norm(part["text"]) in pages[part["pages"][0] - 1], (row["clause_type"], part)
        # Names and dates are labelled as the mention itself, as CUAD labels them.
        assert [span["text"] for span in rows["Agreement Date"]["spans"]] == [C.AGREEMENT_DATE]
        assert len(rows["Parties"]["spans"]) == 2 and all(
            len(s["text"]) < 40 for s in rows["Parties"]["spans"]
        )
    # Same generator, same gold: a second write leaves the digest the benchmark set records unchanged.
    assert summarise(write_demo_corpus(folder)).gold_sha256 == summary.gold_sha256
