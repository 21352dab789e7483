"""Statements: a sentence whose wording says a clause type is there, for types the scorers barely learn.

The finder's scorers learn a type from its labelled contracts; a type held by a handful of them is
nearly never found (docs/decisions.md, extraction.finder.training.fit_scorer), though a contract that
says "the Lenders shall be third party beneficiaries of Section 8.13" states it in so many words.
``STATEMENTS`` holds such wordings, written from each type's catalog description. Each is a candidate
only: ``select`` keeps, for one set of training contracts, those of types with few labelled examples
(``FEW_EXAMPLES``) whose sentences, wherever they occur, are in contracts that hold the type at least
``MIN_CONFIDENCE`` of the time (smoothed: ``confidence``) over ``MIN_MATCHED`` contracts or more. The
kept ones and their confidence travel in the artifact; at run time a stated sentence makes a not_found
of the finder found, cited by that sentence (``extraction.finder.runtime.assess``).

Plain functions over plain text; no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

FEW_EXAMPLES = 25  # a type in fewer training contracts than this is one the scorers barely learn
MIN_MATCHED = 5  # training contracts a statement must occur in before its confidence counts
MIN_CONFIDENCE = 0.8  # smoothed share of those contracts that hold the type


@dataclass(frozen=True)
class Statement:
    """A wording that states the type; ``unless_before``: words that, in the sentence's last
    ``LOOK_BACK`` characters before the wording, turn it round ("no third Person shall be deemed a
    third-party beneficiary")."""

    pattern: re.Pattern[str]
    unless_before: re.Pattern[str] | None = None


LOOK_BACK = 80
_NEGATION = re.compile(r"\b(?:no|not|nothing|neither|nor|none)\b", re.IGNORECASE)


def _statement(pattern: str, unless_before: re.Pattern[str] | None = None) -> Statement:
    return Statement(re.compile(pattern, re.IGNORECASE), unless_before)


# Candidates by type, each from the catalog's description of the type; ``select`` decides which hold.
STATEMENTS: dict[str, Statement] = {
    "Third Party Beneficiary": _statement(
        r"\b(?:shall|will|is|are)\s+(?:also\s+)?(?:be\s+)?(?:deemed\s+(?:to\s+be\s+)?)?(?:an?\s+)?"
        r"(?:express(?:ly)?\s+|intended\s+)?(?:named\s+)?third[- ]part(?:y|ies)\s+beneficiar",
        _NEGATION,
    ),
    "Most Favored Nation": _statement(
        r"\bmost[- ]favou?red[- ](?:nation|customer|licensee|pricing|price|terms?|treatment)"
        r"|\b(?:no|not)\s+less\s+favou?rable\s+than\s+(?:those|that|the\s+terms|the\s+prices?)\s+"
        r"(?:\w+\s+){0,6}(?:any|other)\s+(?:\w+\s+){0,2}"
        r"(?:customers?|distributors?|licensees?|clients?|purchasers?|resellers?)"
    ),
    "Non-Disparagement": _statement(
        r"\bdisparag|\b(?:derogatory|negative)\s+(?:statements?|comments?|remarks?)"
    ),
    "Source Code Escrow": _statement(r"\bsource\s+code\b.{0,200}\bescrow|\bescrow\b.{0,200}\bsource\s+code"),
    "Unlimited/All-You-Can-Eat-License": _statement(
        r"\bunlimited\s+(?:number\s+of\s+)?(?:users?|copies|licen[cs]es?|seats?|installations?)"
    ),
    "No-Solicit Of Customers": _statement(r"\bsolicit\w*\b.{0,120}\b(?:customers?|clients?|accounts?)\b"),
    "No-Solicit Of Employees": _statement(r"\bsolicit\w*\b.{0,120}\b(?:employees?|personnel|staff)\b"),
    "Joint Ip Ownership": _statement(
        r"\bjointly[- ]owned|\bowned\s+jointly|\bjointly\s+own|\bjoint\s+owners|\bco-?own"
    ),
    "Rofr/Rofo/Rofn": _statement(
        r"\bright\s+of\s+first\s+(?:refusal|offer|negotiation)"
        r"|\bfirst\s+right\s+(?:of|to)\s+(?:refuse|refusal|negotiat|offer)"
    ),
    "Liquidated Damages": _statement(r"\bliquidated\s+damages"),
    "Price Restrictions": _statement(
        r"\b(?:shall|will|may)\s+not\s+(?:increase|raise|change)\s+(?:the\s+)?(?:prices?|fees?|rates?)"
    ),
    "Irrevocable Or Perpetual License": _statement(
        r"\b(?:irrevocable|perpetual)\b.{0,120}\blicen[cs]e|\blicen[cs]e\b.{0,40}\b(?:irrevocable|perpetual)"
    ),
    "Covenant Not To Sue": _statement(
        r"\b(?:shall|will|agrees?\s+(?:that\s+it\s+will|to))\s+not\s+(?:\w+\s+){0,4}"
        r"(?:sue|challenge|contest)\b|\bcovenants?\s+not\s+to\s+sue"
    ),
    "Warranty Duration": _statement(
        r"\bwarrant\w*\b.{0,150}\bperiod\s+of\s+(?:\w+\s+){0,2}\(?\d|\bwarranty\s+period"
    ),
}


def _flat(text: str) -> str:
    return " ".join(text.split())


def _states(statement: Statement, flat: str) -> bool:
    """Whether the whitespace-collapsed sentence ``flat`` holds ``statement`` the right way round."""
    for m in statement.pattern.finditer(flat):
        before = flat[max(0, m.start() - LOOK_BACK) : m.start()]
        if statement.unless_before is None or not statement.unless_before.search(before):
            return True
    return False


def states(clause_type: str, text: str) -> bool:
    """Whether ``text`` (one sentence) says ``clause_type`` is there in its type's wording."""
    statement = STATEMENTS.get(clause_type)
    return statement is not None and _states(statement, _flat(text))


def first_stated(clause_type: str, sentences: Sequence[str]) -> int | None:
    """Index of the first of ``sentences`` that states ``clause_type``; None when none does."""
    statement = STATEMENTS.get(clause_type)
    if statement is None:
        return None
    return next((i for i, text in enumerate(sentences) if _states(statement, _flat(text))), None)


def confidence(present: int, matched: int) -> float:
    """How sure a statement makes the type present: the share of training contracts it occurs in that
    hold the type, smoothed by one of each (a statement seen 5 times, always right, is 6/7 sure)."""
    return (present + 1) / (matched + 2)


def select(contracts: Iterable[tuple[Sequence[str], Mapping[str, bool]]]) -> dict[str, dict]:
    """The statements that hold on ``contracts`` (each: its sentences' texts, and per clause type
    whether its labels say present): per kept type, how many contracts it occurred in, how many of
    them hold the type, and ``confidence``. Only types present in fewer than ``FEW_EXAMPLES`` of the
    contracts are candidates: the scorers read the others' wordings well enough themselves."""
    examples: dict[str, int] = {t: 0 for t in STATEMENTS}
    matched: dict[str, int] = {t: 0 for t in STATEMENTS}
    right: dict[str, int] = {t: 0 for t in STATEMENTS}
    for sentences, present in contracts:
        flat = [_flat(text) for text in sentences]  # once a contract, not once a type
        for t, statement in STATEMENTS.items():
            if t not in present:
                continue
            examples[t] += present[t]
            if any(_states(statement, text) for text in flat):
                matched[t] += 1
                right[t] += present[t]
    kept = {}
    for t in STATEMENTS:
        sure = confidence(right[t], matched[t])
        if examples[t] < FEW_EXAMPLES and matched[t] >= MIN_MATCHED and sure >= MIN_CONFIDENCE:
            kept[t] = {"matched": matched[t], "present": right[t], "confidence": round(sure, 4)}
    return kept
