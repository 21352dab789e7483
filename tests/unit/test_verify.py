"""Citation verifier: offsets, pages, normalisation, values, errors."""

import random

import pytest

from extraction.verify import (
    check_values,
    closest_passage,
    exact_values,
    find_passage,
    holds_values,
    normalise,
    value_spans,
    values_asked,
    verify_citation,
    verify_extraction,
)
from ingest.chunker import ChunkSpec
from ingest.pages import page_of

PAGE1 = (
    "MASTER SERVICES AGREEMENT\n\n"
    "1. Fees. Customer shall pay the monthly fee of $247.83 for account cust_4711 within\n"
    "thirty (30) days of invoice.  Late payments bear interest at 1.5% per month.\n"
    "2. Liability. The total liability of Vendor shall not exceed the fees paid in the twelve (12)\n"
    "months preceding the claim, and each party shall indemni-\nfication obligations survive.\n"
)
PAGE2 = (
    "This Agreement is governed by the laws of the State of New York, effective January 5, 2020.\n"
    "\u201cConfidential Information\u201d means information marked as confidential \u2013 in writing.\n"
    "LIMITATION OF LIABILITY. IN NO EVENT SHALL EITHER PARTY BE LIABLE FOR INDIRECT DAMAGES.\n"
)
PAGE3 = (
    "Notices shall be sent in writing. Notices shall be sent in writing.\n"
    "Soci\u00e9t\u00e9 G\u00e9n\u00e9rale S.A. will receive the \ufb01nal report.\n"
)


def make_doc(pages_text):
    text, table, pos = "", [], 0
    for n, p in enumerate(pages_text, 1):
        if n > 1:
            text += "\f"
            pos += 1
        table.append((n, pos, pos + len(p)))
        text += p
        pos += len(p)
    return text, table


def make_chunks(text, table, size=300, overlap=100):
    chunks, start, i = [], 0, 0
    while start < len(text):
        end = min(len(text), start + size)
        cid = f"c{i:02d}"
        chunks.append(
            ChunkSpec(
                cid,
                i,
                text[start:end],
                start,
                end,
                page_of(start, table),
                page_of(max(start, end - 1), table),
                i,
                "§",
            )
        )
        if end == len(text):
            break
        start, i = end - overlap, i + 1
    return chunks


DOC, PAGES = make_doc([PAGE1, PAGE2, PAGE3])
CHUNKS = make_chunks(DOC, PAGES)
BY_ID = {c.chunk_id: c for c in CHUNKS}


def chunk_with(snippet):
    for c in CHUNKS:
        if snippet in c.text:
            return c
    raise AssertionError(snippet)


def cite(snippet, quote=None, page=None):
    c = chunk_with(snippet)
    return {
        "chunk_id": c.chunk_id,
        "page": page if page is not None else c.page_start,
        "quote": quote or snippet,
    }


def only(result):
    assert result.ok, result.errors
    assert len(result.citations) == 1
    return result.citations[0]


def test_exact_quote_gets_exact_offsets_and_page():
    q = "Customer shall pay the monthly fee of $247.83 for account cust_4711"
    v = only(verify_extraction([cite(q)], CHUNKS, PAGES, q))
    assert (v.start, v.end) == (DOC.index(q), DOC.index(q) + len(q))
    assert v.quote == DOC[v.start : v.end] == q
    assert v.page == v.page_end == 1 and v.match == "exact" and v.page_matched


def test_whitespace_and_newlines_are_normalised_back_to_original_text():
    q = "within thirty (30) days of invoice. Late payments"
    src = "within\nthirty (30) days of invoice.  Late payments"
    v = only(verify_extraction([cite(src, quote=q)], CHUNKS, PAGES, q))
    assert v.quote == src and DOC[v.start : v.end] == src
    assert v.match == "normalised"


def test_quote_spanning_page_break_inside_a_chunk():
    q = "indemni-\nfication obligations survive.\n\fThis Agreement is governed"
    start = DOC.index("indemni-")
    c = next(c for c in CHUNKS if c.char_start <= start and DOC.index("governed") < c.char_end)
    quote = "indemnification obligations survive. This Agreement is governed"
    v = only(verify_extraction([{"chunk_id": c.chunk_id, "page": 2, "quote": quote}], CHUNKS, PAGES, quote))
    assert DOC[v.start : v.end] == q
    assert (v.page, v.page_end) == (1, 2) and v.page_matched
    bad = verify_extraction([{"chunk_id": c.chunk_id, "page": 9, "quote": quote}], CHUNKS, PAGES, quote)
    assert bad.ok and not bad.citations[0].page_matched and bad.citations[0].page == 1


def test_model_page_is_never_trusted():
    q = "This Agreement is governed by the laws of the State of New York"
    v = only(verify_extraction([cite(q, page=1)], CHUNKS, PAGES, q))
    assert v.page == 2 and v.model_page == 1 and not v.page_matched


def test_curly_and_straight_quotes_and_dashes():
    q = '"Confidential Information" means information marked as confidential - in writing'
    v = only(verify_extraction([cite("Confidential Information", quote=q)], CHUNKS, PAGES, q))
    assert v.quote.startswith("\u201cConfidential") and "\u2013" in v.quote


def test_line_end_hyphenation():
    v = only(
        verify_extraction(
            [cite("indemni-", quote="each party shall indemnification obligations")],
            CHUNKS,
            PAGES,
            "each party shall indemnification obligations",
        )
    )
    assert v.quote == "each party shall indemni-\nfication obligations"


def test_case_folded_match_is_flagged():
    q = "Limitation of Liability. In no event shall either party be liable"
    v = only(verify_extraction([cite("LIMITATION OF LIABILITY", quote=q)], CHUNKS, PAGES, q))
    assert (
        v.match == "casefold"
        and v.quote == "LIMITATION OF LIABILITY. IN NO EVENT SHALL EITHER PARTY BE LIABLE"
    )


def test_repeated_quote_prefers_the_models_page_else_first():
    q = "Notices shall be sent in writing."
    first = DOC.index(q)
    v = only(verify_extraction([cite(q, page=3)], CHUNKS, PAGES, q))
    assert v.start == first and v.occurrences == 2
    v2 = only(verify_extraction([{**cite(q), "page": None}], CHUNKS, PAGES, q))
    assert v2.start == first


def test_repeated_quote_on_two_pages_picks_the_cited_page():
    text, table = make_doc(["Payment is due in 30 days.\n", "Payment is due in 30 days.\n"])
    chunks = [ChunkSpec("a", 0, text, 0, len(text), 1, 2, 0, "")]
    q = "Payment is due in 30 days."
    v = only(verify_extraction([{"chunk_id": "a", "page": 2, "quote": q}], chunks, table, q))
    assert v.page == 2 and v.start == text.rindex(q)
    v = only(verify_extraction([{"chunk_id": "a", "page": 1, "quote": q}], chunks, table, q))
    assert v.page == 1 and v.start == 0


def test_unicode_ligatures_and_accents():
    v = only(
        verify_extraction(
            [
                cite(
                    "Soci\u00e9t\u00e9",
                    quote="Soci\u00e9t\u00e9 G\u00e9n\u00e9rale S.A. will receive the final report",
                )
            ],
            CHUNKS,
            PAGES,
            "Soci\u00e9t\u00e9 G\u00e9n\u00e9rale",
        )
    )
    assert "\ufb01nal" in v.quote and DOC[v.start : v.end] == v.quote
    # a decomposed source letter matches a precomposed quote, accents kept in the result
    text = "Caf\u0065\u0301 de Flore pays \u20ac12.50."
    chunks = [ChunkSpec("u", 0, text, 0, len(text), 1, 1, 0, "")]
    v = only(
        verify_extraction(
            [{"chunk_id": "u", "page": 1, "quote": "Caf\u00e9"}], chunks, [(1, 0, len(text))], "Caf\u00e9"
        )
    )
    assert v.quote == "Caf\u0065\u0301"
    v = only(
        verify_extraction(
            [{"chunk_id": "u", "page": 1, "quote": "pays \u20ac12.50"}],
            chunks,
            [(1, 0, len(text))],
            "pays \u20ac12.50",
        )
    )
    assert v.quote == "pays \u20ac12.50"


@pytest.mark.parametrize("reach", [20, 400])
def test_quote_crossing_into_the_next_chunk_is_kept_as_citations_inside_their_chunks(reach):
    a, b = CHUNKS[0], CHUNKS[1]
    assert b.char_start < a.char_end  # overlapping chunks
    lo, hi = a.char_end - 30, min(len(DOC), a.char_end + reach)
    while not DOC[lo - 1].isspace():  # whole words: a quote may not cut one
        lo -= 1
    while hi < len(DOC) and not DOC[hi].isspace():
        hi += 1
    span = DOC[lo:hi]
    r = verify_extraction([{"chunk_id": a.chunk_id, "page": 1, "quote": span}], CHUNKS, PAGES, span)
    assert r.ok, r.errors
    by_id = {c.chunk_id: c for c in CHUNKS}
    for v in r.citations:  # each stored quote is exact and lies inside the chunk it names
        chunk = by_id[v.chunk_id]
        assert DOC[v.start : v.end] == v.quote and chunk.char_start <= v.start and v.end <= chunk.char_end
    assert r.citations[0].start == lo + len(span) - len(span.lstrip())
    assert r.citations[-1].end == lo + len(span.rstrip())
    assert all(x.end <= y.start or y.start >= x.start for x, y in zip(r.citations, r.citations[1:]))
    # same result when the caller supplies the document text
    r2 = verify_extraction(
        [{"chunk_id": a.chunk_id, "page": 1, "quote": span}], CHUNKS, PAGES, span, document_text=DOC
    )
    assert [(v.chunk_id, v.start, v.end) for v in r2.citations] == [
        (v.chunk_id, v.start, v.end) for v in r.citations
    ]


def test_quote_from_another_part_of_the_document_is_rejected():
    q = "Notices shall be sent in writing."
    r = verify_extraction([{"chunk_id": CHUNKS[0].chunk_id, "page": 1, "quote": q}], CHUNKS, PAGES, q)
    assert not r.ok and f"not found in chunk {CHUNKS[0].chunk_id}" in r.errors[0]


def test_missing_chunk_is_reported_with_a_suggestion():
    r = verify_extraction([{"chunk_id": "c0", "page": 1, "quote": "Fees"}], CHUNKS, PAGES, "Fees")
    assert not r.ok
    assert 'chunk "c0" does not exist' in r.errors[0] and 'did you mean "c0' in r.errors[0]


def test_not_found_quote_reports_the_closest_passage():
    q = "The total liability of Vendor will not exceed the fees paid during the twelve (12) months"
    r = verify_extraction([cite("The total liability", quote=q)], CHUNKS, PAGES, q)
    assert not r.ok
    msg = r.errors[0]
    assert msg.startswith('citation 1: quote "The total liability of Vendor will not exceed')
    assert (
        'closest passage: "The total liability of Vendor shall not exceed the fees paid in the twelve' in msg
    )
    assert "Citation verification failed" in r.feedback() and "character-for-character" in r.feedback()


def test_ellipsis_joined_quote_is_explained():
    q = "Customer shall pay ... within thirty (30) days"
    r = verify_extraction([cite("Customer shall pay", quote=q)], CHUNKS, PAGES, "x")
    assert not r.ok and "ellipsis" in r.errors[0]


def test_paraphrased_money_value_fails_and_names_the_real_one():
    q = "Customer shall pay the monthly fee of $247.83"
    r = verify_extraction([cite(q)], CHUNKS, PAGES, "Customer shall pay a monthly fee of about $250")
    assert not r.ok and len(r.citations) == 1
    assert 'value "$250"' in r.errors[0] and '"$247.83"' in r.errors[0]


@pytest.mark.parametrize(
    "clause_text,ok",
    [
        ("monthly fee of $247.83 for account cust_4711", True),
        ("monthly fee of $247.8 for account cust_4711", False),
        ("monthly fee of $247.83 for account cust-4711", False),
        ("monthly fee of $247.83 for account cust_471", False),
        ("within\nthirty (30) days", True),
        ("within thirty 30 days", True),  # layout only: parentheses
        ("within 30 days", False),  # a word of the quote left out, unmarked
        ("within 1 month", False),
        ("interest at 1.5% per month", True),
        ("interest at 1.50% per month", False),
        ("interest at 2% per month", False),
    ],
)
def test_values_must_be_verbatim(clause_text, ok):
    quote = (
        "Customer shall pay the monthly fee of $247.83 for account cust_4711 within\n"
        "thirty (30) days of invoice.  Late payments bear interest at 1.5% per month."
    )
    r = verify_extraction([cite("Customer shall pay the monthly", quote=quote)], CHUNKS, PAGES, clause_text)
    assert r.ok is ok, r.errors


def test_reformatted_date_fails():
    q = "This Agreement is governed by the laws of the State of New York, effective January 5, 2020."
    assert verify_extraction([cite(q)], CHUNKS, PAGES, "effective January 5, 2020").ok
    r = verify_extraction([cite(q)], CHUNKS, PAGES, "effective 5 January 2020")
    assert not r.ok and "5 January 2020" in r.errors[0]
    assert not verify_extraction([cite(q)], CHUNKS, PAGES, "effective 2020-01-05").ok


def test_not_found_rules():
    assert verify_extraction([], CHUNKS, PAGES, "not_found").ok
    r = verify_extraction([cite("Fees")], CHUNKS, PAGES, "not_found")
    assert not r.ok and "not_found" in r.errors[0]
    r = verify_extraction([], CHUNKS, PAGES, "The fee is $247.83")
    assert not r.ok and "at least one citation" in r.errors[0]


def test_each_bad_citation_is_reported_and_good_ones_kept():
    good = cite("Late payments bear interest at 1.5% per month.")
    r = verify_extraction(
        [good, {"chunk_id": "zz", "page": 1, "quote": "abc"}, {"page": 1}], CHUNKS, PAGES, good["quote"]
    )
    assert len(r.citations) == 1 and len(r.errors) == 2
    assert r.errors[0].startswith("citation 2:") and r.errors[1].startswith("citation 3: chunk_id is missing")


def test_duplicate_citations_are_collapsed():
    c = cite("Late payments bear interest")
    r = verify_extraction([c, dict(c)], CHUNKS, PAGES, c["quote"])
    assert r.ok and len(r.citations) == 1


def test_exact_values():
    text = (
        "Pay $247.83 or USD 1,000.50 within 30 days (5%) by January 5, 2020 to cust_4711, INV-2020-001, "
        "10 percent, 2020-01-05, 12/31/2019, Section 12.1.5, 29.5mL"
    )
    assert exact_values(text) == [
        "$247.83",
        "USD 1,000.50",
        "30 days",
        "5%",
        "January 5, 2020",
        "cust_4711",
        "INV-2020-001",
        "10 percent",
        "2020-01-05",
        "12/31/2019",
        "12.1.5",
        "29.5mL",
    ]
    assert exact_values("no numbers here") == []


@pytest.mark.parametrize(
    "source,clause_text",
    [
        ("The fee is US$ 5,000 per year.", "The fee is US$ 5,000 per year."),
        ("The fee is $ 5,000 per year.", "The fee is $5,000 per year."),
        ("The fee is $247.83, payable for 247.83 units.", "payable for 247.83 units"),
    ],
)
def test_a_currency_sign_kept_with_its_number_passes(source, clause_text):
    chunk = ChunkSpec("c1", 0, source, 0, len(source), 1, 1, 0, "")
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": source}], [chunk], [(1, 0, len(source))], clause_text
    )
    assert r.ok, r.errors


def test_values_of_a_verbatim_quote_always_pass():
    rng = random.Random(7)
    words = [
        "$1,250.00",
        "12.1.5",
        "29.5mL",
        "cust_4711",
        "(30)",
        "days",
        "5%",
        "A-12",
        "2020-01-05",
        "the",
        "fee",
        "of",
        "January",
        "5,",
        "2020",
        "1.5",
        "x3",
        "No.",
        "7.",
        "12,",
        "€10",
    ]
    for _ in range(300):
        s = " ".join(rng.choice(words) for _ in range(rng.randint(3, 15)))
        assert check_values(exact_values(s), [s]) == [], s


def test_normalise_maps_back_to_source_indices():
    text = "  a\u00a0\u00a0b\n\n\u201cc\u201d  soft\u00adware  "
    n, src = normalise(text)
    assert n == 'a b "c" software'
    assert all(text[src[i]] == n[i] or n[i] in ' "' or text[src[i]] == "\u00a0" for i in range(len(n)))


def test_closest_passage_prefers_the_similar_words():
    text = "Alpha beta gamma. The vendor shall pay all fees promptly. Delta epsilon."
    assert closest_passage("The vendor must pay all fees promptly.", text).startswith("The vendor shall pay")


def test_fuzz_random_spans_recover_exact_offsets():
    rng = random.Random(1234)
    vocab = [
        "fee",
        "Vendor",
        "shall",
        "pay",
        "$247.83",
        "cust_4711",
        "\u201cTerm\u201d",
        "30",
        "days",
        "page",
    ]
    seps = [" ", "  ", "\n", " \n ", "\t", "\f"]
    toks = []
    for _ in range(2500):
        toks.append(rng.choice(vocab))
        toks.append(rng.choice(seps))
    text = "".join(toks)
    breaks = [i for i, ch in enumerate(text) if ch == "\f"]
    table, start = [], 0
    for n, b in enumerate(breaks + [len(text)], 1):
        table.append((n, start, b))
        start = b + 1
    chunks = make_chunks(text, table, size=700, overlap=120)
    for _ in range(150):
        c = rng.choice(chunks)
        a = rng.randrange(c.char_start, c.char_end - 20)
        while a > 0 and not text[a - 1].isspace():
            a -= 1
        while text[a].isspace():
            a += 1
        e = min(len(text), a + rng.randint(10, 200))
        while e < len(text) and not text[e].isspace():
            e += 1
        quote = " ".join(text[a:e].split())
        v, err = verify_citation(
            {"chunk_id": c.chunk_id, "page": 1, "quote": quote}, {x.chunk_id: x for x in chunks}, table
        )
        assert err is None, err
        # a repeated phrase may match earlier in the window; it must be equal text anyway
        assert " ".join(v.quote.split()) == quote and text[v.start : v.end] == v.quote
        assert v.page == page_of(v.start, table)


def test_a_quote_cited_many_times_is_one_citation():
    # how long a hundred citations take is bench/bench_verify.py's figure, not a test's
    q = "Customer shall pay the monthly fee of $247.83 for account cust_4711"
    r = verify_extraction([cite(q)] * 50 + [cite("Notices shall be sent")] * 50, CHUNKS, PAGES, q)
    assert r.ok, r.errors
    assert [(c.quote, c.page) for c in r.citations] == [(q, 1), ("Notices shall be sent", 3)]


def test_a_clause_the_model_wrote_itself_does_not_pass_on_a_short_quote():
    # a real two-word quote cannot carry a clause whose words the chunk does not hold
    invented = (
        "This Agreement is governed by Delaware law and the Vendor indemnifies the Customer for all losses."
    )
    r = verify_extraction([cite("Customer shall pay", quote="Customer shall")], CHUNKS, PAGES, invented)
    assert not r.ok and len(r.citations) == 1
    assert (
        r.errors[0].startswith("clause_text is not the cited text")
        and 'at "this agreement is governed"' in r.errors[0]
    )
    # the clause as the source words it, with a line break, other spacing and quotes joined, passes
    q1 = "Customer shall pay the monthly fee of $247.83"
    q2 = "Late payments bear interest at 1.5% per month."
    assert verify_extraction([cite(q1), cite(q2)], CHUNKS, PAGES, q1 + "\n ... " + q2).ok
    # words of its own in front of the quote do not pass either
    r = verify_extraction([cite(q1)], CHUNKS, PAGES, "Under it, " + q1)
    assert not r.ok and 'at "under it customer shall' in r.errors[0]


@pytest.mark.parametrize(
    "clause_text",
    [
        "Customer shall not pay the monthly fee of $247.83",  # a "not" the source lacks
        "The total liability of Customer shall not exceed the fees",  # the other party
        "The total liability of Vendor shall exceed the fees paid",  # the "not" dropped
        "The total liability of Vendor shall not exceed the fees paid in the twelve months",  # "(12)" dropped
        "the fees paid in the twelve (12) months. The total liability of Vendor shall not exceed",  # reordered
    ],
)
def test_clause_text_must_follow_its_quotes_word_for_word(clause_text):
    q1 = "Customer shall pay the monthly fee of $247.83"
    q2 = "The total liability of Vendor shall not exceed the fees paid in the twelve (12)\nmonths"
    r = verify_extraction([cite(q1), cite(q2)], CHUNKS, PAGES, clause_text)
    assert not r.ok and r.errors[0].startswith("clause_text is not the cited text word for word"), r.errors


@pytest.mark.parametrize(
    "clause_text",
    [
        "The total liability of Vendor shall not exceed the fees paid",  # a quote's opening words
        "Vendor shall not exceed the fees paid in the twelve (12) months",  # its middle and end
        "The total liability of Vendor … in the twelve (12) months",  # words left out, marked
        "The total liability of Vendor [...] twelve (12) months",
        "THE TOTAL LIABILITY OF VENDOR SHALL NOT EXCEED THE FEES PAID IN THE TWELVE (12) MONTHS",
    ],
)
def test_clause_text_may_be_part_of_its_quotes_or_mark_what_it_leaves_out(clause_text):
    q = "The total liability of Vendor shall not exceed the fees paid in the twelve (12)\nmonths"
    r = verify_extraction([cite(q)], CHUNKS, PAGES, clause_text)
    assert r.ok, r.errors


@pytest.mark.parametrize(
    "quote",
    [
        "the monthly fee of $247",  # stops inside "$247.83"
        "the monthly fee of $247.",
        "for account cust_471",  # inside "cust_4711"
        "Late payments bear interest at 1.5% per mon",
        "ustomer shall pay the monthly fee",
        "247.83 for account cust_4711",  # drops the "$" of "$247.83"
        "Late payments bear interest at 1.5",  # drops the "%" of "1.5%"
    ],
)
def test_a_quote_may_not_cut_a_number_or_a_word(quote):
    r = verify_extraction([cite("Customer shall pay the monthly", quote=quote)], CHUNKS, PAGES, quote)
    assert not r.ok and not r.citations
    assert "starts or ends inside a word or number" in r.errors[0], r.errors
    assert "quote whole words and whole numbers" in r.errors[0]


@pytest.mark.parametrize(
    "source,quote",
    [
        ("The fee is USD 1,000 per year.", "1,000 per year"),
        ("The fee is USD 1,000 per year.", "The fee is USD"),
        ("The fee is $ 1,000 per year.", "1,000 per year"),
        ("The adjustment is 5 percent per year.", "The adjustment is 5"),
    ],
)
def test_a_quote_may_not_part_a_number_from_its_currency_or_percent_sign(source, quote):
    chunk = ChunkSpec("c1", 0, source, 0, len(source), 1, 1, 0, "")
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": quote}], [chunk], [(1, 0, len(source))], quote
    )
    assert not r.ok and "starts or ends inside a word or number" in r.errors[0], r.errors
    whole = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": source}], [chunk], [(1, 0, len(source))], source
    )
    assert whole.ok, whole.errors


@pytest.mark.parametrize(
    "source,clause_text",
    [
        ("The aggregate liability cap is $5 million.", "The aggregate liability cap is $5"),
        ("The price adjustment is 5% per year.", "The price adjustment is -5% per year."),
        ("The credit is -$5,000 per year.", "The credit is $5,000 per year."),
        ("This Agreement is effective 01-05-2020.", "This Agreement is effective 05-01-2020."),
        ("Term ends on 2021/03/04.", "Term ends on 2021/04/03."),
        ("The unit fee is $247.83 per pallet.", "The unit fee is 247.83 per pallet."),  # currency dropped
        ("The fee is EUR 1,000 per year.", "The fee is 1,000 per year."),
        ("The fee is 1,000 euros per year.", "The fee is 1,000 per year."),
        ("The price adjustment is 5% per year.", "The price adjustment is 5 per year."),
        ("The price adjustment is 5 percent per year.", "The price adjustment is 5 per year."),
    ],
)
def test_scale_words_signs_and_dates_are_part_of_a_value(source, clause_text):
    text = source
    chunk = ChunkSpec("c1", 0, text, 0, len(text), 1, 1, 0, "")
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": text}], [chunk], [(1, 0, len(text))], clause_text
    )
    assert not r.ok and "does not appear verbatim" in " ".join(r.errors), r.errors


def test_superscripts_and_soft_hyphens_are_read_as_the_reader_sees_them():
    text = "Licensee pays a fee of $5,000\u00b9 per month under the indemni\u00ad\nfication terms."
    chunk = ChunkSpec("c1", 0, text, 0, len(text), 1, 1, 0, "")
    pages = [(1, 0, len(text))]
    q = "a fee of $5,000 per month under the indemnification terms"
    r = verify_extraction([{"chunk_id": "c1", "page": 1, "quote": q}], [chunk], pages, q)
    assert r.ok, r.errors
    # the footnote mark does not join the amount
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": "a fee of $5,0001 per month"}],
        [chunk],
        pages,
        "a fee of $5,0001 per month",
    )
    assert not r.ok


def test_a_quote_over_whitespace_between_two_chunks_is_cited_in_each():
    text = "Customer shall pay all invoices within 30 days.\n\nLate payments bear interest at 2% per month."
    cut = text.index("Late")
    chunks = [
        ChunkSpec("c1", 0, text[: cut - 2], 0, cut - 2, 1, 1, 0, ""),
        ChunkSpec("c2", 1, text[cut:], cut, len(text), 1, 1, 1, ""),
    ]
    q = "within 30 days. Late payments bear interest"
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": q}], chunks, [(1, 0, len(text))], q, document_text=text
    )
    assert r.ok, r.errors
    assert [(v.chunk_id, v.quote) for v in r.citations] == [
        ("c1", "within 30 days."),
        ("c2", "Late payments bear interest"),
    ]


def test_a_repeated_quote_is_verified_where_the_engine_found_it():
    text = "Prices quoted on March 1, 2021 are fixed. This Agreement is effective as of March 1, 2021."
    chunk = ChunkSpec("c1", 0, text, 0, len(text), 1, 1, 0, "")
    at = text.rindex("March")
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": "March 1, 2021"}],
        [chunk],
        [(1, 0, len(text))],
        "March 1, 2021",
        offsets=[at],
    )
    assert r.ok and (r.citations[0].start, r.citations[0].occurrences) == (at, 2)
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": "March 1, 2021"}],
        [chunk],
        [(1, 0, len(text))],
        "March 1, 2021",
    )
    assert r.citations[0].start == text.index("March")  # without the engine's offset: the first copy


def test_a_quote_read_across_a_page_footer_is_cited_on_both_pages():
    from ingest.blocks import furniture_spans

    filler = "A filler sentence of the agreement sits here.\n"
    pages_text = [
        "ACME SUPPLY AGREEMENT\n\n" + filler * 5 + "9.2 Either party may terminate upon sixty (60) "
        "days prior written notice to the\n\nPage 7 of 40\n",
        "ACME SUPPLY AGREEMENT\n\nother party, provided that no fees shall be refunded.\n" + filler * 5,
        "ACME SUPPLY AGREEMENT\n\nLast page.\n",
    ]
    text, table = make_doc(pages_text)
    chunk = ChunkSpec("c1", 0, text, 0, len(text), 1, 3, 0, "")
    q = (
        "Either party may terminate upon sixty (60) days prior written notice to the other party, provided "
        "that no fees shall be refunded."
    )
    cit = [{"chunk_id": "c1", "page": 1, "quote": q}]
    assert not verify_extraction(cit, [chunk], table, q, document_text=text).ok  # without the furniture known
    r = verify_extraction(cit, [chunk], table, q, document_text=text, furniture=furniture_spans(text))
    assert r.ok, r.errors
    assert [(v.page, v.quote) for v in r.citations] == [
        (1, "Either party may terminate upon sixty (60) days prior written notice to the"),
        (2, "other party, provided that no fees shall be refunded."),
    ]
    assert all(text[v.start : v.end] == v.quote for v in r.citations)
    # a quote that copies the footer as it stands is one citation, as before
    q2 = "written notice to the\n\nPage 7 of 40"
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": q2}],
        [chunk],
        table,
        q2,
        document_text=text,
        furniture=furniture_spans(text),
    )
    assert r.ok and len(r.citations) == 1


def test_a_superscript_mark_from_word_or_html_may_be_left_out_of_a_quote():
    text = "Licensee pays a fee of $5,000^1^ per month.^[[2]](#footnote-2)^ Notices go to cust_4711."
    chunk = ChunkSpec("c1", 0, text, 0, len(text), 1, 1, 0, "")
    pages = [(1, 0, len(text))]
    for q in ("a fee of $5,000 per month. Notices go to cust_4711.", "a fee of $5,000^1^ per month."):
        r = verify_extraction(
            [{"chunk_id": "c1", "page": 1, "quote": q}], [chunk], pages, q, document_text=text
        )
        assert r.ok, (q, r.errors)
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": "a fee of $5,0001 per month"}],
        [chunk],
        pages,
        "a fee of $5,0001 per month",
        document_text=text,
    )
    assert not r.ok


def _one_chunk(text):
    return [ChunkSpec("c1", 0, text, 0, len(text), 1, 1, 0, "")], [(1, 0, len(text))]


@pytest.mark.parametrize(
    "source,quote,clause_text",
    [
        ("Fees: 2½ times the annual fee.", "Fees: 2½ times the annual fee", "Fees: 2¼ times the annual fee"),
        ("Fees: 2½ times the annual fee.", "Fees: 2½ times the annual fee", "Fees: 2 times the annual fee"),
        ("The cap is $5 Million in aggregate.", "The cap is $5 Million in aggregate", "The cap is $5"),
        (
            "The cap is $5 million in aggregate.",
            "The cap is $5",
            "The cap is $5",
        ),  # the quote stops at the scale
        ("The cap is $5\nmillion in aggregate.", "The cap is $5", "The cap is $5"),  # ... at a line end
        ("The cap is $5\u00a0million in aggregate.", "The cap is $5", "The cap is $5"),
        (
            "合同金额为５００万元。",
            "合同金额为５００",
            "合同金额为５００",
        ),  # full-width digits: a number, not a word
        ("甲方应当在三十日内支付全部款项。", "甲方应当在三", "甲方应当在三"),  # Chinese numerals too
        (
            "갑은 계약을 양도할 수 없다.",
            "갑은 계약을 양도할 수 없",
            "갑은 계약을 양도할 수 없",
        ),  # Korean has spaces
    ],
)
def test_fractions_and_scale_words_stay_part_of_their_values(source, quote, clause_text):
    chunks, pages = _one_chunk(source)
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": quote}], chunks, pages, clause_text, document_text=source
    )
    assert not r.ok, r.errors


def test_overlapping_quotes_carry_a_clause_that_runs_across_both():
    text = "Either party may terminate upon sixty (60) days prior written notice to the other party."
    chunks, pages = _one_chunk(text)
    cits = [
        {"chunk_id": "c1", "page": 1, "quote": "Either party may terminate upon sixty (60) days"},
        {"chunk_id": "c1", "page": 1, "quote": "sixty (60) days prior written notice to the other party."},
    ]
    assert verify_extraction(cits, chunks, pages, text, document_text=text).ok


def test_a_quote_from_inside_a_chinese_sentence_is_whole():
    text = "甲方应于每月五日前向乙方支付服务费人民币247.83元，逾期按日计息。"
    chunks, pages = _one_chunk(text)
    q = "向乙方支付服务费人民币247.83元"
    r = verify_extraction([{"chunk_id": "c1", "page": 1, "quote": q}], chunks, pages, q, document_text=text)
    assert r.ok, r.errors
    r = verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": "服务费人民币247.8"}],
        chunks,
        pages,
        "服务费人民币247.8",
        document_text=text,
    )
    assert not r.ok  # a number is still never cut


@pytest.mark.parametrize(
    "source,quote",
    [("Contrato nº 123 de 2020.", "Contrato no 123"), ("The Acme™ brand.", "The AcmeTM brand")],
)
def test_ordinal_indicators_and_trademarks_read_as_letters(source, quote):
    chunks, pages = _one_chunk(source)
    assert verify_extraction(
        [{"chunk_id": "c1", "page": 1, "quote": quote}], chunks, pages, quote, document_text=source
    ).ok


def test_a_pipe_escaped_in_a_converted_table_cell_matches_a_plain_one():
    text = "| Item | Terms |\n| --- | --- |\n| Support | monthly \\| billed in arrears |"
    chunks, pages = _one_chunk(text)
    q = "monthly | billed in arrears"
    r = verify_extraction([{"chunk_id": "c1", "page": 1, "quote": q}], chunks, pages, q, document_text=text)
    assert r.ok and r.citations[0].quote == "monthly \\| billed in arrears", r.errors


def test_a_reviewers_text_is_found_in_the_whole_document_as_the_page_spells_it():
    document = (
        "Intro.\n\nA transfer of fifty percent (50%) or more of the voting\ninterests in Tenant shall be "
        "deemed an \u201cassignment\u201d of this Lease \u2014 in full.\fMore."
    )
    typed = 'A transfer of fifty percent (50%) or more of the voting interests in Tenant shall be deemed an "assignment" of this Lease - in full.'
    start, end = find_passage(document, typed)
    assert document[start:end].startswith("A transfer") and document[start:end].endswith("in full.")
    assert find_passage(document, "A transfer of sixty percent") is None  # a changed word: not there
    assert find_passage(document, "fifty percent (50%)") == (
        document.index("fifty"),
        document.index(" or more"),
    )
    assert find_passage(document, "  \n ") is None


def test_of_several_places_the_reviewers_text_is_the_one_nearest_the_citation():
    document = (
        "Governing law: Delaware.\n" + "x " * 500 + "\nThe laws of Delaware govern this Lease.\n" + "y " * 500
    )
    far, cited = document.index("Delaware"), document.index("The laws")
    assert find_passage(document, "Delaware") == (far, far + 8)  # nothing cited: the first
    second = document.index("Delaware", cited)
    assert find_passage(document, "Delaware", near=cited) == (second, second + 8)


def test_a_text_holds_a_value_as_the_verifier_reads_it_and_marks_it_where_written():
    text = "Either party may terminate on thirty (30) days' notice; the fee is $18.50 per pallet."
    assert holds_values(text, ["30 days", "$18.50"])
    assert not holds_values(text, ["18.50 EUR"]) and not holds_values(text, ["$18.5"])
    assert not holds_values("The fee is 18.50 per pallet.", ["$18.50"])  # "18.50" is not "$18.50"
    assert [text[s:e] for s, e, _ in value_spans(text, ["$18.50", "cust_4711"])] == ["$18.50"]


def test_a_query_asks_for_its_values_with_their_layout_aside():
    assert values_asked("terminate on sixty (60) days' notice") == ["60 days"]
    assert values_asked("cust_4711 $18.50") == ["cust_4711", "$18.50"]
    assert values_asked("change of control") == []
