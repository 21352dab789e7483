"""Offline engine: verbatim spans, not_found threshold, determinism, pluggable embeddings."""

import hashlib

import numpy as np
import pytest

from extraction import catalog
from extraction.agent.tool_schemas import validate_extract_clause
from extraction.docview import ScoredChunk
from extraction.offline.reader import (
    DEFAULT_THRESHOLD,
    LEXICAL_THRESHOLD,
    default_threshold,
    extract_offline,
    lexical_score,
    score_sentences,
    terms,
)
from extraction.verify import verify_extraction
from ingest.chunker import ChunkSpec
from ingest.pages import page_of
from ingest.sentences import evidence_sentences

PAGE1 = (
    "DISTRIBUTION AGREEMENT\n\n"
    "This Distribution Agreement is made and entered into as of March 3, 2019 by and between Acme Inc. "
    "and Beta LLC. Acme Inc. manufactures widgets. The Distributor shall purchase widgets monthly.\n\n"
    "Payment. Distributor shall pay $247.83 per unit within thirty (30) days of invoice."
)
PAGE2 = (
    "Assignment. Neither party may assign this Agreement without the prior written consent of the other "
    "party. Any attempted assignment without such consent shall be void. Notices must be in writing.\n\n"
    "Governing Law. This Agreement shall be governed by and construed in accordance with the laws of the "
    "State of Delaware, without regard to its conflict of laws principles. The headings are for "
    "convenience only."
)
DOC = PAGE1 + "\f" + PAGE2
PAGES = [(1, 0, len(PAGE1)), (2, len(PAGE1) + 1, len(DOC))]


def chunks(size=260, overlap=60):
    out, s, i = [], 0, 0
    while s < len(DOC):
        e = min(len(DOC), s + size)
        out.append(ChunkSpec(f"c{i}", i, DOC[s:e], s, e, page_of(s, PAGES), page_of(e - 1, PAGES), i, ""))
        if e == len(DOC):
            break
        s, i = e - overlap, i + 1
    return out


CHUNKS = chunks()


def retrieved():
    return [ScoredChunk(c, score=1.0 / (i + 1)) for i, c in enumerate(CHUNKS)]


def hashed_embed(texts):
    """A deterministic bag-of-stems embedding (a stand-in for a sentence model)."""
    out = np.zeros((len(texts), 256))
    for r, t in enumerate(texts):
        for w in terms(t):
            out[r, int(hashlib.md5(w.encode()).hexdigest(), 16) % 256] += 1.0
    return out


def check_output(result, clause):
    ti = result.tool_input
    assert validate_extract_clause(ti) == [], ti
    assert ti["clause_type"] == clause.name
    v = verify_extraction(ti["citations"], CHUNKS, PAGES, ti["clause_text"], document_text=DOC)
    assert v.ok, v.errors
    for c in v.citations:
        assert c.match == "exact" and c.page_matched
    return v


def test_finds_governing_law_verbatim_on_the_right_page():
    clause = catalog.get("Governing Law")
    r = extract_offline(clause, retrieved(), pages=PAGES, clause_id="governing-law-1")
    assert not r.not_found and r.tool_input["clause_id"] == "governing-law-1"
    v = check_output(r, clause)
    assert (
        "governed by and construed in accordance with the laws of the State of Delaware"
        in v.citations[0].quote
    )
    assert v.citations[0].page == 2


def test_finds_anti_assignment_with_a_sentence_window():
    clause = catalog.get("Anti-Assignment")
    r = extract_offline(clause, retrieved(), pages=PAGES, relative_cutoff=0.6)
    v = check_output(r, clause)
    quote = DOC[
        v.citations[0].start : v.citations[-1].end
    ]  # the window, cited chunk by chunk where it crosses one
    assert quote.startswith("Neither party may assign") and "shall be void." in quote


def test_absent_clause_is_not_found():
    for name in ("Source Code Escrow", "Liquidated Damages", "Non-Disparagement"):
        clause = catalog.get(name)
        r = extract_offline(clause, retrieved(), pages=PAGES)
        assert r.not_found, (name, r.best_score, r.candidates[0].text)
        assert r.tool_input["citations"] == [] and r.tool_input["clause_text"] == "not_found"
        assert validate_extract_clause(r.tool_input) == []
        assert verify_extraction([], CHUNKS, PAGES, "not_found").ok


def test_threshold_is_a_parameter():
    clause = catalog.get("Governing Law")
    assert extract_offline(clause, retrieved(), pages=PAGES, threshold=1.01).not_found
    escrow = catalog.get("Source Code Escrow")
    forced = extract_offline(escrow, retrieved(), pages=PAGES, threshold=0.0)
    assert not forced.not_found
    check_output(forced, escrow)


def test_default_threshold_depends_on_signals():
    assert default_threshold(retrieved(), None) == LEXICAL_THRESHOLD
    assert default_threshold(retrieved(), hashed_embed) == DEFAULT_THRESHOLD
    assert default_threshold([ScoredChunk(CHUNKS[0], 0.5, cosine=0.4)], None) == DEFAULT_THRESHOLD


def test_deterministic():
    clause = catalog.get("Payment")
    a = extract_offline(clause, retrieved(), pages=PAGES, embed=hashed_embed)
    b = extract_offline(clause, retrieved(), pages=PAGES, embed=hashed_embed)
    assert a == b


def test_embeddings_are_used_when_given():
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return hashed_embed(texts)

    clause = catalog.get("Governing Law")
    r = extract_offline(clause, retrieved(), pages=PAGES, embed=embed)
    assert len(calls) == 1 and calls[0][:2] == [clause.query, clause.example]  # one call: queries, sentences
    assert r.candidates[0].embedding is not None
    check_output(r, clause)

    # an embedding that only likes the notices sentence makes it win
    other = catalog.get("Other")

    def biased(texts):
        return np.array(
            [[1.0, 0.0] if "Notices" in t or t in (other.query, other.example) else [0.0, 1.0] for t in texts]
        )

    r2 = extract_offline(other, retrieved(), pages=PAGES, embed=biased)
    assert r2.candidates[0].text == "Notices must be in writing."


def test_chunk_cosine_prior_is_mixed_in():
    clause = catalog.get("Governing Law")
    plain = score_sentences(clause, retrieved())
    boosted = score_sentences(clause, [ScoredChunk(c, 1.0, cosine=1.0) for c in CHUNKS])
    assert boosted[0].score > plain[0].score


def test_agreement_date_is_narrowed_to_the_date():
    clause = catalog.get("Agreement Date")
    r = extract_offline(clause, retrieved(), pages=PAGES, threshold=0.0)
    assert [c["quote"] for c in r.tool_input["citations"]] == ["March 3, 2019"]
    check_output(r, clause)


def test_parties_lists_every_party_the_preamble_names():
    clause = catalog.get("Parties")
    r = extract_offline(clause, retrieved(), pages=PAGES, threshold=0.0)
    assert [c["quote"] for c in r.tool_input["citations"]] == ["Acme Inc.", "Beta LLC."]
    assert r.tool_input["clause_text"] == "Acme Inc.; Beta LLC."
    check_output(r, clause)


def test_parties_reads_nordic_forms_and_skips_a_description():
    text = (
        "SOFTWARE LICENSE AGREEMENT\n\nThis Agreement is entered into by and between Halvorsen Analytics AS, "
        'a Norwegian company ("Licensor"), and Brightwater Logistics, Inc., a Delaware Corporation '
        '("Customer"). THE SOFTWARE IS HEREINAFTER REFERRED TO AS THE PLATFORM. '
    )
    r = _answer_opening("Parties", text)
    quotes = [c["quote"] for c in r.tool_input["citations"]]
    assert quotes == ["Halvorsen Analytics AS", "Brightwater Logistics, Inc."]
    assert r.offsets == tuple(text.index(q) for q in quotes)


def test_document_name_is_the_title():
    clause = catalog.get("Document Name")
    r = extract_offline(clause, retrieved(), pages=PAGES, threshold=0.0)
    assert r.tool_input["citations"][0]["quote"] == "DISTRIBUTION AGREEMENT"


def test_document_name_in_title_case_or_named_by_the_preamble():
    for text, title in (
        (
            "Exhibit 10.3\nRoad Transportation Agreement\nbetween Acme Inc. and Beta LLC.\n\n",
            "Road Transportation Agreement",
        ),
        (
            "This Consulting and Product Development Agreement (the \u201cAgreement\u201d) is made by Acme Inc. "
            "and Beta LLC. ",
            "Consulting and Product Development Agreement",
        ),
        (
            "AMENDMENT NO. 3 TO THE DISTRIBUTOR AGREEMENT\n\nThis Amendment is made by Acme Inc. ",
            "AMENDMENT NO. 3 TO THE DISTRIBUTOR AGREEMENT",
        ),
        (  # a workbook's first sheet, as ingest.xlsx writes it
            "## Order Form\n\n| Item | Reference | Total |\n| --- | --- | --- |\n"
            "| Route Planner subscription | ord_88213 | $184,500.00 |\n\n",
            "Order Form",
        ),
        (  # a title set large, wrapped over two lines (a scanned lease, as OCR reads it)
            "COMMERCIAL LEASE\nAGREEMENT\n\nLease Reference: LX-2291\n\n",
            "COMMERCIAL LEASE\nAGREEMENT",
        ),
        (  # a slide deck's first slide, as ingest writes it
            "# Master Services Term Sheet\n\nNorthwind Logistics GmbH and Quayside Freight Ltd\n\n",
            "Master Services Term Sheet",
        ),
        (  # a filing's exhibit number above the title is not part of it
            "EXHIBIT 10.1\nAGREEMENT\n\nThis Agreement is made by Acme Inc. ",
            "AGREEMENT",
        ),
    ):
        r = _answer_opening("Document Name", text)
        assert r.tool_input["clause_text"] == title


def test_a_title_without_a_document_noun_is_quoted_without_its_markdown():
    text = "# Halvorsen Reseller Programme\n\nResellers buy at list price less a discount. "
    r = _answer_opening("Document Name", text)
    quote = r.tool_input["citations"][0]["quote"]
    assert quote == "Halvorsen Reseller Programme", r.tool_input
    assert r.offsets == (text.index(quote),)


def test_a_party_is_named_by_its_name_not_by_its_legal_form():
    r = _answer_opening(
        "Parties",
        "CONSULTING AGREEMENT\n\nThe Consultant, a Virginia limited liability company, and the Manager, a "
        "Delaware corporation, agree with Medalist Diversified REIT, Inc. as follows. ",
        "Each party shall perform its obligations in good faith. ",
    )
    assert r.tool_input["clause_text"] == "Medalist Diversified REIT, Inc."


def test_values_in_the_answer_are_verbatim():
    clause = catalog.get("Payment")
    r = extract_offline(clause, retrieved(), pages=PAGES, threshold=0.0)
    v = check_output(r, clause)
    assert "$247.83" in r.tool_input["clause_text"] and "$247.83" in v.values_checked


def test_plain_chunks_and_empty_input():
    clause = catalog.get("Governing Law")
    assert not extract_offline(clause, CHUNKS, pages=PAGES).not_found
    empty = extract_offline(clause, [], pages=PAGES)
    assert empty.not_found and empty.best_score == 0.0


def units(text: str) -> list[str]:
    """The texts of ``evidence_sentences(text)``."""
    return [text[s:e] for s, e in evidence_sentences(text)]


def test_evidence_sentences():
    text = "Acme Inc. sells goods. It is based in the U.S. and Canada.\n\nSECTION 2\nNext one! Done? Yes."
    assert units(text) == [
        "Acme Inc. sells goods.",
        "It is based in the U.S. and Canada.",
        "SECTION 2\nNext one!",
        "Done?",
        "Yes.",
    ]
    long = "; ".join([f"clause part number {i} about fees and obligations" for i in range(40)]) + "."
    spans = evidence_sentences(long)
    assert len(spans) > 1 and all(e - s <= 800 for s, e in spans)
    assert "".join(long[s:e] for s, e in spans).replace(" ", "") == long.replace(" ", "")


def test_lexical_score_saturates():
    q = terms("governed by the laws of the state")
    assert lexical_score(q, "unrelated words") == 0.0
    assert 0 < lexical_score(q, "laws apply") < lexical_score(q, "governed by the laws of the State") < 1


def test_the_operative_clause_wins_over_the_definition_of_its_words():
    for term in ("“Net Sales” means", "Net Sales shall mean"):
        text = (
            f"{term} the gross revenues invoiced on which the royalty percentage, revenue share and "
            "commission are payable.\n\nLicensee shall pay Licensor a royalty of five percent (5%) of Net Sales."
        )
        r = extract_offline(
            catalog.get("Revenue/Profit Sharing"),
            _doc_chunks(text, size=len(text)),
            pages=[(1, 0, len(text))],
            embed=hashed_embed,
            threshold=0.0,
        )
        assert r.tool_input["clause_text"].startswith("Licensee shall pay Licensor a royalty"), r.candidates[
            :2
        ]


def test_a_clause_binds_someone_a_contents_entry_does_not():
    text = (
        "TABLE OF CONTENTS\n\nArticle 3. Exclusive Distributor in the Territory; Exclusivity of Supply; No Other "
        "Distributors; Direct Sales in the Territory.\n\nARTICLE 3\n\nSupplier shall not appoint any other "
        "distributor in the Territory."
    )
    r = extract_offline(
        catalog.get("Exclusivity"),
        _doc_chunks(text, size=len(text)),
        pages=[(1, 0, len(text))],
        embed=hashed_embed,
        threshold=0.0,
    )
    assert r.tool_input["clause_text"] == "Supplier shall not appoint any other distributor in the Territory."


def test_hyphenated_words_read_alike_however_the_pdf_broke_them():
    assert (
        terms("a non-transferable licence")
        == terms("a non- transferable licence")
        == ["non", "transferable", "licence"]
    )
    q = terms("non-transferable non-sublicensable license")
    assert lexical_score(q, "a non- transferable, non-sublicensable license") > lexical_score(
        q, "a transferable and sublicensable license"
    )


def _doc_chunks(text: str, size: int = 400) -> list[ChunkSpec]:
    """Consecutive chunks of ``text`` on one page, ordinals from 0."""
    return [
        ChunkSpec(f"d{i}", i, text[s : s + size], s, min(len(text), s + size), 1, 1, i, "")
        for i, s in enumerate(range(0, len(text), size))
    ]


def _answer_opening(name: str, opening: str, later: str = "The headings are for convenience only. "):
    """The offline answer for type ``name`` of a document that states ``opening`` in its first chunk and
    ``later`` some 600 characters on, every chunk retrieved alike."""
    text = opening + "x " * 300 + later
    return extract_offline(
        catalog.get(name),
        [ScoredChunk(c, 0.5) for c in _doc_chunks(text)],
        pages=[(1, 0, len(text))],
        threshold=0.0,
    )


def test_a_heading_hands_its_score_to_the_clause_it_heads():
    text = (
        "12. LIMITATION OF LIABILITY\n\n"
        "Neither party shall be liable for indirect damages, and its aggregate liability shall not exceed the "
        "fees paid in the twelve months before the claim.\n\n"
        "13. NOTICES\n\nNotices shall be sent by courier."
    )
    chunks = _doc_chunks(text, size=len(text))
    r = extract_offline(catalog.get("Cap On Liability"), chunks, pages=[(1, 0, len(text))], threshold=0.0)
    assert r.tool_input["clause_text"].startswith("Neither party shall be liable"), r.tool_input
    heading = next(c for c in r.candidates if c.text == "12. LIMITATION OF LIABILITY")
    body = next(c for c in r.candidates if c.text.startswith("Neither party"))
    assert body.score > heading.score


def test_a_markdown_heading_is_one_unit():
    # Converted DOCX/HTML/Markdown keep "# 11. Governing Law": its number's full stop ends no sentence.
    text = "# 11. Governing Law\n\n## 11.1 Governing Law\n\nThis Agreement is governed by New York law."
    assert units(text)[:2] == ["# 11. Governing Law", "## 11.1 Governing Law"]


def test_a_markdown_heading_is_a_unit_even_with_its_body_on_the_next_line():
    # a slide converted from PPTX, or a Markdown file: the heading's body follows on the very next line
    text = (
        "# Reseller Terms\nBetween Quillon AB and Marlow Ltd.\f"  # each slide a page: a heading after "\f"
        "# Territory and exclusivity\nReseller is appointed exclusive reseller of the Products in Ireland."
    )
    assert units(text) == [
        "# Reseller Terms",
        "Between Quillon AB and Marlow Ltd.",
        "# Territory and exclusivity",
        "Reseller is appointed exclusive reseller of the Products in Ireland.",
    ]
    sheets = "## Prices\n| Item | Fee |\n| Onboarding | $1,950.00 |\f## Terms\n| Law | England |"
    assert units(sheets) == [
        "## Prices",
        "| Item | Fee |",
        "| Onboarding | $1,950.00 |",
        "## Terms",
        "| Law | England |",
    ]


def test_the_document_name_is_quoted_without_its_markdown_heading_marks():
    clause = catalog.get("Document Name")
    for title in (
        "# WEBSITE HOSTING AGREEMENT",
        "## Website Hosting Agreement",
        "# Reseller Programme Terms 2026",
    ):
        text = f"{title}\n\nThis Website Hosting Agreement is made on 4 May 2026 between Host and Client."
        chunk = ChunkSpec("c0", 0, text, 0, len(text), 1, 1, 0, "")
        r = extract_offline(clause, [chunk], pages=[(1, 0, len(text))], threshold=0.0)
        assert r.tool_input["clause_text"] == title.lstrip("# "), r.tool_input


@pytest.mark.parametrize(
    "text",
    [
        "# 11. Governing Law\n\n## 11.1 Governing Law\n\nThis Agreement is governed by the laws of the State of "
        "New York.\n\n## 11.2 Escalation\n\nDisputes go to the Steering Committee first.",
        "Section 11. Governing Law\n\nThis Agreement is governed by the laws of the State of New York.\n\n"
        "Section 12. Escalation\n\nDisputes go to the Steering Committee first.",
        "10. Reporting. The Supplier shall report monthly. Governing Law. This Agreement is governed by the laws of "
        "the State of New York. Escalation. Disputes go to the Steering Committee first.",
    ],
    ids=["markdown", "numbered-section", "inline-title"],
)
def test_a_question_naming_a_clause_title_is_answered_by_the_clause_not_its_title(text):
    question = catalog.ClauseType(
        "Q: governing law", "q-governing-law", catalog.TEXT, "governing law", "governing law", "custom"
    )
    r = extract_offline(question, _doc_chunks(text, size=len(text)), pages=[(1, 0, len(text))], threshold=0.0)
    assert r.tool_input["clause_text"] == "This Agreement is governed by the laws of the State of New York."


def test_page_furniture_is_never_an_answer():
    footer = "Source: ACME CORP, 8-K, 1/23/2020"
    text = f"{footer}\n\nThe parties signed this agreement on March 3, 2019 at the Company's offices."
    chunks = _doc_chunks(text, size=len(text))
    pages = [(1, 0, len(text))]
    clause = catalog.get("Agreement Date")
    plain = extract_offline(clause, chunks, pages=pages, threshold=0.0)
    assert (
        plain.tool_input["clause_text"] == "1/23/2020"
    )  # without furniture spans the stamp's date comes first
    r = extract_offline(clause, chunks, pages=pages, threshold=0.0, furniture=[(0, len(footer))])
    assert r.tool_input["clause_text"] == "March 3, 2019"
    assert all(footer not in c.text for c in r.candidates)


def test_a_preamble_value_is_taken_from_the_opening_chunk():
    opening = "SUPPLY AGREEMENT\n\nThis Supply Agreement is entered into as of July 26, 2013 by Acme Inc. and Beta LLC. "
    later = (
        "The Initial Term shall commence on the Agreement Date and the First Renewal Term shall commence on "
        "July 23, 2016 unless the agreement is terminated. "
    )
    text = opening + "x " * 300 + later
    chunks = _doc_chunks(text)
    ranked = [ScoredChunk(chunks[-1], 1.0, cosine=0.9)] + [
        ScoredChunk(c, 0.5, cosine=0.1) for c in chunks[:-1]
    ]
    r = extract_offline(catalog.get("Agreement Date"), ranked, pages=[(1, 0, len(text))], threshold=0.0)
    assert r.tool_input["clause_text"] == "July 26, 2013"
    assert len(r.tool_input["citations"]) == 1 and r.tool_input["citations"][0]["chunk_id"] == "d0"


def test_a_date_left_blank_in_a_draft_is_the_answer_not_a_later_date():
    for blank in ("[ ] day of [ ], 2020", "[\u00b7], 2019", "March __, 2021", "__________, 20__"):
        r = _answer_opening(
            "Agreement Date",
            f"LICENSE AGREEMENT\n\nThis License Agreement is made as of {blank} by Acme Inc. and Beta LLC. ",
            "The first royalty report is due on June 30, 2021. ",
        )
        assert r.tool_input["clause_text"] == blank


def test_a_date_whose_blanks_were_lost_in_text_extraction_and_upper_case_months():
    for written, value in (
        ("this day of , 2009", "day of , 2009"),
        ("on JULY 15, 2005", "JULY 15, 2005"),
        ("on the 1st day of JUNE , 2006", "1st day of JUNE , 2006"),
    ):
        text = f"SERVICES AGREEMENT\n\nThis Services Agreement is made {written} by Acme Inc. and Beta LLC. "
        r = extract_offline(
            catalog.get("Agreement Date"),
            _doc_chunks(text, size=len(text)),
            pages=[(1, 0, len(text))],
            threshold=0.0,
        )
        assert r.tool_input["clause_text"] == value


def _opening(text: str, clause_name: str):
    return extract_offline(
        catalog.get(clause_name), _doc_chunks(text, size=len(text)), pages=[(1, 0, len(text))], threshold=0.0
    )


def test_the_effective_date_is_the_date_the_contract_calls_effective():
    text = (
        "DISTRIBUTION AGREEMENT\n\nThis Distribution Agreement is dated May 3, 2005 and is made by Acme Inc. "
        "and Beta LLC. It shall be effective as of July 15, 2005 and shall continue for two years."
    )
    effective = _opening(text, "Effective Date")
    assert effective.tool_input["clause_text"] == "July 15, 2005" and effective.value_cued
    # the agreement date is still the preamble's first date
    assert _opening(text, "Agreement Date").tool_input["clause_text"] == "May 3, 2005"
    named_after = (
        "LICENSE AGREEMENT\n\nSigned on March 1, 2019 by Acme Inc. and Beta LLC. This License "
        "Agreement is entered into on 1st day of September 2016 (\u201cEffective Date\u201d)."
    )
    assert _opening(named_after, "Effective Date").tool_input["clause_text"] == "1st day of September 2016"
    # a date that merely follows a mention of the Effective Date is not named by it
    unnamed = (
        "SUPPLY AGREEMENT\n\nThis Supply Agreement is made on March 1, 2019 by Acme Inc. and Beta LLC. "
        "The term shall commence on the Effective Date until December 31, 2025."
    )
    r = _opening(unnamed, "Effective Date")
    assert r.tool_input["clause_text"] == "March 1, 2019" and not r.value_cued


def test_dates_in_recitals_belong_to_other_documents():
    text = (
        "WHEREAS, Acme Inc. and Beta LLC entered into a Letter of Intent dated May 3, 2005, and now wish to set "
        "out their relationship.\n\nNOW, THEREFORE, the parties sign this Agreement on July 15, 2005."
    )
    for name in ("Agreement Date", "Effective Date"):
        assert _opening(text, name).tool_input["clause_text"] == "July 15, 2005"


def test_section_match_reads_the_headings_of_what_was_retrieved():
    from extraction.offline.reader import section_match

    law = catalog.get("Governing Law")
    titled = [
        ChunkSpec(
            "s1",
            0,
            "This Agreement is governed by the laws of Delaware.",
            0,
            52,
            1,
            1,
            1,
            "ARTICLE 15 > 15.1 Governing Law",
        )
    ]
    untitled = [
        ChunkSpec(
            "s2", 0, "This Agreement is governed by the laws of Delaware.", 0, 52, 1, 1, 1, "ARTICLE 15"
        )
    ]
    assert section_match(law, titled, []) == 1.0
    assert section_match(law, untitled, []) == 0.0
    heading_line = score_sentences(
        law, [ChunkSpec("s3", 0, "GOVERNING LAW\n\nDelaware law applies.", 0, 36, 1, 1, 1, "")]
    )
    assert section_match(law, untitled, heading_line) == 1.0


def test_termination_for_convenience_is_not_termination_for_breach():
    text = (
        "Either party may terminate this Agreement at any time upon thirty (30) days' prior written notice if the "
        "other party materially breaches this Agreement and fails to cure the breach within that period.\n\n"
        "Customer may end this Agreement on ninety (90) days' prior written notice, for any reason."
    )
    r = extract_offline(
        catalog.get("Termination For Convenience"),
        _doc_chunks(text, size=len(text)),
        pages=[(1, 0, len(text))],
        embed=hashed_embed,
        threshold=0.0,
    )
    assert r.tool_input["clause_text"] == (
        "Customer may end this Agreement on ninety (90) days' prior written notice, for any reason."
    ), r.candidates[:2]


def test_a_questions_passages_are_cited_best_first_a_clauses_in_document_order():
    fee = "Customer shall pay Supplier a monthly platform fee of $247.83 per pallet position."
    shortfall = "Any shortfall shall be invoiced at $18.50 per pallet not tendered."
    text = f"{fee}\n\n{shortfall}"
    question = catalog.ClauseType(
        name=f"{catalog.QUESTION_PREFIX}What is the shortfall fee per pallet?",
        slug="q-shortfall",
        kind=catalog.TEXT,
        description="What is the shortfall fee per pallet?",
        query="What is the shortfall fee per pallet?",
        source="custom",
    )
    learned = {(0, len(fee)): 0.9, (len(fee) + 2, len(text)): 1.0}  # the finder's word: the shortfall is best
    kwargs = dict(
        pages=[(1, 0, len(text))], threshold=0.0, learned=learned, learned_weight=1.0, relative_cutoff=0.8
    )
    chunks = _doc_chunks(text, size=len(text))
    answer = extract_offline(question, chunks, best_first=True, max_window=1, **kwargs).tool_input
    assert [c["quote"] for c in answer["citations"]] == [shortfall, fee]
    assert answer["clause_text"] == f"{shortfall}\n\n{fee}"
    reading = extract_offline(question, chunks, max_window=1, **kwargs).tool_input
    assert [c["quote"] for c in reading["citations"]] == [fee, shortfall]


def test_a_party_named_with_an_ampersand_is_named_whole():
    text = (
        "MUTUAL NON-DISCLOSURE AGREEMENT\n\nThis Agreement is made on 4 February 2026 between **Fjordline "
        'Analytics ApS** ("Fjordline") and **Keswick & Rowe LLP** ("Keswick"). '
    )
    r = _answer_opening("Parties", text)
    assert r.tool_input["clause_text"] == "Fjordline Analytics ApS; Keswick & Rowe LLP"


def test_a_trust_a_bank_and_a_fund_are_parties_with_their_series():
    text = (
        "LOAN SERVICING AGREEMENT\n\nThis Agreement is dated 14 October 2026 and is made between Meridian "
        'Receivables Trust 2026-1 (the "Owner"), Tri City National Bank (the "Bank") and Kestrel Loan '
        'Services, Inc. (the "Servicer"). '
    )
    r = _answer_opening("Parties", text)
    assert r.tool_input["clause_text"] == (
        "Meridian Receivables Trust 2026-1; Tri City National Bank; Kestrel Loan Services, Inc."
    )
    fund = (
        "This Agreement is made between Morgan Stanley Direct Lending Fund and Harbor Partners Limited "
        "Partnership. "
    )
    r = _answer_opening("Parties", "ADVISORY AGREEMENT\n\n" + fund)
    assert (
        r.tool_input["clause_text"]
        == "Morgan Stanley Direct Lending Fund; Harbor Partners Limited Partnership"
    )


def test_a_lease_is_named_by_its_title():
    text = "# WAREHOUSE LEASE\n\nThis Lease is dated 1 July 2025. Tenant shall pay rent of SEK 412,500 per quarter. "
    assert _answer_opening("Document Name", text).tool_input["clause_text"] == "WAREHOUSE LEASE"
