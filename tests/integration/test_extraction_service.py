"""``find_clause`` (the reviewer's "find a clause") and the offline engine on a really ingested PDF:
retrieval over pgvector + full text, sentence embeddings, verified citations with physical pages."""

from __future__ import annotations

import pytest
from django.http import Http404

from extraction.models import ClauseType, Extraction
from extraction.service import find_clause
from tests.integration.extraction_fixtures import ANSWERS, write_contract_pdf
from tests.mock_anthropic import FakeClaude, MockAnthropic

pytestmark = pytest.mark.django_db


@pytest.fixture
def ingested(engagement, tmp_path):
    """The fixture contract as a real 3-page PDF, through the ingest pipeline."""
    from ingest.intake import intake_file
    from ingest.pipeline import run_pipeline

    path = tmp_path / "supply.pdf"
    write_contract_pdf(path)
    doc = intake_file(engagement, path, filename="supply.pdf", enqueue=False).document
    assert run_pipeline(doc.pk), doc.error
    doc.refresh_from_db()
    return doc


def test_find_clause_offline_returns_a_verified_cited_extraction(ingested, make_member):
    auditor = make_member(ingested.engagement, "auditor")
    ex = find_clause(ingested, user=auditor, clause_type="Governing Law", engine="offline")
    assert isinstance(ex, Extraction) and ex.engine == "offline" and ex.model.startswith("offline")
    assert ex.status == "found", ex.verification_errors
    assert "State of Delaware" in ex.clause_text
    cit = ex.citations.get() if ex.citations.count() == 1 else ex.citations.first()
    assert ingested.text[cit.start : cit.end] == cit.quote
    assert cit.page == 3 and cit.chunk.document_id == ingested.pk
    assert ex.run.created_by == auditor and ex.run.status == "done"


def test_find_clause_answers_a_free_question_under_an_inactive_custom_type(ingested, make_member):
    auditor = make_member(ingested.engagement, "auditor")
    ex = find_clause(
        ingested, user=auditor, question="What unit fee per pallet does the customer pay?", engine="offline"
    )
    assert ex.clause_type.source == ClauseType.Source.CUSTOM and not ex.clause_type.active
    assert ex.clause_type.name.startswith("Q: What unit fee")
    assert ex.status == "found" and "$247.83" in ex.clause_text
    again = find_clause(
        ingested, user=auditor, question="What unit fee per pallet does the customer pay?", engine="offline"
    )
    assert (
        again.clause_type_id == ex.clause_type_id and again.pk != ex.pk
    )  # a new run, the same question type


@pytest.mark.parametrize(
    "question",
    ["governing law", "Which law governs this agreement?", "Can the customer terminate for convenience?"],
)
def test_a_question_about_a_catalog_subject_is_answered_by_its_clause(ingested, make_member, question):
    # The question is not a rival of the catalog type it asks about: a sentence that fits that type
    # better than the question's own wording is still its answer.
    want = {
        "governing law": "Governing Law",
        "Which law governs this agreement?": "Governing Law",
        "Can the customer terminate for convenience?": "Termination For Convenience",
    }[question]
    ex = find_clause(
        ingested, user=make_member(ingested.engagement, "auditor"), question=question, engine="offline"
    )
    assert ex.status == "found", ex.clause_text
    assert ANSWERS[want] in " ".join(ex.clause_text.split())  # the PDF's line breaks aside


@pytest.mark.parametrize(
    "question",
    ["Are there liquidated damages?", "Is there a non-compete?", "What insurance must the supplier carry?"],
)
def test_a_question_about_a_clause_the_contract_lacks_is_not_found(ingested, make_member, question):
    ex = find_clause(
        ingested, user=make_member(ingested.engagement, "auditor"), question=question, engine="offline"
    )
    assert ex.status == "not_found", ex.clause_text


@pytest.mark.parametrize(
    "name, description, query, want",
    [
        (
            "Choice of Law",
            "Which jurisdiction's law governs the contract.",
            "governing law; this agreement shall be governed by and construed in accordance with the laws of the state of",
            "Governing Law",
        ),
        (
            "Employee Non-Solicitation",
            "A party may not hire or solicit the other party's employees.",
            "shall not solicit or hire any employee of the other party",
            None,
        ),
    ],
)
def test_an_admins_own_clause_type_is_found_like_the_catalog_type_it_restates(
    ingested, make_member, name, description, query, want
):
    # Its own words, not the catalog's: the built-in "Governing Law" must not out-vote "Choice of Law"
    # (through the presence model fitted on the catalog it did: presence 0.15 beside the Delaware clause).
    mine = ClauseType.objects.create(
        name=name,
        slug=name.lower().replace(" ", "-"),
        description=description,
        query=query,
        source=ClauseType.Source.CUSTOM,
    )
    ex = find_clause(
        ingested, user=make_member(ingested.engagement, "auditor"), clause_type=mine, engine="offline"
    )
    if want is None:
        assert ex.status == "not_found"
    else:
        assert ex.status == "found" and ANSWERS[want] in " ".join(ex.clause_text.split())


def test_find_clause_with_claude_through_the_mock_api(ingested, make_member):
    from extraction.agent.engine import AnthropicEngine

    auditor = make_member(ingested.engagement, "auditor")
    api = MockAnthropic(FakeClaude({"Governing Law": "governed by the laws of the State of Delaware"}))
    engine = AnthropicEngine(client=api.client(), model="claude-sonnet-4-6", max_turns=3)
    ex = find_clause(ingested, user=auditor, clause_type="Governing Law", engine=engine)
    assert ex.engine == "anthropic" and ex.status == "found" and ex.citations.get().page == 3


def test_find_clause_refuses_a_non_member(ingested, django_user_model):
    stranger = django_user_model.objects.create_user(username="stranger", password="pw-for-tests-1")
    with pytest.raises(Http404):
        find_clause(ingested, user=stranger, clause_type="Governing Law", engine="offline")


def test_offline_engine_says_not_found_for_an_absent_clause(ingested, make_member):
    auditor = make_member(ingested.engagement, "auditor")
    ex = find_clause(ingested, user=auditor, clause_type="Source Code Escrow", engine="offline")
    assert ex.status == "not_found" and not ex.citations.exists()
    assert ANSWERS["Non-Compete"] is None


def test_offline_engine_records_its_presence_signals_even_before_calibration(ingested):
    """``evaluate --calibrate`` fits the presence model (for the types the clause finder does not know)
    on what an uncalibrated engine without the finder records."""
    from extraction.catalog import get
    from extraction.docview import load_document
    from extraction.offline.engine import OfflineEngine
    from extraction.retrieval import retrieve

    engine = OfflineEngine(calibration={"threshold": 0.0, "version": "uncalibrated"}, finder=False)
    session = engine.open_session(load_document(ingested))
    law, insurance = get("Governing Law"), get("Insurance")
    about_law = session.extract(law, "law", retrieve(ingested, law, 5)).detail
    not_about_insurance = session.extract(insurance, "ins", retrieve(ingested, insurance, 5)).detail
    assert {"best_score", "section_match", "type_margin"} <= set(about_law)
    assert about_law["type_margin"] > 0 > not_about_insurance["type_margin"]
    # "entered into as of March 3, 2021 ... starts on the Effective Date": no date is called effective
    effective = get("Effective Date")
    assert session.extract(effective, "eff", retrieve(ingested, effective, 5)).detail["value_cue"] == 0.0


def test_find_clause_during_an_api_outage_says_so_and_leaves_nothing_running(ingested, make_member):
    from extraction.agent.engine import AnthropicEngine
    from extraction.models import ClauseTask, ExtractionRun
    from extraction.service import FindClauseError

    auditor = make_member(ingested.engagement, "auditor")
    api = MockAnthropic(FakeClaude({"Governing Law": "governed by the laws of the State of Delaware"}))
    api.script.extend([api.overloaded()] * 10)
    engine = AnthropicEngine(client=api.client(max_retries=1), model="claude-sonnet-4-6", max_turns=3)
    with pytest.raises(FindClauseError, match="529 overloaded_error.*try again in a few minutes"):
        find_clause(ingested, user=auditor, clause_type="Governing Law", engine=engine)
    assert not ClauseTask.objects.filter(status__in=["pending", "running"]).exists()
    assert ExtractionRun.objects.get().status == "failed"


def test_a_chunk_a_citation_stands_on_is_never_deleted_alone(ingested, make_member):
    from django.db.models import RestrictedError

    from extraction.models import Citation
    from ingest.models import Chunk

    ex = find_clause(
        ingested,
        user=make_member(ingested.engagement, "auditor"),
        clause_type="Governing Law",
        engine="offline",
    )
    chunk = ex.citations.get().chunk
    with pytest.raises(RestrictedError):  # a re-chunking cannot drop a stored clause's evidence
        Chunk.objects.filter(pk=chunk.pk).delete()
    assert Citation.objects.filter(extraction=ex).count() == 1
    ingested.delete()  # the whole document still goes, with its clauses
    assert not Citation.objects.exists() and not Chunk.objects.exists()
