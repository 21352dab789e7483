"""Clauses asked for as users ask for them, in small contracts of the kinds they upload (DOCX, XLSX),
through the real pipeline and the offline engine with the clause finder fitted on cuad-train."""

from __future__ import annotations

import docx
import openpyxl
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from django.urls import reverse
from pptx import Presentation

from extraction import catalog
from extraction.docview import load_document
from extraction.finder.runtime import active_finder, rank_chunks
from extraction.finder.statements import MIN_CONFIDENCE, MIN_MATCHED, STATEMENTS, confidence
from extraction.models import UNSURE_BELOW
from extraction.service import find_clause
from ingest.intake import intake_file
from ingest.pipeline import run_pipeline

pytestmark = pytest.mark.django_db

CONVENIENCE = (
    "Either party may terminate this Agreement for convenience upon ninety (90) days' prior written notice "
    "to the other party."
)
FEE = "The Customer shall pay the Provider a fee of $247.83 per month for the Services."
LATE = (
    "Any amount not paid when due shall bear interest at the rate of one percent (1%) per month until paid."
)
ROYALTY = "Licensee shall pay Licensor a royalty of seven percent (7%) of Net Sales of each Licensed Product."
SERVICE_AGREEMENT = [
    ("MASTER SERVICES AGREEMENT", True),
    (
        "This Master Services Agreement is entered into as of March 3, 2025 by and between Northwind Traders "
        'Inc. (the "Customer") and Contoso Services LLC (the "Provider").',
        False,
    ),
    ("1. Services", True),
    ("The Provider shall provide the hosting and support services described in Schedule A.", False),
    ("2. Fees", True),
    (f"{FEE} {LATE}", False),
    ("3. Royalties", True),
    (
        f"{ROYALTY} Royalties are payable within thirty (30) days after the end of each calendar quarter.",
        False,
    ),
    ("4. Term and Termination", True),
    (
        "This Agreement commences on the Effective Date and continues for two (2) years. "
        f"{CONVENIENCE} Either party may terminate this Agreement upon written notice if the other party "
        "materially breaches it and fails to cure the breach within thirty (30) days.",
        False,
    ),
    ("5. Governing Law", True),
    ("This Agreement is governed by the laws of the State of New York.", False),
]


def _ingest(engagement, path):
    doc = intake_file(engagement, path, filename=path.name, enqueue=False).document
    assert run_pipeline(doc.pk), doc.error
    doc.refresh_from_db()
    assert doc.status == "ready", doc.error
    return doc


def _ingest_docx(engagement, path, blocks):
    """A DOCX of ``blocks`` ((text, is_heading) in order) through the real pipeline."""
    document = docx.Document()
    for text, heading in blocks:
        if heading:
            document.add_heading(text, level=1)
        else:
            document.add_paragraph(text)
    document.save(path)
    return _ingest(engagement, path)


@pytest.fixture
def service_agreement(engagement, tmp_path):
    return _ingest_docx(engagement, tmp_path / "services.docx", SERVICE_AGREEMENT)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_committed_finder_is_loaded_with_its_credit():
    finder = active_finder()
    assert finder is not None and finder.knows("Termination For Convenience")
    assert "CUAD v1, The Atticus Project" in finder.meta["credit"]
    assert "Third Party Beneficiary" in finder.statements  # the test below relies on it
    for clause_type, kept in finder.statements.items():  # kept by training's bar, nothing else
        assert clause_type in STATEMENTS and kept["matched"] >= MIN_MATCHED
        assert kept["confidence"] == round(confidence(kept["present"], kept["matched"]), 4) >= MIN_CONFIDENCE


def test_termination_for_convenience_is_the_ninety_days_notice_sentence(service_agreement, make_member):
    ex = find_clause(
        service_agreement,
        user=make_member(service_agreement.engagement, "auditor"),
        clause_type="Termination For Convenience",
        engine="offline",
    )
    assert ex.status == "found", ex.clause_text
    assert CONVENIENCE in _flat(ex.clause_text)
    assert "materially breaches" not in ex.clause_text


def test_the_royalty_percentage_question_cites_the_sentence_with_the_percentage(
    service_agreement, make_member
):
    ex = find_clause(
        service_agreement,
        user=make_member(service_agreement.engagement, "auditor"),
        question="What is the royalty percentage?",
        engine="offline",
    )
    assert ex.status == "found", ex.clause_text
    assert "seven percent (7%)" in ex.clause_text
    assert all("7%" in c.quote or "seven percent" in c.quote for c in ex.citations.all())


@pytest.fixture
def fee_sheet(engagement, tmp_path):
    book = openpyxl.Workbook()
    prices = book.active
    prices.title = "Prices"
    prices.append(["Item", "Unit", "Fee"])
    for i in range(1, 41):
        prices.append([f"Pallet storage tier {i}", "pallet/month", f"${10 + i}.00"])
    prices.append(["Onboarding fee", "one-off", "$1,950.00"])
    terms = book.create_sheet("Terms")
    terms.append(["Clause", "Text"])
    terms.append(["Term", "The agreement runs for three years from signature."])
    terms.append(["Governing Law", "This agreement is governed by the laws of England and Wales."])
    terms.append(["Notices", "Notices are given in writing to the addresses above."])
    path = tmp_path / "rate-card.xlsx"
    book.save(path)
    return _ingest(engagement, path)


def test_governing_law_on_a_sheet_named_terms_is_found(fee_sheet, make_member):
    ex = find_clause(
        fee_sheet,
        user=make_member(fee_sheet.engagement, "auditor"),
        clause_type="Governing Law",
        engine="offline",
    )
    assert ex.status == "found", ex.clause_text
    assert "England and Wales" in ex.clause_text


def test_a_question_about_a_fee_on_a_sheet_answers_with_the_cells_row(fee_sheet, make_member):
    ex = find_clause(
        fee_sheet,
        user=make_member(fee_sheet.engagement, "auditor"),
        question="What is the onboarding fee?",
        engine="offline",
    )
    assert ex.status == "found", ex.clause_text
    assert "$1,950.00" in ex.clause_text
    assert ex.clause_text.count("\n") <= 1, ex.clause_text  # the row, never the whole sheet
    assert "Pallet storage tier" not in ex.clause_text


def test_each_answer_says_how_sure_the_engine_is_and_the_unsure_ones_are_flagged(
    service_agreement, make_member, client
):
    auditor = make_member(service_agreement.engagement, "auditor")
    found = find_clause(
        service_agreement, user=auditor, clause_type="Termination For Convenience", engine="offline"
    )
    absent = find_clause(service_agreement, user=auditor, clause_type="Source Code Escrow", engine="offline")
    assert absent.status == "not_found"
    for ex in (found, absent):
        assert ex.confidence is not None and 0.0 <= ex.confidence <= 1.0
        assert ex.unsure == (ex.confidence < UNSURE_BELOW)
    client.force_login(auditor)
    page = client.get(reverse("clause", args=[service_agreement.pk, absent.pk])).content.decode()
    assert f"{absent.confidence_percent}% sure this clause is not in the contract" in page
    listed = client.get(reverse("clause", args=[service_agreement.pk, found.pk])).content.decode()
    assert f"{found.confidence_percent}% sure</span>" in listed  # the chip in the clause list
    assert 'data-show="unsure"' in listed


ASSIGNMENT = (
    "Neither party may assign or transfer this Agreement or any of its rights or obligations under it "
    "without the prior written consent of the other party, which consent shall not be unreasonably withheld."
)
CHANGE_OF_CONTROL = (
    "If the Supplier undergoes a change of control, including a merger or the acquisition of more than fifty "
    "percent (50%) of its voting shares by a third party, the Customer may terminate this Agreement upon "
    "thirty (30) days' written notice."
)


SUPPLY_AGREEMENT = [
    ("SUPPLY AGREEMENT", True),
    (
        'This Supply Agreement is made on June 2, 2025 between Fabrikam Components Ltd (the "Supplier") '
        'and Litware Devices Inc (the "Customer").',
        False,
    ),
    ("1. Supply", True),
    ("The Supplier shall supply the products listed in Schedule 1 at the prices set there.", False),
    ("9. General", True),  # the two neighbouring clauses side by side, no heading apart
    (f"{ASSIGNMENT} {CHANGE_OF_CONTROL}", False),
    ("This Agreement is governed by the laws of the State of Ohio.", False),
]


@pytest.fixture
def supply_agreement(engagement, tmp_path):
    return _ingest_docx(engagement, tmp_path / "supply.docx", SUPPLY_AGREEMENT)


def test_change_of_control_is_its_own_sentence_not_the_assignment_beside_it(supply_agreement, make_member):
    auditor = make_member(supply_agreement.engagement, "auditor")
    control = find_clause(supply_agreement, user=auditor, clause_type="Change Of Control", engine="offline")
    assert control.status == "found", control.clause_text
    assert "change of control" in control.clause_text and "unreasonably withheld" not in control.clause_text
    assignment = find_clause(supply_agreement, user=auditor, clause_type="Anti-Assignment", engine="offline")
    assert assignment.status == "found", assignment.clause_text
    assert "prior written consent" in assignment.clause_text and "voting shares" not in assignment.clause_text


RENT = "Lessee shall pay Lessor monthly rent of EUR 31,920.00 for the Equipment, payable in advance."
LEASE = [
    ("EQUIPMENT LEASE AGREEMENT", True),
    (
        "This Equipment Lease Agreement is entered into as of March 3, 2025 by and between Northfield Rail "
        'Services GmbH ("Lessor") and Calder Freight Logistics Ltd ("Lessee").',
        False,
    ),
    ("1. Lease of Equipment", True),
    (
        "Lessor hereby leases to Lessee the forty-two (42) intermodal container chassis described in Schedule A "
        "(the Equipment). Title to the Equipment shall remain with Lessor at all times.",
        False,
    ),
    ("2. Term", True),
    (
        "The initial term of this Agreement shall commence on the Effective Date and shall expire on March 2, "
        "2030, unless terminated earlier in accordance with Section 6.",
        False,
    ),
    ("3. Rent", True),
    (f"{RENT} {LATE}", False),
    ("4. Maintenance and Insurance", True),
    (
        "Lessee shall keep the Equipment in good working order, ordinary wear and tear excepted. Lessee shall "
        "maintain all-risks property insurance covering the Equipment for its full replacement value.",
        False,
    ),
    ("5. Assignment", True),
    (
        "Lessee may not assign, sublease or otherwise transfer this Agreement or any Equipment without the "
        "prior written consent of Lessor.",
        False,
    ),
    ("6. Termination", True),
    (
        "Either party may terminate this Agreement upon written notice if the other party commits a material "
        "breach and fails to cure it within thirty (30) days of notice. Upon expiry or termination, Lessee "
        "shall return the Equipment to Lessor's depot in Hamburg at its own cost.",
        False,
    ),
    ("7. Governing Law", True),
    ("This Agreement shall be governed by the laws of England and Wales.", False),
]


@pytest.fixture
def equipment_lease(engagement, tmp_path):
    return _ingest_docx(engagement, tmp_path / "lease.docx", LEASE)


@pytest.mark.parametrize(
    ("contract", "sentence", "amount"),
    [("service_agreement", FEE, "$247.83"), ("equipment_lease", RENT, "EUR 31,920.00")],
)
def test_the_payment_clause_is_the_fee_or_rent_sentence_not_the_late_interest_after_it(
    contract, sentence, amount, request, make_member
):
    document = request.getfixturevalue(contract)  # a service agreement's fee; a lease's rent
    ex = find_clause(
        document,
        user=make_member(document.engagement, "auditor"),
        clause_type="Payment",
        engine="offline",
    )
    assert ex.status == "found", ex.clause_text
    assert sentence in _flat(ex.clause_text)
    assert amount in ex.clause_text  # never paraphrased
    assert "bear interest" not in ex.clause_text


EXCLUSIVE = "Reseller is appointed exclusive reseller of the Products in Ireland and Northern Ireland."
SLIDES = [
    (
        "Reseller Programme Terms 2026",
        'Between Quillon Software AB ("Vendor") and Marlow Digital Partners Ltd.',
    ),
    (
        "Territory and exclusivity",
        f"{EXCLUSIVE} Vendor shall not appoint any other reseller in the Territory.",
    ),
    ("Governing law", "These terms are governed by the laws of Sweden."),
]


@pytest.fixture
def reseller_deck(engagement, tmp_path):
    deck = Presentation()
    for title, body in SLIDES:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    path = tmp_path / "reseller-terms.pptx"
    deck.save(path)
    return _ingest(engagement, path)


def test_a_slides_answer_is_its_body_without_the_slides_heading(reseller_deck, make_member):
    auditor = make_member(reseller_deck.engagement, "auditor")
    exclusivity = find_clause(reseller_deck, user=auditor, clause_type="Exclusivity", engine="offline")
    assert exclusivity.status == "found", exclusivity.clause_text
    assert exclusivity.clause_text.startswith(EXCLUSIVE), exclusivity.clause_text  # not "# Territory ..."
    name = find_clause(reseller_deck, user=auditor, clause_type="Document Name", engine="offline")
    assert name.clause_text == "Reseller Programme Terms 2026"


def test_a_named_finder_folder_without_an_artifact_is_a_clear_error(tmp_path):
    with (
        override_settings(CLAUSE_FINDER_DIR=str(tmp_path)),
        pytest.raises(ImproperlyConfigured, match="no clause_finder"),
    ):
        active_finder()


MFN = (
    "If Supplier offers any other distributor prices lower than those under this Agreement, Supplier shall "
    "offer the same lower prices to Distributor from the date they were first offered."
)
DISTRIBUTION_AGREEMENT = [
    ("SOFTWARE DISTRIBUTION AGREEMENT", True),
    (
        "This Software Distribution Agreement is made on 14 March 2025 between Norrland Analytics AB "
        '("Supplier") and Petrel Systems Pty Ltd ("Distributor").',
        False,
    ),
    ("3. Prices and Payment", True),
    (
        "Distributor shall pay Supplier a licence fee of $247.83 per seat per year, invoiced quarterly. "
        f"{MFN} Overdue amounts bear interest at 1.5% per month.",
        False,
    ),
    ("10. Governing Law", True),
    ("This Agreement is governed by the laws of New South Wales, Australia.", False),
]


def test_a_not_found_keeps_the_sentence_it_judged_closest_located_in_the_source(engagement, tmp_path):
    """A price promise to match any lower price (Most Favored Nation, a type with few labelled examples):
    either found, or the not_found points the reviewer at it; found answers keep no closest sentence."""
    doc = _ingest_docx(engagement, tmp_path / "distribution.docx", DISTRIBUTION_AGREEMENT)
    mfn = find_clause(doc, user=None, clause_type="Most Favored Nation", engine="offline")
    if mfn.status == "found":
        assert MFN in _flat(mfn.clause_text)
    else:
        assert _flat(mfn.closest["quote"]) == MFN
    escrow = find_clause(doc, user=None, clause_type="Source Code Escrow", engine="offline")
    assert escrow.status == "not_found"
    for ex in (mfn, escrow):
        if ex.status == "not_found":
            near = ex.closest
            assert doc.text[near["start"] : near["end"]] == near["quote"]
            page = doc.pages.get(char_start__lte=near["start"], char_end__gt=near["start"])
            assert near["page"] == page.number
    law = find_clause(doc, user=None, clause_type="Governing Law", engine="offline")
    assert law.status == "found" and law.closest == {}


LENDERS = (
    "The Servicer agrees that the Lenders shall be third party beneficiaries of Sections 4 and 9 and may "
    "enforce them directly against the Servicer."
)
NO_BENEFICIARY = (
    "It is the intention of the parties that no third person shall be deemed a third-party beneficiary of "
    "this Agreement."
)


def _servicing_agreement(general: str):
    return [
        ("SERVICING AGREEMENT", True),
        (
            'This Servicing Agreement is made on 9 April 2025 between Harbor Funding LLC (the "Owner") and '
            'Quay Loan Services Inc. (the "Servicer").',
            False,
        ),
        ("4. Servicing", True),
        ("The Servicer shall collect the payments on the receivables and remit them weekly.", False),
        ("9. General", True),
        (f"{general} This Agreement is governed by the laws of the State of New York.", False),
    ]


def test_a_non_party_named_beneficiary_is_found_as_sure_as_the_training_contracts_bore_it_out(
    engagement, tmp_path, make_member, client
):
    """Third Party Beneficiary is labelled in 11 of cuad-train's contracts: its scorers barely learn it,
    and the sentence granting the Lenders the benefit is found by the type's statement, kept by training
    with the confidence it earned there; the same agreement denying any beneficiary is a not_found."""
    stated = active_finder().statements["Third Party Beneficiary"]
    granted = _ingest_docx(engagement, tmp_path / "granted.docx", _servicing_agreement(LENDERS))
    ex = find_clause(granted, user=None, clause_type="Third Party Beneficiary", engine="offline")
    assert ex.status == "found", ex.clause_text
    assert LENDERS in _flat(ex.clause_text) and "governed by" not in ex.clause_text
    assert ex.confidence == pytest.approx(stated["confidence"], abs=1e-4)
    cited = ex.citations.get()
    assert granted.text[cited.start : cited.end] == cited.quote and cited.page == 1
    tpb = catalog.get("Third Party Beneficiary")  # and its chunk leads what Claude would read first
    assert rank_chunks(load_document(granted), tpb)[0] == cited.chunk.chunk_id
    client.force_login(make_member(engagement, "auditor"))  # the reviewer is told why, beside how sure
    page = client.get(reverse("clause", args=[granted.pk, ex.pk])).content.decode()
    assert f"{ex.confidence_percent}% sure this is the clause: found by its wording" in page
    denied = _ingest_docx(engagement, tmp_path / "denied.docx", _servicing_agreement(NO_BENEFICIARY))
    none = find_clause(denied, user=None, clause_type="Third Party Beneficiary", engine="offline")
    assert none.status == "not_found", none.clause_text
    law = find_clause(granted, user=None, clause_type="Governing Law", engine="offline")
    assert ex.stated and law.status == "found" and not law.stated  # the finder's own answers say no more
