"""A search hit's snippet (reviewer.snippets): a window around the query's words, escaped, the words marked."""

from __future__ import annotations

from reviewer.snippets import snippet


def test_marks_words_that_begin_with_a_query_stem():
    html = snippet("Either party may terminate; termination takes effect.", "terminate the contract")
    assert html == "Either party may <mark>terminate</mark>; <mark>termination</mark> takes effect."


def test_a_long_text_is_cut_around_the_first_match():
    text = "lorem ipsum " * 100 + "the laws of Delaware govern" + " dolor sit" * 100
    html = snippet(text, "Delaware", window=80)
    assert html.startswith("…") and html.endswith("…")
    assert "<mark>Delaware</mark>" in html and len(html) < 140


def test_contract_text_is_escaped():
    html = snippet('<script>alert("x")</script> Delaware', "delaware")
    assert "<script>" not in html and "&lt;script&gt;" in html and "<mark>Delaware</mark>" in html


def test_the_window_shows_the_most_of_the_querys_words():
    text = (
        "3.1 Lessee shall pay Lessor monthly rent of EUR 31,920.00, payable in advance. "
        + "The Equipment stays at the depot named in Schedule A. " * 6
        + "3.3 Lessor may increase the rent once a year, by no more than the index."
    )
    html = snippet(text, "rent increase", window=120)
    assert "<mark>increase</mark> the <mark>rent</mark>" in html
    assert "EUR 31,920.00" not in html


def test_a_converted_sheet_or_heading_reads_without_its_markdown():
    text = (
        "## Fee Schedule\n\n| Code | Fee Item | Fee (USD) |\n| --- | :---: | ---: |\n"
        "| FS-001 | Termination fee | $4,200.00 |\n"
    )
    html = snippet(text, "termination fee")
    assert html == (
        "<mark>Fee</mark> Schedule Code · <mark>Fee</mark> Item · <mark>Fee</mark> (USD) "
        "FS-001 · <mark>Termination</mark> <mark>fee</mark> · $4,200.00"
    )


def test_an_exact_value_is_marked_as_written_and_nowhere_else():
    text = "Invoice INV-2024-0042 bills cust_4711 at $18.50; cust_47112 pays 18.50 EUR and $18.505."
    html = snippet(text, "cust_4711 $18.50 INV-2024-0042")
    assert html == (
        "Invoice <mark>INV-2024-0042</mark> bills <mark>cust_4711</mark> at <mark>$18.50</mark>; "
        "cust_47112 pays 18.50 EUR and $18.505."
    )


def test_a_value_and_a_word_of_the_query_are_both_marked():
    html = snippet("any shortfall shall be invoiced at $18.50 per pallet", "shortfall $18.50")
    assert html == "any <mark>shortfall</mark> shall be invoiced at <mark>$18.50</mark> per pallet"


def test_a_value_is_marked_where_the_verifier_would_find_it():
    html = snippet("Either party may terminate on sixty (60) days notice; 60 pallets.", "sixty (60) days")
    assert (
        html == "Either party may terminate on <mark>sixty</mark> <mark>(60) days</mark> notice; 60 pallets."
    )
    assert snippet("the fee is $ 18.50 a pallet", "$18.50") == "the fee is <mark>$ 18.50</mark> a pallet"
