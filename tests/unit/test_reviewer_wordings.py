"""Wordings of a clause type grouped across contracts, and their word-level difference (reviewer.wordings)."""

from __future__ import annotations

from reviewer.wordings import diff_html, group, identical_key, most_common, near_key, word_diff


def test_identical_key_sets_whitespace_runs_aside_only():
    assert identical_key("  Net  30\n days. ") == "Net 30 days."
    assert identical_key("Net 30 days") != identical_key("net 30 days")


def test_near_key_sets_case_whitespace_punctuation_and_numbers_aside():
    assert near_key("Thirty (30) days' notice,") == near_key("thirty (60)  days notice")
    assert near_key("$247,830.00 cap") == near_key("$1,000 CAP") == "# cap"
    assert near_key("Delaware law") != near_key("New York law")


def test_near_key_sets_the_heading_lines_a_quote_opens_with_aside():
    clause = "Each Party's total aggregate liability shall in no event exceed $247,830.00."
    assert (
        near_key(f"12. LIMITATION OF LIABILITY\n12.1 Cap on Liability\n{clause}")
        == near_key(f"Section 12.1 Cap on Liability\n{clause}")
        == near_key(clause)
    )
    # a first line that is the clause's own sentence is the clause, whatever its case
    assert near_key(f"Licensee shall pay the fees.\n{clause}") != near_key(
        f"Licensor shall pay the fees.\n{clause}"
    )
    assert near_key("19.1 Governing Law") == "# governing law"  # a quote that is all heading stays whole


def test_groups_come_smallest_first_with_wordings_most_common_first():
    texts = [
        "Governed by Delaware law.",
        "Governed by  Delaware law.",  # identical to the first (whitespace)
        "governed by delaware law",  # near-identical (case, punctuation)
        "Governed by the laws of England.",
    ]
    groups = group(texts, lambda t: t)
    assert [g.size for g in groups] == [1, 3]
    assert groups[0].wordings[0].text == "Governed by the laws of England."
    usual = groups[1]
    assert [w.size for w in usual.wordings] == [2, 1]
    assert usual.wordings[0].items == ["Governed by Delaware law.", "Governed by  Delaware law."]
    assert most_common(groups) is usual.wordings[0]


def test_without_a_shared_wording_the_reference_is_the_most_central_one():
    texts = [
        "19. Governing Law This Lease shall be governed by the laws of the State of Oregon.",
        "This Agreement and any dispute shall be governed by the laws of the State of Delaware.",
        "This Agreement and any claim shall be governed by the laws of the State of Delaware.",
        "This term sheet is governed by the laws of England and Wales.",
    ]
    groups = group(texts, lambda t: t)
    assert all(g.size == 1 for g in groups)
    reference = most_common(groups)
    assert reference is not None and "State of Delaware" in reference.text


def test_word_diff_marks_inserted_and_removed_words():
    base = "Either party may terminate on thirty (30) days notice."
    other = "Either party may terminate on sixty (60) days prior notice."
    assert word_diff(base, other) == [
        ("same", "Either party may terminate on"),
        ("del", "thirty (30)"),
        ("ins", "sixty (60)"),
        ("same", "days"),
        ("ins", "prior"),
        ("same", "notice."),
    ]
    assert diff_html(base, base) == base


def test_diff_html_escapes_contract_text():
    html = diff_html("a <b>", 'a <script>"x"</script>')
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert html.startswith("a <del>&lt;b&gt;</del> <ins>")


def test_the_headings_above_a_clause_are_shown_not_diffed():
    base = "19.1 Governing Law\nThis Agreement is governed by the laws of Delaware."
    other = "Section 19.2 Governing Law\nThis Agreement is governed by the laws of New York."
    html = diff_html(base, other)
    assert html.startswith('<span class="wording-heading">Section 19.2 Governing Law</span>\nThis Agreement')
    assert "<del>Delaware.</del> <ins>New York.</ins>" in html
    assert "<del>19.1" not in html and "<ins>Section" not in html
