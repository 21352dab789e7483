"""The text side of a search over many chunks (ingest.search.text_bounded_sql): up to DOCUMENT_GIN_MAX_DOCS
documents it names them to chunk_document_search_gin (and the planner matches the index's expression); a
query whose every stem is expected in more than TEXT_MATCH_CAP chunks is ranked within the vector pool only;
either way only the documents' chunks come back."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.db import connection

import ingest.search as s
from engagements.models import Engagement
from ingest.models import Chunk, Document

pytestmark = pytest.mark.django_db


def _document(engagement, name: str, texts: list[str], rng) -> Document:
    document = Document.objects.create(
        engagement=engagement, file=f"t/{name}.pdf", original_name=f"{name}.pdf", title=name, status="ready"
    )
    vectors = rng.standard_normal((len(texts), 384))
    Chunk.objects.bulk_create(
        Chunk(
            document=document,
            chunk_id=f"{name}-{i}",
            ordinal=i,
            text=text,
            char_start=i * 100,
            char_end=i * 100 + len(text),
            page_start=1,
            page_end=1,
            embedding=list(vectors[i]),
        )
        for i, text in enumerate(texts)
    )
    return document


@pytest.fixture
def documents(engagement):
    rng = np.random.default_rng(3)
    other = Engagement.objects.create(name="Another client")
    filler = [f"The supplier delivers goods on day {i} of the month." for i in range(20)]
    ours = [
        _document(engagement, "msa", [*filler, "This Agreement is governed by the laws of Delaware."], rng),
        _document(engagement, "lease", [*filler, "The tenant pays rent monthly; Delaware law governs."], rng),
    ]
    theirs = _document(other, "theirs", [*filler, "Governed by the laws of Delaware, this lease."], rng)
    return [d.pk for d in ours], theirs.pk


def _plan(sql: str, params: dict, *, only: str = "") -> str:
    """The plan the planner picks when it must use an index (tables this small are read whole otherwise);
    with ``only``, the chunk table's other indexes on document or search are dropped first (the savepoint is
    rolled back): whether the planner can match that index to the query at all."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's pending foreign-key checks, before ALTER
        cursor.execute("SAVEPOINT plan")
        cursor.execute("SET LOCAL enable_seqscan = off")
        if only:
            cursor.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'ingest_chunk' AND indexname != %s "
                "AND (indexdef LIKE '%%(document_id)' OR indexdef LIKE '%%(document_id) INCLUDE%%' "
                "OR indexdef LIKE '%%USING gin%%')",
                [only],
            )
            for (name,) in cursor.fetchall():
                cursor.execute(f'DROP INDEX "{name}"')
            for name in ("one_chunk_per_ordinal", "unique_chunk_id_per_document"):  # (document, …) btrees
                cursor.execute(f'ALTER TABLE ingest_chunk DROP CONSTRAINT "{name}"')
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
        cursor.execute("ROLLBACK TO SAVEPOINT plan")
    return json.dumps(plan if not isinstance(plan, str) else json.loads(plan))


def _params(docs, query: str, within: list[int]) -> tuple[str, dict]:
    stems = s._and_tsquery(query)
    return stems, {
        "docs": docs,
        "all": stems,
        "any": stems.replace(" & ", " | "),
        "depth": 10,
        "within": within,
    }


def test_a_few_documents_are_named_to_the_document_gin_index(documents):
    docs, _ = documents
    stems, params = _params(docs, "governed laws Delaware", [])
    sql = s.text_bounded_sql(docs, stems, within="%(within)s")
    assert s.DOCUMENTS_GIN in sql
    plan = _plan(sql, params, only="chunk_document_search_gin")
    assert "chunk_document_search_gin" in plan and "ARRAY[document_id]" in plan


def test_many_documents_take_the_plain_gin(documents, monkeypatch):
    docs, _ = documents
    monkeypatch.setattr(s, "DOCUMENT_GIN_MAX_DOCS", 1)
    stems, params = _params(docs, "governed laws Delaware", [])
    sql = s.text_bounded_sql(docs, stems, within="%(within)s")
    assert s.DOCUMENTS_GIN not in sql and "search @@" in sql
    assert "chunk_search_gin" in _plan(sql, params, only="chunk_search_gin")


def test_every_stem_match_of_the_documents_only_is_ranked(documents):
    docs, theirs = documents
    found = s.text_candidates("governed laws Delaware", docs, 10, within=[])
    rows = Chunk.objects.filter(pk__in=found)
    assert len(found) == 2 and {c.document_id for c in rows} == set(docs)
    assert not Chunk.objects.filter(pk__in=found, document_id=theirs).exists()


def test_common_stems_are_ranked_within_the_pool_only(documents, monkeypatch):
    docs, theirs = documents
    pool = list(Chunk.objects.filter(document_id=docs[0], ordinal__lt=3).values_list("pk", flat=True))
    outside = list(Chunk.objects.filter(document_id=theirs).values_list("pk", flat=True)[:2])
    # "supplier" is in 20 of each document's 21 chunks: with the cap below that, only the pool is ranked
    monkeypatch.setattr(s, "TEXT_MATCH_CAP", 5)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_chunk")  # the estimate reads the table's statistics
    assert s.stem_matches_estimate(docs, s._and_tsquery("supplier")) > 5
    assert s.DOCUMENTS_GIN not in s.text_bounded_sql(docs, "'supplier'", within="%(within)s")
    found = s.text_candidates("supplier", docs, 50, within=pool + outside)
    assert sorted(found) == sorted(pool)  # the pool's matches; never another engagement's chunk
    monkeypatch.setattr(s, "TEXT_MATCH_CAP", 1_000)
    found = s.text_candidates("supplier", docs, 50, within=pool + outside)
    assert len(found) == 40 and set(pool) <= set(found)
    assert not Chunk.objects.filter(pk__in=found, document_id=theirs).exists()
