"""How the finder ranks a document's chunks for retrieval (``extraction.finder.model.lead_by_sentences``):
the chunk whose sentence states the clause comes before the chunk that only shares its words."""

from __future__ import annotations

from extraction.finder.model import lead_by_sentences

# Four chunks of 100 characters each, overlapping by 20: chunk i spans [80 i, 80 i + 100).
SPANS = [(0, 100), (80, 180), (160, 260), (240, 340)]


def test_the_chunk_stating_the_clause_leads_the_chunk_that_only_mentions_it():
    # The chunk scorer put chunk 0 (a definition naming the clause) before chunk 2 (the clause itself).
    order = [0, 2, 1, 3]
    sentences = [(5, 60, -2.0), (170, 250, 4.5), (90, 150, 0.5)]
    assert lead_by_sentences(order, SPANS, sentences, pool=4) == [2, 1, 0, 3]


def test_chunks_past_the_pool_keep_the_chunk_scorers_order_after_it():
    order = [3, 0, 1, 2]
    sentences = [(170, 250, 9.0), (10, 50, 1.0), (250, 330, -1.0)]
    # Chunk 2 holds the best sentence but lies past the pool of two: it stays last.
    assert lead_by_sentences(order, SPANS, sentences, pool=2) == [0, 3, 1, 2]


def test_a_sentence_counts_only_for_the_chunks_holding_it_whole():
    order = [1, 0, 2, 3]
    # The overlap [80, 100) is in chunks 0 and 1: a sentence there counts for both; one cut by
    # chunk 1's end (165 to 200) counts only for chunk 2, which holds it whole.
    sentences = [(82, 98, 2.0), (165, 200, 3.0)]
    assert lead_by_sentences(order, SPANS, sentences, pool=4) == [2, 1, 0, 3]


def test_chunks_without_a_scored_sentence_keep_their_order_behind_those_with_one():
    assert lead_by_sentences([3, 1, 0, 2], SPANS, [(5, 60, -5.0)], pool=4) == [0, 3, 1, 2]
    assert lead_by_sentences([3, 1, 0, 2], SPANS, [], pool=4) == [3, 1, 0, 2]
