"""The review states of a clause and their labels: the one vocabulary that recording a decision
(``reviewer.decisions``) and listing clauses (``reviewer.clauses``, ``reviewer.rows``, exports, summaries)
share. It imports nothing of the reviewer app, so every module of it that needs it imports it without a
cycle."""

from __future__ import annotations

from extraction.evaluation.stratify import NOT_FOUND

ACCEPT, REJECT, CORRECT = "accept", "reject", "correct"
DECISIONS = (ACCEPT, REJECT, CORRECT)
PENDING = "pending"
STATE_LABELS = {PENDING: "not reviewed", ACCEPT: "accepted", REJECT: "rejected", CORRECT: "corrected"}
# The `n` key's decision ("Not in this contract" on the review page) is recorded as a correction to
# "not_found": the history names it for what the reviewer pressed, not "Correct".
NOT_IN_CONTRACT = "Not in this contract"


def decision_label(decision: str, corrected_text: str, display: str) -> str:
    """A recorded decision in words, as the history shows it: ``display`` (Accept, Reject, Correct) unless it
    marked the clause not in the contract."""
    if decision == CORRECT and (corrected_text or "").strip() == NOT_FOUND:
        return NOT_IN_CONTRACT
    return display
