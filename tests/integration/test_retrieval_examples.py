"""A clause type's example clause is one more query: an admin who writes one in contract language
steers the search to passages worded like it (a real ingest: chunks, embeddings, full text)."""

from __future__ import annotations

import pytest

from extraction.catalog.sync import as_plain, fill_examples
from extraction.models import ClauseType
from extraction.offline.reader import extract_offline
from extraction.retrieval import embed_texts, retrieve

pytestmark = pytest.mark.django_db

SECTIONS = {
    "Deliveries": "Supplier ships the goods to the warehouse named by the buyer, carriage paid, within ten days "
    "of each purchase order. Risk passes on delivery.",
    "Price Adjustment": "Once each calendar year the unit rates may move with the consumer price index, by "
    "no more than four percent, on sixty days' written notice.",
    "Records": "Each side keeps accurate books for five years and lets the other inspect them during "
    "business hours once a year.",
    "Notices": "Notices are given in writing to the addresses on the first page and take effect on receipt.",
}
# Each section padded past half a chunk (2,000 characters), so every section is a chunk of its own.
FILLER = [
    "The parties have read this section and agree to it as written.",
    "Headings are for convenience and do not change the meaning of this section.",
    "Words in the singular include the plural where the context allows.",
    "This section binds the parties and their permitted successors.",
    "A waiver of any part of this section must be in writing to be effective.",
]


@pytest.fixture
def contract(engagement, tmp_path):
    from ingest.intake import intake_file
    from ingest.pipeline import run_pipeline

    padding = " ".join(FILLER * 3)
    body = "# Supply Terms\n\n" + "\n\n".join(
        f"## {i}. {title}\n\n{text} {padding}" for i, (title, text) in enumerate(SECTIONS.items(), 1)
    )
    path = tmp_path / "terms.md"
    path.write_text(body, encoding="utf-8")
    doc = intake_file(engagement, path, filename="terms.md", enqueue=False).document
    assert run_pipeline(doc.pk), doc.error
    doc.refresh_from_db()
    assert doc.chunks.count() >= len(SECTIONS)
    return doc


def _answer(document, row) -> str:
    clause = as_plain(row)
    return extract_offline(
        clause, retrieve(document, clause, 5), embed=embed_texts, threshold=0.0
    ).tool_input["clause_text"]


def test_an_example_clause_steers_the_search_to_passages_worded_like_it(contract):
    row = ClauseType.objects.create(
        name="Escalator",
        slug="escalator",
        source=ClauseType.Source.CUSTOM,
        description="Escalator: what a reviewer looks for.",
        query="escalator",
    )
    assert "consumer price index" not in _answer(contract, row)  # its name and query say nothing of prices

    row.example = (
        "The prices may be increased once a year in line with the consumer price index, "
        "by no more than five percent, on written notice."
    )
    row.save()
    assert "consumer price index" in _answer(contract, row)


def test_catalog_rows_carry_our_examples_and_admin_edits_are_kept():
    audit = ClauseType.objects.get(name="Audit Rights")
    assert "books and records" in audit.example  # seeded by the migration
    ClauseType.objects.filter(name="Audit Rights").update(example="Our auditors may inspect the ledgers.")
    ClauseType.objects.filter(name="Insurance").update(example="")
    assert fill_examples() == 1  # only the emptied one
    assert ClauseType.objects.get(name="Audit Rights").example == "Our auditors may inspect the ledgers."
    assert "additional insured" in ClauseType.objects.get(name="Insurance").example
