"""Hybrid search (pgvector cosine + full text, RRF) over ingested documents: planted clauses
come back in the top 5, filtering by document is exact, reading order and the rerank hook work."""

from __future__ import annotations

import numpy as np
import pytest

from demo import make_contract_pdf, make_paper_markdown
from ingest.fusion import fuse
from ingest.intake import intake_file
from ingest.pipeline import run_pipeline
from ingest.search import SearchHit, search
from tests.integration.ingest_helpers import chunks_containing

pytestmark = pytest.mark.django_db(transaction=True)

QUERIES = {
    "Governing Law": "Which state's law governs this agreement and its interpretation?",
    "Cap On Liability": "cap on the aggregate liability of a party, maximum amount of damages",
    "Termination For Convenience": "right to terminate the agreement for convenience, without cause, on notice",
    "Non-Compete": "restriction on competing with the other party, non-compete period",
}


@pytest.fixture
def two_contracts(engagement, tmp_path):
    msa = make_contract_pdf(tmp_path / "msa.pdf", pages=14, seed=7)
    supply = make_contract_pdf(
        tmp_path / "supply.pdf",
        pages=12,
        seed=8,
        title="Supply Agreement",
        parties=("Harbor Foods Co.", "Cascade Packaging Ltd."),
        numbering="decimal",
    )
    paper = make_paper_markdown(tmp_path / "paper.md")
    docs = []
    for truth in (msa, supply, paper):
        document = intake_file(engagement, truth.path, filename=truth.path.name, enqueue=False).document
        assert run_pipeline(document.pk)
        document.refresh_from_db()
        docs.append(document)
    return (msa, docs[0]), (supply, docs[1]), docs[2]


def test_planted_clauses_come_back_in_the_top_five_of_their_document_only(two_contracts):
    (msa, msa_doc), (supply, supply_doc), paper_doc = two_contracts
    for truth, document in ((msa, msa_doc), (supply, supply_doc)):
        chunks = list(document.chunks.all())
        for clause_type, query in QUERIES.items():
            planted = truth.by_type(clause_type)[0]
            wanted = {c.pk for c in chunks_containing(chunks, planted.text[:80])}
            hits = search(query, [document], k=5)
            assert len(hits) == 5 and all(isinstance(h, SearchHit) for h in hits)
            assert all(h.chunk.document_id == document.pk for h in hits)  # exact filtering
            assert wanted & {h.chunk.pk for h in hits}, (
                document.title,
                clause_type,
                [h.chunk.section for h in hits],
            )
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            assert all(h.vector_rank or h.text_rank for h in hits)

    # Several documents: only theirs; the HNSW path filters exactly too.
    both = search(QUERIES["Governing Law"], [msa_doc, supply_doc], k=10)
    assert {h.chunk.document_id for h in both} == {msa_doc.pk, supply_doc.pk}
    for method in ("exact", "hnsw", "quantized"):
        only_paper = search("governing law of the agreement", [paper_doc.pk], k=5, method=method)
        assert only_paper and {h.chunk.document_id for h in only_paper} == {paper_doc.pk}
    exact = search(QUERIES["Cap On Liability"], [msa_doc], k=5, method="exact")
    approx = search(QUERIES["Cap On Liability"], [msa_doc], k=5, method="hnsw")
    assert exact[0].chunk.pk == approx[0].chunk.pk
    # The quantized pass keeps 10 x the pool: over a contract that is every chunk, so exact's answer.
    quantized = search(QUERIES["Cap On Liability"], [msa_doc], k=5, method="quantized")
    assert [h.chunk.pk for h in quantized] == [h.chunk.pk for h in exact]


def test_reading_order_and_rerank_hook(two_contracts):
    (_, msa_doc), (_, supply_doc), _ = two_contracts
    query = QUERIES["Termination For Convenience"]
    ranked = search(query, [supply_doc, msa_doc], k=6)
    ordered = search(query, [supply_doc, msa_doc], k=6, reading_order=True)
    assert {h.chunk.pk for h in ranked} == {h.chunk.pk for h in ordered}
    keys = [((0 if h.chunk.document_id == supply_doc.pk else 1), h.chunk.char_start) for h in ordered]
    assert keys == sorted(keys)

    seen = {}

    def reverse(q, hits):
        seen["query"], seen["n"] = q, len(hits)
        return list(reversed(hits))

    reranked = search(query, [msa_doc], k=3, rerank=reverse)
    assert seen["query"] == query and seen["n"] > 3  # the hook sees more candidates than k
    assert len(reranked) == 3
    assert search("", [msa_doc]) == [] and search(query, []) == []


def test_reciprocal_rank_fusion():
    fused = fuse([10, 20, 30], [30, 40])
    assert [pk for pk, *_ in fused] == [30, 10, 20, 40]
    pk, score, vector_rank, text_rank = fused[0]
    assert (vector_rank, text_rank) == (3, 1) and score == pytest.approx(1 / 63 + 1 / 61)
    assert fused[-1][2:] == (None, 2)


def test_large_sets_take_the_bounded_path_and_still_filter_exactly(two_contracts, monkeypatch):
    """Over more than EXACT_MAX_ROWS chunks: HNSW vector side, text ranked within its pool."""
    import ingest.search as search_module

    (msa, msa_doc), (_, supply_doc), _ = two_contracts
    monkeypatch.setattr(search_module, "EXACT_MAX_ROWS", 10)
    planted = msa.by_type("Governing Law")[0]
    wanted = {c.pk for c in chunks_containing(list(msa_doc.chunks.all()), planted.text[:80])}
    hits = search(QUERIES["Governing Law"], [msa_doc], k=5)
    assert len(hits) == 5 and {h.chunk.document_id for h in hits} == {msa_doc.pk}
    assert wanted & {h.chunk.pk for h in hits}
    # A chunk holding every stem of the query is found by the text side even outside the pool.
    exact_words = " ".join(planted.text.split()[:12])
    text_ids = search_module.text_candidates(exact_words, [msa_doc.pk, supply_doc.pk], 5, within=[])
    assert wanted <= set(text_ids)


def test_the_vector_method_follows_the_share_of_the_table(two_contracts, monkeypatch):
    """A few chunks: exact. Many, but a small share of the table (an engagement among others):
    the quantized pass. Most of the table: the HNSW walk."""
    from django.db import connection

    import ingest.search as search_module
    from ingest.models import Chunk

    (_, msa_doc), (_, supply_doc), paper_doc = two_contracts
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_chunk")
    everything = list(Chunk.objects.values_list("document_id", flat=True).distinct())
    for document in (msa_doc, supply_doc, paper_doc):  # the pipeline keeps each document's count
        document.refresh_from_db()
        assert document.chunk_count == Chunk.objects.filter(document=document).count() > 0
    assert search_module.choose_method([paper_doc.pk]) == "exact"
    monkeypatch.setattr(search_module, "EXACT_MAX_ROWS", 1)
    monkeypatch.setattr(search_module, "HNSW_MIN_SHARE", 0.99)
    assert search_module.choose_method([paper_doc.pk]) == "quantized"
    monkeypatch.setattr(search_module, "HNSW_MIN_SHARE", 0.01)
    assert search_module.choose_method(everything) == "hnsw"


def test_one_statement_search_equals_the_two_sides_fused_in_python(two_contracts, monkeypatch):
    """search() runs both sides, the fusion and the row fetch as one SQL statement; it must
    give exactly what vector_candidates + text_candidates + fuse give (ids, scores, ranks),
    on the small path, the bounded path and the HNSW path, and the HNSW side must come back
    sorted by true distance (relaxed order is re-sorted)."""
    import ingest.search as search_module
    from ingest.embeddings import embed_query
    from ingest.search import MIN_CANDIDATES, TEXT_POOL, text_candidates, vector_candidates

    (_, msa_doc), (_, supply_doc), paper_doc = two_contracts
    docs = [msa_doc.pk, supply_doc.pk, paper_doc.pk]

    def reference(query, k, method, large):
        vector = embed_query(query)
        depth = max(4 * k, MIN_CANDIDATES)
        pool = vector_candidates(vector, docs, max(depth, TEXT_POOL) if large else depth, method=method)
        text_ids = text_candidates(query, docs, depth, within=pool if large else None)
        return [tuple(row) for row in fuse(pool[:depth], text_ids)[:k]]

    for large in (False, True):
        if large:
            monkeypatch.setattr(search_module, "EXACT_MAX_ROWS", 10)
        for method in ("exact", "hnsw", "quantized"):
            for query in [*QUERIES.values(), "the of and", "indemnification"]:
                hits = search(query, docs, k=7, method=method)
                got = [(h.chunk.pk, h.score, h.vector_rank, h.text_rank) for h in hits]
                assert got == reference(query, 7, method, large), (large, method, query)
                assert all(h.chunk.text and h.chunk.document_id in docs for h in hits)

    from ingest.models import Chunk

    vector = embed_query(QUERIES["Non-Compete"])
    for method in ("hnsw", "quantized"):
        ids = vector_candidates(vector, docs, 30, method=method)
        distances = {
            c.pk: float(
                1 - np.dot(c.embedding, vector) / np.linalg.norm(c.embedding) / np.linalg.norm(vector)
            )
            for c in Chunk.objects.filter(pk__in=ids)
        }
        assert [distances[pk] for pk in ids] == pytest.approx(sorted(distances[pk] for pk in ids), abs=1e-6)
