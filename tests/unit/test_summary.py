"""Case summary core: key terms grouped by topic and quoted verbatim, Claude's points parsed, and every
value checked against the document."""

from extraction.summary import MAX_POINTS, TOPICS, Point, Source, check_points, key_terms, parse_points

DOC = (
    "MASTER SERVICES AGREEMENT between Northwind Traders Ltd and Brightline Data Inc (customer id cust_4711). "
    "Customer shall pay a unit fee of $247.83 per record. This Agreement is governed by the laws of the "
    "State of Delaware. Aggregate liability shall not exceed $247,830.00."
)


def src(clause_type, text, pk=1, page=1):
    return Source(clause_type, pk, page, text)


def test_key_terms_groups_clauses_by_topic_in_topic_order_and_quotes_them_verbatim():
    clauses = [
        src("Governing Law", "governed by the laws of the State of Delaware", 3),
        src("Payment", "a unit fee of $247.83 per record", 1),
        src("Cap On Liability", "Aggregate liability shall not exceed $247,830.00.", 2),
        src("Q: who signs?", "Northwind Traders Ltd", 9),  # a free question: no topic
        src("Parties", "Northwind Traders Ltd", 4),
    ]
    points = key_terms(clauses)
    assert [p.topic for p in points] == ["Parties", "Money", "Liability", "Governing law"]
    money = points[1]
    assert money.text == "Payment: a unit fee of $247.83 per record"
    assert [s.extraction_id for s in money.sources] == [1]
    assert all(p.sources for p in points)


def test_key_terms_matches_seed_types_whatever_their_case_and_skips_empty_text():
    points = key_terms([src("payment", "fee of $247.83"), src("Termination", "   ")])
    assert [p.topic for p in points] == ["Money"]


def test_key_terms_never_exceeds_ten_points():
    every_type = [src(t, f"{t} clause", i) for i, (_, types) in enumerate(TOPICS) for t in types]
    assert len(key_terms(every_type)) == min(MAX_POINTS, len(TOPICS))


def test_parse_points_reads_bullets_with_continuation_lines_and_drops_a_preamble():
    answer = (
        "Here is the summary:\n\n- Parties: Northwind Traders Ltd and Brightline Data Inc\n"
        "* Fee $247.83 per record,\n  invoiced monthly\n1. Governed by Delaware law\n"
    )
    assert [p.text for p in parse_points(answer)] == [
        "Parties: Northwind Traders Ltd and Brightline Data Inc",
        "Fee $247.83 per record, invoiced monthly",
        "Governed by Delaware law",
    ]
    assert [p.text for p in parse_points("one line\nanother line")] == ["one line", "another line"]


def test_check_points_flags_values_the_document_does_not_contain():
    points = check_points(
        [
            Point("", "Unit fee $247.83 for customer cust_4711; cap $247,830.00"),
            Point("", "Unit fee of about $250, cap 247830 dollars"),
            Point("", "Governed by Delaware law"),
        ],
        DOC,
    )
    assert points[0].unverified == ()
    assert points[1].unverified == ("$250", "247830 dollars")
    assert points[2].unverified == ()


def test_a_value_whose_unit_or_scale_word_is_capitalised_otherwise_is_found():
    # contracts capitalise defined words ("thirty (30) Days", "$5 Million"); the number and its unit are the
    # document's, so the value is there
    doc = (
        "Either party may terminate on thirty (30) Days' notice. The cap is $5 Million. The term is 3 Years."
    )
    points = check_points([Point("", "Termination on 30 days' notice; cap $5 million; term 3 years")], doc)
    assert points[0].unverified == ()
    points = check_points([Point("", "Termination on 45 days' notice; cap $5 billion; term 3 months")], doc)
    assert points[0].unverified == ("45 days", "$5 billion", "3 months")
