"""The free questions asked on a document with Find a clause, listed apart from its clauses.

A question is answered like a clause: an Extraction of an inactive custom type named "Q: …"
(``extraction.service.question_type``), its citations verified by the server, reviewed with the same
decisions. It is not a type of the catalog, so the clause list, its counts and the exports leave it out
(``extraction.models.questions``); the document page lists it under "Questions asked", with who asked it
and when: the run that answered it, started by the reviewer who asked (``ExtractionRun.created_by`` and
``created_at``). The same question asked again is one item per distinct answer, as a clause type is
(``clauses.fold_repeats``), and lists every ask.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from extraction import catalog
from extraction.models import Extraction, ExtractionRun, questions
from ingest.models import Document
from reviewer.clauses import answer_key, decorate, fold_repeats, with_review_state
from reviewer.decisions import reviewer_name


@dataclass(frozen=True)
class Ask:
    """One asking of a question: who asked it, when."""

    who: str
    at: datetime


def is_question(extraction: Extraction) -> bool:
    """Whether ``extraction`` answers a free question rather than being a clause of the catalog."""
    return catalog.is_question(extraction.clause_type)


def _answers(document_id: int) -> QuerySet:
    return (
        with_review_state(Extraction.objects.filter(document_id=document_id).filter(questions("clause_type")))
        .select_related("clause_type", "run", "run__created_by")
        .defer("verification_errors", "run__error")
        .order_by("clause_type_id", "-id")
    )


def listed(document: Document) -> list[Extraction]:
    """The answers to the document's questions, the question asked last first: one item per distinct answer of
    a question (repeats folded as in the clause list), each with ``question`` (its words) and ``asks`` (the
    asks that gave this answer, latest first)."""
    by_type: dict[int, list] = {}
    for row in _answers(document.pk):
        decorate(row)
        by_type.setdefault(row.clause_type_id, []).append(row)
    items: list = []  # Extraction rows with the attributes the list item reads
    for rows in by_type.values():
        asks: dict = {}
        for row in rows:
            asks.setdefault(answer_key(row), []).append(
                Ask(reviewer_name(row.run.created_by), row.run.created_at)
            )
        for item in fold_repeats(rows):
            item.question = (
                item.clause_type.description or item.clause_type.name[len(catalog.QUESTION_PREFIX) :]
            )
            item.asks = asks[answer_key(item)]
            items.append(item)
    items.sort(key=lambda i: (i.asks[0].at, i.pk), reverse=True)
    return items


def item(extraction: Extraction) -> Extraction | None:
    """The item the list shows for the answer ``extraction`` (refreshed after a decision on it)."""
    return next((i for i in listed(extraction.document) if i.pk == extraction.pk), None)


def asked(extraction: Extraction) -> Ask:
    """Who asked the question ``extraction`` answers, and when."""
    run = ExtractionRun.objects.select_related("created_by").get(pk=extraction.run_id)
    return Ask(reviewer_name(run.created_by), run.created_at)
