"""BM25 over a document's chunks: rare words count more than words every chunk has."""

from extraction.bm25 import Bm25Index
from extraction.lexical import terms

CHUNKS = [
    (1, "The Company supplies the Company's products. The Company invoices the Company's customers."),
    (2, "The Company binds its affiliates. The Company signs."),
    (3, "The source code is deposited with an escrow agent by the Company."),
    (4, "Notices to the Company go to its registered address."),
]


def test_a_rare_word_outranks_a_word_in_every_chunk():
    index = Bm25Index.build(CHUNKS, terms)
    assert index.idf("escrow") > index.idf("company")
    # chunk 1 says "company" most often, but "escrow" is in chunk 3 alone
    assert index.rank(terms("company escrow"), 4)[0] == 3


def test_only_matching_chunks_are_ranked_and_limit_applies():
    index = Bm25Index.build(CHUNKS, terms)
    assert index.rank(terms("escrow"), 10) == [3]
    assert index.rank(terms("indemnify"), 10) == []
    assert len(index.rank(terms("company"), 2)) == 2


def test_a_shorter_chunk_wins_at_equal_counts():
    index = Bm25Index.build([(1, "escrow " + "filler words here " * 20), (2, "escrow agent")], terms)
    assert index.rank(["escrow"], 2) == [2, 1]


def test_empty_document():
    assert Bm25Index.build([], terms).rank(["escrow"], 5) == []


def test_a_phrase_outranks_its_words_scattered_over_a_chunk():
    from extraction.retrieval import lexical_terms

    chunks = [
        (1, "Any change to the fees needs approval by the party in control of the budget."),
        (
            2,
            "Upon a change of control of the Supplier, the Customer may terminate this Agreement and "
            "all orders placed under it by written notice.",
        ),
    ]
    assert "change_control" in lexical_terms("Change of Control")
    assert Bm25Index.build(chunks, lexical_terms).rank(lexical_terms("change of control"), 2) == [2, 1]
    # with single words alone the shorter first chunk wins: it says "change" and "control" too
    assert Bm25Index.build(chunks, terms).rank(terms("change of control"), 2) == [1, 2]
