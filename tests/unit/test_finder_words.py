"""The finder's words (``extraction.finder.words``): the phrases a clause type is named by reach the scorers
as terms, weighed by how rare they are, and a passage's row does not grow with its length."""

from __future__ import annotations

import numpy as np

from extraction.finder.words import Vocabulary, fit_vocabulary, passage_terms

SENTENCES = [
    "Upon a Change of Control of the Company, the Licensee may terminate this Agreement.",
    "A change of control of either party requires the other party's prior written consent.",
    "Neither party may assign this Agreement without the prior written consent of the other party.",
    "This Agreement is governed by the laws of the State of Delaware.",
    "The Licensee shall pay the royalties within thirty (30) days.",
    "Any notice under this Agreement shall be in writing.",
]


def test_a_phrase_is_a_term_beside_its_words():
    terms = passage_terms("Change of Control")
    assert "change" in terms and "control" in terms and "change control" in terms


def test_rare_terms_weigh_more_and_every_row_has_unit_length():
    vocabulary = fit_vocabulary(SENTENCES, min_sentences=1)
    rows = vocabulary.rows(SENTENCES + ["A change of control."])
    assert np.allclose(np.sqrt(rows.multiply(rows).sum(axis=1)).A.ravel(), 1.0)
    last = rows.getrow(len(SENTENCES)).toarray().ravel()
    index = {t: i for i, t in enumerate(vocabulary.terms)}
    assert last[index["change control"]] > 0
    consent = vocabulary.idf[index["consent"]]  # in two sentences
    delaware = vocabulary.idf[index["delaware"]]  # in one
    assert delaware > consent


def test_a_passage_of_unknown_words_is_a_zero_row_and_the_vocabulary_keeps_its_cut():
    vocabulary = fit_vocabulary(SENTENCES, min_sentences=2)
    assert "delaware" not in vocabulary.terms and "change control" in vocabulary.terms
    assert vocabulary.rows(["Zebras graze quietly."]).nnz == 0
    again = Vocabulary.from_arrays(vocabulary.arrays("words"), "words")
    text = ["Upon a change of control the Licensee may terminate."]
    assert (again.rows(text) != vocabulary.rows(text)).nnz == 0
