"""Stratified accuracy and the silent-source rate: plain functions over plain rows.

No Django here. Callers (the dashboards app) load rows from the database or from
benchmark files, and feed them in; everything below is arithmetic on those rows.

Vocabulary
- A *stratum* is one (doc_type, clause_type, page section) cell.
- The *page section* of an outcome comes from the page of its first citation:
  front (page <= front_max), back (page > back_after), middle otherwise, and
  ``none`` when there is no page at all (a not_found answer cites nothing).
- A *pass rate* is passes / n; its Wilson score interval keeps a 1-of-1 stratum
  from reading as certain (1/1 -> 21%..100% at 95%).
- The *silent-source rate* is the share of known-absent (document, clause type)
  pairs where the engine correctly answered not_found; every other answer there is
  an *invented* clause. A pair that never got an answer (status failed or missing)
  is *not run*: kept apart, outside the rate.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

FRONT, MIDDLE, BACK, NO_PAGE = "front", "middle", "back", "none"
SECTIONS = (FRONT, MIDDLE, BACK, NO_PAGE)
SECTION_LABELS = {FRONT: "front", MIDDLE: "middle", BACK: "back", NO_PAGE: "no citation"}

NOT_FOUND = "not_found"
NOT_RUN = frozenset({"failed", "missing"})  # benchmark pairs with no answer (e.g. a document never ready)
Z_95 = 1.959963984540054


# --------------------------------------------------------------------------- page sections
@dataclass(frozen=True)
class SectionBounds:
    """front: page <= front_max; back: page > back_after; middle in between."""

    front_max: int = 30
    back_after: int = 150

    def __post_init__(self):
        if self.front_max < 0 or self.back_after < self.front_max:
            raise ValueError(f"need 0 <= front_max <= back_after, got {self.front_max}, {self.back_after}")


def page_section(page: int | None, bounds: SectionBounds = SectionBounds()) -> str:
    if page is None:
        return NO_PAGE
    if page <= bounds.front_max:
        return FRONT
    if page > bounds.back_after:
        return BACK
    return MIDDLE


# --------------------------------------------------------------------------- intervals
def pass_rate(passes: int, n: int) -> float | None:
    return passes / n if n else None


def wilson_interval(passes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when there is no data."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= passes <= n:
        raise ValueError(f"passes must lie in 0..n, got {passes} of {n}")
    p = passes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = (z / denominator) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # Clamp float noise at the ends (p = 0 or 1 give exactly 0 or 1 in exact arithmetic).
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    high = 1.0 if passes == n else min(1.0, centre + half)
    return low, high


# --------------------------------------------------------------------------- outcome rules
def engine_answer(extraction_status: str, clause_text: str = "") -> str:
    """The engine's answer as a reviewer would type it: "not_found" for a not_found extraction, else its
    text."""
    return NOT_FOUND if extraction_status == NOT_FOUND else _plain(clause_text)


def restates(corrected_text: str, extraction_status: str, clause_text: str = "") -> bool:
    """Is ``corrected_text`` the engine's own answer, its spacing aside? A not_found extraction
    "corrected" to "not_found", a text corrected away and back, or one whose PDF line breaks a reviewer
    joined, changed nothing the engine got wrong (the clause list shows them as the same answer too).
    Any other difference, capitals included, is a correction."""
    corrected = _plain(corrected_text)
    return bool(corrected) and corrected.split() == engine_answer(extraction_status, clause_text).split()


def _plain(text: str) -> str:
    return (text or "").replace("\r\n", "\n").strip()


def review_passes(decision: str, corrected: bool = False, restated: bool = False) -> bool:
    """Latest reviewer decision -> pass/fail: the engine's answer passes when the reviewers left it standing.

    Accept passes and reject fails. A standing correction (``corrected``: the clause's latest "correct"
    review) replaces the engine's answer, so a correct, or an accept after it, fails, unless that
    correction ``restated`` the engine's own answer (see :func:`restates`): then it passes.
    """
    if decision == "accept":
        return not corrected or restated
    if decision == "correct":
        return restated
    if decision == "reject":
        return False
    raise ValueError(f"unknown review decision {decision!r}")


def answer_is_absent(extraction_status: str, standing_text: str) -> bool:
    """Does the answer as it stands say the clause is not in the document? ``standing_text`` is the standing
    correction if any (else "", or the engine's own text: the engine's status decides then); absent when
    not_found."""
    standing = (standing_text or "").strip()
    return standing == NOT_FOUND if standing else extraction_status == NOT_FOUND


def marks_absent(extraction_status: str, decision: str, corrected_text: str = "") -> bool:
    """Did the reviewers mark the clause type absent from the document?

    ``corrected_text`` is the clause's standing correction (its latest "correct" review), if any. The answer
    a decision judges is that correction, else the engine's answer. Accepting or correcting to an answer of
    not_found marks the clause absent: an accepted not_found extraction, a correction to exactly
    "not_found", or an accept after such a correction.
    """
    return decision in ("accept", "correct") and answer_is_absent(extraction_status, corrected_text)


def marks_present(extraction_status: str, decision: str, corrected_text: str = "") -> bool:
    """Did the reviewers confirm the clause is in the document?

    Yes when they accept or correct to an answer other than not_found (an accepted found or unverified
    extraction, a correction to a text, an accept after it), or reject an answer of not_found (rejecting
    "not found" means "it is there"). A rejected clause text says nothing about presence.
    """
    if decision in ("accept", "correct"):
        return not answer_is_absent(extraction_status, corrected_text)
    return decision == "reject" and answer_is_absent(extraction_status, corrected_text)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans({c: " " for c in string.punctuation})


def word_set(text: str) -> frozenset[str]:
    """CUAD's answer normalisation (lower case, no punctuation, no articles) as a set of words."""
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION))
    return frozenset(text.split())


def jaccard(a: str, b: str) -> float:
    left, right = word_set(a), word_set(b)
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def best_jaccard(text: str, gold_spans: Iterable[str]) -> float:
    return max((jaccard(text, span) for span in gold_spans), default=0.0)


LIST_SEPARATOR = "; "  # a list answer (the parties) joins its cited values with this


def answer_texts(clause_text: str, quotes: Sequence[str] = ()) -> list[str]:
    """What an answer is judged by: a list answer, whose clause text is its cited values joined by
    ``LIST_SEPARATOR``, value by value (CUAD's gold holds each party as a span of its own); any other
    answer by its clause text."""
    if len(quotes) > 1 and clause_text == LIST_SEPARATOR.join(quotes):
        return list(quotes)
    return [clause_text]


def citation_quotes(citations: Iterable[Mapping]) -> list[str]:
    """The quotes of an answer's citations (as ``predictions.jsonl`` holds them), in order."""
    return [str(c.get("quote", "")) for c in citations]


def best_answer_jaccard(clause_text: str, quotes: Sequence[str], gold_spans: Sequence[str]) -> float:
    return max(best_jaccard(text, gold_spans) for text in answer_texts(clause_text, quotes))


def benchmark_passes(
    present: bool,
    status: str,
    clause_text: str,
    gold_spans: Sequence[str],
    threshold: float = 0.5,
    quotes: Sequence[str] = (),
) -> bool:
    """The CUAD criterion: a present pair passes when found with Jaccard >= 0.5 against some gold span
    (a list answer: one of its values, ``answer_texts``); an absent pair passes when the answer is
    not_found."""
    if not present:
        return status == NOT_FOUND
    return status == "found" and best_answer_jaccard(clause_text, quotes, gold_spans) >= threshold


# --------------------------------------------------------------------------- strata
@dataclass
class Stratum:
    doc_type: str
    clause_type: str
    section: str
    n: int = 0
    passes: int = 0
    target: float = 0.90
    low: float = field(init=False, default=0.0)
    high: float = field(init=False, default=1.0)

    def __post_init__(self):
        self.low, self.high = wilson_interval(self.passes, self.n)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.doc_type, self.clause_type, self.section

    @property
    def fails(self) -> int:
        return self.n - self.passes

    @property
    def rate(self) -> float | None:
        return pass_rate(self.passes, self.n)

    @property
    def below_target(self) -> bool:
        return self.n > 0 and self.passes / self.n < self.target - 1e-12

    @property
    def section_label(self) -> str:
        return SECTION_LABELS.get(self.section, self.section)

    def as_counts(self) -> dict:
        return {
            "doc_type": self.doc_type,
            "clause_type": self.clause_type,
            "section": self.section,
            "n": self.n,
            "passes": self.passes,
        }


def count_strata(rows: Iterable[Mapping], bounds: SectionBounds = SectionBounds()) -> dict[tuple, list[int]]:
    """rows: mappings with doc_type, clause_type, page (or None) and passed -> {key: [n, passes]}."""
    counts: dict[tuple, list[int]] = {}
    for row in rows:
        key = (row["doc_type"] or "", row["clause_type"], page_section(row.get("page"), bounds))
        cell = counts.setdefault(key, [0, 0])
        cell[0] += 1
        cell[1] += 1 if row["passed"] else 0
    return counts


def merge_counts(*count_rows: Iterable[Mapping]) -> dict[tuple, list[int]]:
    """Add up stored stratum counts ({doc_type, clause_type, section, n, passes}) from several sources."""
    merged: dict[tuple, list[int]] = {}
    for rows in count_rows:
        for row in rows:
            cell = merged.setdefault((row["doc_type"], row["clause_type"], row["section"]), [0, 0])
            cell[0] += row["n"]
            cell[1] += row["passes"]
    return merged


def worst_first(strata: Iterable[Stratum]) -> list[Stratum]:
    """Lowest pass rate first; among equals the one we are surest is bad (lowest upper bound, most rows)."""
    return sorted(strata, key=lambda s: (s.rate if s.rate is not None else 2.0, s.high, -s.n, s.key))


def build_strata(counts: Mapping[tuple, list[int]], target: float = 0.90) -> list[Stratum]:
    return worst_first(
        Stratum(doc_type, clause_type, section, n=n, passes=passes, target=target)
        for (doc_type, clause_type, section), (n, passes) in counts.items()
    )


def stratify(
    rows: Iterable[Mapping], bounds: SectionBounds = SectionBounds(), target: float = 0.90
) -> list[Stratum]:
    """Outcome rows -> strata, worst first."""
    return build_strata(count_strata(rows, bounds), target)


def totals(strata: Iterable[Stratum]) -> tuple[int, int]:
    n = passes = 0
    for s in strata:
        n += s.n
        passes += s.passes
    return n, passes


def below_target(strata: Iterable[Stratum], min_n: int = 1) -> list[Stratum]:
    return [s for s in strata if s.below_target and s.n >= min_n]


# --------------------------------------------------------------------------- silent source
@dataclass
class SilentSource:
    n: int = 0
    silent: int = 0
    invented: list = field(default_factory=list)
    target: float = 0.95
    not_run: list = field(default_factory=list)  # pairs with no answer at all, outside n

    @property
    def rate(self) -> float | None:
        return pass_rate(self.silent, self.n)

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.silent, self.n)

    @property
    def below_target(self) -> bool:
        return self.n > 0 and self.silent / self.n < self.target - 1e-12

    def as_counts(self) -> dict:
        return {
            "n": self.n,
            "silent": self.silent,
            "invented": list(self.invented),
            "not_run": list(self.not_run),
        }


def absent_pairs(latest_reviews: Iterable[Mapping]) -> set[tuple]:
    """(document, clause_type) pairs a reviewer marked absent and nobody confirmed present
    (:func:`marks_absent`, :func:`marks_present`: a rejected not_found or an accepted unverified clause
    confirms presence).

    latest_reviews: one mapping per reviewed extraction with document, clause_type, status,
    decision (its latest review) and corrected_text (its standing correction, "" if none).
    """
    absent, present = set(), set()
    for row in latest_reviews:
        pair = (row["document"], row["clause_type"])
        corrected = row.get("corrected_text") or ""
        if marks_absent(row["status"], row["decision"], corrected):
            absent.add(pair)
        elif marks_present(row["status"], row["decision"], corrected):
            present.add(pair)
    return absent - present


def silent_source(observations: Iterable[Mapping], target: float = 0.95) -> SilentSource:
    """observations: answers given on known-absent pairs, each with a status; the rest is carried along
    into ``invented`` for every answer that was not not_found, or into ``not_run`` (outside ``n``) for a
    pair that got no answer at all (status failed or missing)."""
    result = SilentSource(target=target)
    for row in observations:
        if row["status"] in NOT_RUN:
            result.not_run.append(dict(row))
            continue
        result.n += 1
        if row["status"] == NOT_FOUND:
            result.silent += 1
        else:
            result.invented.append(dict(row))
    return result


def merge_silent(parts: Iterable[Mapping], target: float = 0.95) -> SilentSource:
    """Add up stored silent-source counts ({n, silent, invented, not_run})."""
    result = SilentSource(target=target)
    for part in parts:
        result.n += part["n"]
        result.silent += part["silent"]
        result.invented.extend(part.get("invented", []))
        result.not_run.extend(part.get("not_run", []))
    return result
