"""The review states of a clause and their labels: the one vocabulary that recording a decision
(``reviewer.decisions``) and listing clauses (``reviewer.clauses``, ``reviewer.rows``, exports, summaries)
share. It imports nothing of the app, so every module that needs it imports it without a cycle."""

from __future__ import annotations

ACCEPT, REJECT, CORRECT = "accept", "reject", "correct"
DECISIONS = (ACCEPT, REJECT, CORRECT)
PENDING = "pending"
STATE_LABELS = {PENDING: "not reviewed", ACCEPT: "accepted", REJECT: "rejected", CORRECT: "corrected"}
