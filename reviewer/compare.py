"""One clause type across an engagement's contracts: every contract's answer side by side, its wordings
grouped (``reviewer.wordings``), and a reviewer's acceptance of a whole group of identical wordings.

A contract's answer is the one its grid cell shows (``reviewer.grid.cell_of``). Its answers are read in one
query whatever the engagement's size; the documents in another.

Accepting a group records one Review per clause through ``reviewer.decisions.record_decision``, the one
place a decision is written: the same checks (the state each clause was seen in, the clause list's repeats,
the text not edited) and the same history as a decision taken on the clause's own page. The group is
accepted whole or not at all: one clause refused (decided by someone else meanwhile, say) leaves the others
unrecorded, and the page says which.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction

from extraction.models import ClauseType, Extraction
from ingest.models import Document
from reviewer import wordings
from reviewer.decisions import DecisionError, record_decision
from reviewer.grid import Answer, Cell, answers, cell_of
from reviewer.states import ACCEPT


@dataclass
class Entry:
    """One contract's answer."""

    document: Document
    cell: Cell

    @property
    def text(self) -> str:
        return self.cell.answer.text


@dataclass
class ShownWording:
    wording: wordings.Wording[Entry]
    diff: str  # escaped HTML against the most common wording ("" for that one itself)
    usual: bool  # the most common wording itself
    to_accept: list[Entry] = field(default_factory=list)  # its answers not accepted yet

    @property
    def picks(self) -> list[str]:
        """What the group-accept form posts for each answer: "extraction:latest review:version"."""
        return [
            f"{e.cell.answer.id}:{e.cell.answer.review_id}:{e.cell.answer.version}" for e in self.to_accept
        ]


@dataclass
class ShownGroup:
    size: int
    wordings: list[ShownWording]
    usual: bool  # holds the most common wording


@dataclass
class Comparison:
    clause_type: ClauseType
    groups: list[ShownGroup]  # the answers with a wording, smallest group first
    not_found: list[Entry]  # answered "not found", or marked not in the contract by a reviewer
    missing: list[Document]  # contracts with no answer for the type
    contracts: int
    usual_text: str = ""

    @property
    def shared(self) -> bool:
        """Whether two contracts word the clause alike: else no wording is "the most common" one."""
        return any(g.size > 1 for g in self.groups)


def comparison(engagement, clause_type: ClauseType, doc_type: str = "") -> Comparison:
    docs_qs = (
        Document.objects.filter(engagement=engagement).only("id", "title", "doc_type").order_by("title", "id")
    )
    extractions = Extraction.objects.filter(document__engagement=engagement, clause_type=clause_type)
    if doc_type:
        docs_qs = docs_qs.filter(doc_type=doc_type)
        extractions = extractions.filter(document__doc_type=doc_type)
    docs = list(docs_qs)
    by_doc: dict[int, list[Answer]] = {}
    for a in answers(extractions, text_chars=None):
        by_doc.setdefault(a.document_id, []).append(a)
    entries, not_found, missing = [], [], []
    for doc in docs:
        rows = by_doc.get(doc.pk)
        if not rows:
            missing.append(doc)
            continue
        entry = Entry(doc, cell_of(rows, clause_type.kind))
        if entry.cell.absent or (entry.cell.status == "not_found" and not entry.cell.answer.corrected):
            not_found.append(entry)
        else:
            entries.append(entry)
    grouped = wordings.group(entries, lambda e: e.text)
    usual = wordings.most_common(grouped)
    usual_text = usual.text if usual is not None else ""
    shown = []
    for g in grouped:
        shown_wordings = [
            ShownWording(
                w,
                "" if w is usual else wordings.diff_html(usual_text, w.text),
                w is usual,
                [e for e in w.items if e.cell.review != ACCEPT],
            )
            for w in g.wordings
        ]
        shown.append(ShownGroup(g.size, shown_wordings, any(w.usual for w in shown_wordings)))
    return Comparison(clause_type, shown, not_found, missing, len(docs), usual_text)


class GroupRefused(DecisionError):
    """The group was not accepted (nothing recorded); ``str(error)`` says why, for the reviewer."""


def parse_picks(values: list[str]) -> list[tuple[int, int, int]]:
    """The posted "extraction:latest review:version" triples; GroupRefused on anything else."""
    out = []
    for value in values:
        parts = value.split(":")
        if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
            raise GroupRefused("This form is out of date: reload the page and accept again.")
        out.append((int(parts[0]), int(parts[1]), int(parts[2])))
    if not out:
        raise GroupRefused("No clause to accept in this group.")
    return out


def accept_group(engagement, clause_type: ClauseType, picks: list[tuple[int, int, int]], user: User) -> int:
    """Accept each picked answer (one Review each, through ``record_decision``), all or none; how many.

    The answers must be of ``clause_type`` in ``engagement`` (else Extraction.DoesNotExist: the caller
    answers 404) and have the identical wording as they stand now (else GroupRefused)."""
    ids = [p[0] for p in picks]
    if len(set(ids)) != len(ids):
        raise GroupRefused("A clause is listed twice: reload the page and accept again.")
    current = list(
        answers(
            Extraction.objects.filter(pk__in=ids, document__engagement=engagement, clause_type=clause_type),
            text_chars=None,
        )
    )
    if len(current) != len(ids):
        raise Extraction.DoesNotExist("Not every clause is of this type in this engagement.")
    if len({wordings.identical_key(a.text) for a in current}) > 1:
        raise GroupRefused(
            "These clauses no longer have one wording (one was corrected meanwhile): nothing was recorded. "
            "The page now shows them as they stand."
        )
    titles = dict(Extraction.objects.filter(pk__in=ids).values_list("pk", "document__title"))
    with transaction.atomic():
        for extraction_id, seen_review, seen_version in picks:
            try:
                record_decision(
                    extraction_id=extraction_id,
                    user=user,
                    decision=ACCEPT,
                    seen_review_id=seen_review,
                    seen_version=seen_version,
                )
            except DecisionError as exc:
                title = titles.get(extraction_id, extraction_id)
                raise GroupRefused(f"Nothing in this group was recorded: in “{title}”, {exc}") from exc
    return len(picks)
