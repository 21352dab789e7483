"""Review decisions: the current state of a clause is derived from its append-only reviews.

``derive_state``, ``validate`` and ``check_fresh`` are pure (plain objects in, values out);
``record_decision`` is the one place a decision is written, under a row lock on the
Extraction so two reviewers can never both win: the later one is refused as stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from extraction.closest import ClosestPassage
from extraction.evaluation.stratify import NOT_FOUND, answer_is_absent
from extraction.models import Extraction
from reviewer.clauses import lock_with_repeats
from reviewer.models import Review
from reviewer.states import CORRECT, DECISIONS, PENDING, REJECT, STATE_LABELS

# "Not in this contract": what a reviewer presses; it is recorded as a correction to "not_found", the answer
# the figures read as absent (extraction.evaluation.stratify.marks_absent). Typing "not_found" exactly was
# the only way.
ABSENT = "absent"
POSTED_DECISIONS = DECISIONS + (ABSENT,)
CHOOSE = "Choose accept, reject, correct or not in this contract."
UNSAVED_EDIT = (
    "You edited the text: save it as a correction, or discard the edit (the text box keeps it for now)."
)


class DecisionError(Exception):
    """A decision that was not recorded; ``str(error)`` is a message for the reviewer."""


class InvalidDecision(DecisionError):
    kind = "invalid"


class UnsavedEdit(InvalidDecision):
    """Accept or reject posted with the clause text edited: saving it would drop the edit."""

    kind = "edited"


class StaleDecision(DecisionError):
    def __init__(self, message: str, latest: Any = None):
        super().__init__(message)
        self.latest = latest


@dataclass(frozen=True)
class ClauseState:
    decision: str  # pending | accept | reject | correct
    text: str  # the clause text as it stands (the latest correction, else the engine's)
    reviewer: str = ""
    at: datetime | None = None
    latest_review_id: int = 0

    @property
    def label(self) -> str:
        return STATE_LABELS[self.decision]


def derive_state(engine_text: str, reviews_newest_first: Iterable[Any]) -> ClauseState:
    """Current state from reviews (objects with id, decision, corrected_text, reviewer, created_at)."""
    reviews = list(reviews_newest_first)
    if not reviews:
        return ClauseState(PENDING, engine_text)
    latest = reviews[0]
    text = next(
        (r.corrected_text for r in reviews if r.decision == CORRECT and r.corrected_text), engine_text
    )
    return ClauseState(latest.decision, text, reviewer_name(latest.reviewer), latest.created_at, latest.id)


def validate(
    decision: str,
    corrected_text: str,
    reason: str,
    current_text: str,
    absent_now: bool = False,
    box_text: str = "",
) -> tuple[str, str, str]:
    """Normalised (decision, corrected_text, reason), or InvalidDecision with what to fix.

    Texts are compared and stored stripped, with LF line ends on both sides (browsers post a
    textarea with CRLF, so an untouched multi-line box must not read as an edit). The text box
    is posted with every decision: accept or reject with a text that differs from the current
    one, and from ``box_text`` the box opened with (a not_found's closest sentence), is refused
    (UnsavedEdit) rather than recorded with the edit thrown away. ``absent`` becomes a correction
    to "not_found"; ``absent_now`` (``extraction.evaluation.stratify.answer_is_absent``) refuses it
    when the answer already says so.
    """
    decision = (decision or "").strip().lower()
    corrected_text, current_text = _plain(corrected_text), _plain(current_text)
    untouched = {current_text, _plain(box_text) or current_text}
    reason = (reason or "").strip()
    if decision not in POSTED_DECISIONS:
        raise InvalidDecision(CHOOSE)
    if decision == ABSENT:
        if absent_now:
            raise InvalidDecision(
                "The answer already says this clause is not in the contract: accept it to confirm."
            )
        if corrected_text and corrected_text not in untouched:
            raise UnsavedEdit(UNSAVED_EDIT)
        return CORRECT, NOT_FOUND, reason
    if decision == REJECT and not reason:
        raise InvalidDecision("Give a reason for rejecting this clause.")
    if decision == CORRECT:
        if not corrected_text:
            raise InvalidDecision("Type the corrected clause text.")
        if corrected_text == current_text:
            raise InvalidDecision("The corrected text is the same as the current text: accept it instead.")
    elif corrected_text and corrected_text not in untouched:
        raise UnsavedEdit(UNSAVED_EDIT)
    else:
        corrected_text = ""
    return decision, corrected_text, reason


def check_fresh(
    seen_review_id: int, seen_version: int, latest: Any, current_version: int, attempted: str
) -> None:
    """Refuse a decision taken on an older state than the one now stored."""
    latest_id = latest.id if latest is not None else 0
    if seen_review_id == latest_id and seen_version == current_version:
        return
    if latest is not None and latest_id != seen_review_id:
        raise StaleDecision(
            f"Not saved: {_recorded(latest)}, after you opened it. Your “{attempted}” was not recorded. "
            "The panel now shows the current state; decide again if you still disagree.",
            latest,
        )
    raise StaleDecision(
        "Not saved: this clause changed (a new version of its text) after you opened it. "
        "The panel now shows the current version; decide again.",
        latest,
    )


def check_not_hidden(shown: Any, attempted: str) -> None:
    """Refuse a decision on a clause that the list shows by a repeat of it (the same answer extracted by
    another run) which reviewers decided on: ``shown`` is that repeat's latest review, or None."""
    if shown is None:
        return
    raise StaleDecision(
        f"Not saved: {_recorded(shown)}, as another extraction run found it "
        "(the clause list shows that one). "
        f"Your “{attempted}” was not recorded. The panel now shows the clause as listed; decide again if you "
        "still disagree.",
        shown,
    )


def _recorded(review: Any) -> str:
    """'bob recorded “accepted” on this clause at 2026-11-22 10:56:00 UTC'."""
    when = timezone.localtime(review.created_at).strftime("%Y-%m-%d %H:%M:%S %Z") if review.created_at else ""
    return (
        f"{reviewer_name(review.reviewer)} recorded “{STATE_LABELS[review.decision]}” "
        f"on this clause at {when}"
    )


def record_decision(
    *,
    extraction_id: int,
    user: User,
    decision: str,
    reason: str = "",
    corrected_text: str = "",
    seen_review_id: int,
    seen_version: int,
) -> Review:
    """Append a Review after checking, under a lock on the Extraction row, that nothing changed.

    The extractions of the clause's type on its document are locked together: a later
    run's repeat of the same answer is listed as one item with it (``clauses.fold_repeats``), so a
    decision on a repeat that the list does not show, while the one it shows is decided, is refused
    too; else it would be hidden behind the other one, or hide it."""
    with transaction.atomic():
        extraction, shown = lock_with_repeats(extraction_id)
        reviews = (
            Review.objects.filter(extraction_id=extraction.pk).select_related("reviewer").order_by("-id")
        )
        latest = reviews.first()
        check_fresh(seen_review_id, seen_version, latest, extraction.version, decision)
        # latest_decision: a queryset annotation (clauses.with_review_state), unknown to the model's type
        if shown.pk != extraction.pk and shown.latest_decision:  # type: ignore[attr-defined]
            check_not_hidden(
                Review.objects.filter(extraction_id=shown.pk)
                .select_related("reviewer")
                .order_by("-id")
                .first(),
                decision,
            )
        current = derive_state(extraction.clause_text, reviews.filter(decision=CORRECT)[:1])
        closest = ClosestPassage.of(extraction) if not current.text else None
        decision, corrected_text, reason = validate(
            decision,
            corrected_text,
            reason,
            current.text,
            answer_is_absent(extraction.status, current.text),
            box_text=closest.quote if closest is not None else "",
        )
        review = Review.objects.create(
            extraction=extraction,
            reviewer=user,
            decision=decision,
            corrected_text=corrected_text,
            reason=reason,
            extraction_version=extraction.version,
        )
        if decision == CORRECT:  # the corrected text is a new version of the clause
            Extraction.objects.filter(pk=extraction.pk).update(version=F("version") + 1)
    return review


def _plain(text: str | None) -> str:
    """A posted text with its line ends as "\n"; a page break (a quote across pages) is a line end too."""
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n").strip()


def reviewer_name(user: User | None) -> str:
    if user is None:
        return "someone"
    full = (user.get_full_name() or "").strip() if hasattr(user, "get_full_name") else ""
    return full or getattr(user, "username", str(user))
