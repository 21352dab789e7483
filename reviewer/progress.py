"""Review progress of an engagement: per clause type and per reviewer, reviewed / total.

The unit is a clause of a contract: a (document, clause type) pair that an extraction answered (found, not
found or unverified; repeats from later runs count once). It is reviewed once any of its answers has a
review; a reviewer's count is the pairs they decided at least once. Free questions are not clauses and are
left out (``extraction.models.questions``)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from extraction.models import Extraction, questions
from reviewer.models import Review


@dataclass
class Progress:
    total: int = 0
    reviewed: int = 0
    by_type: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (reviewed, total)

    @property
    def percent(self) -> int:
        return round(100 * self.reviewed / self.total) if self.total else 0


def engagement_progress(engagement) -> tuple[Progress, dict[str, Progress]]:
    """(the engagement's progress, {reviewer username: their progress}), each by clause type name."""
    pairs = set(
        Extraction.objects.filter(document__engagement=engagement)
        .exclude(questions("clause_type"))
        .values_list("document_id", "clause_type__name")
        .distinct()
    )
    decided = set(
        Review.objects.filter(extraction__document__engagement=engagement)
        .exclude(questions("extraction__clause_type"))
        .values_list("reviewer__username", "extraction__document_id", "extraction__clause_type__name")
        .distinct()
    )
    totals: dict[str, int] = defaultdict(int)
    for _, name in pairs:
        totals[name] += 1
    overall = _progress(totals, {(d, n) for _, d, n in decided})
    mine: dict[str, set] = defaultdict(set)
    for who, d, n in decided:
        mine[who].add((d, n))
    return overall, {who: _progress(totals, done) for who, done in sorted(mine.items())}


def _progress(totals: dict[str, int], done: set[tuple[int, str]]) -> Progress:
    reviewed: dict[str, int] = defaultdict(int)
    for _, name in done:
        reviewed[name] += 1
    by_type = {name: (reviewed.get(name, 0), totals[name]) for name in sorted(totals)}
    return Progress(sum(totals.values()), len(done), by_type)
