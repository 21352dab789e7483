"""Loading the rows the dashboard figures are made of, and handing them to the pure core.

Reviewer side: the latest review of every extraction (accept = pass; reject or correct = fail, except a
correction that restates the engine's own answer).
Benchmark side: the outcomes of the latest finished full run of every visible benchmark set (a run
limited to the first N documents measures a part of the set and never stands in for the whole); sets
that hold the same corpus (same gold) count once, from the latest run of any of them.
Counts are kept raw ({doc_type, clause_type, section, n, passes}) so that figures of several
engagements (or a cached snapshot and a live one) add up before intervals are computed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from dashboards import conf
from dashboards.models import BenchmarkOutcome, BenchmarkRun, BenchmarkSet, DashboardSnapshot
from engagements.models import Engagement
from extraction.evaluation import stratify
from extraction.models import Citation, Extraction, questions
from reviewer.models import Review

INVENTED_TEXT_KEEP = 300


@dataclass
class Filters:
    engagement_ids: list[int]
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    engine: str = ""
    model: str = ""
    run_id: int | None = None

    @property
    def narrowed(self) -> bool:
        """True when anything beyond the engagement choice narrows the figures (no cached snapshot then)."""
        return bool(self.date_from or self.date_to or self.engine or self.model)

    def date_range(self, prefix: str) -> Q:
        q = Q()
        if self.date_from:
            q &= Q(**{f"{prefix}__date__gte": self.date_from})
        if self.date_to:
            q &= Q(**{f"{prefix}__date__lte": self.date_to})
        return q


# --------------------------------------------------------------------------- reviewer side
def _first_page():
    return Subquery(
        Citation.objects.filter(extraction=OuterRef("extraction_id"))
        .order_by("ordinal", "id")
        .values("page")[:1]
    )


def _extractions(engagement_ids, filters: Filters | None):
    """The engagements' clauses (the answers to free questions are not clauses of the catalog)."""
    qs = Extraction.objects.filter(document__engagement_id__in=engagement_ids).exclude(
        questions("clause_type")
    )
    if filters:
        qs = qs.filter(filters.date_range("created_at"))
        if filters.engine:
            qs = qs.filter(engine=filters.engine)
        if filters.model:
            qs = qs.filter(model=filters.model)
    return qs


def latest_reviews(extractions) -> list[dict]:
    """The latest review (highest id, as on the review screens) of each extraction in ``extractions``,
    flattened to plain rows, with the extraction's standing correction (its latest "correct" review's
    text, "" if none): an accept after a correction confirms the reviewer's text, not the engine's."""
    correction = (
        Review.objects.filter(extraction=OuterRef("extraction_id"), decision=Review.Decision.CORRECT)
        .order_by("-id")
        .values("corrected_text")[:1]
    )
    rows = (
        Review.objects.filter(extraction__in=extractions)
        .order_by("extraction_id", "-id")  # the latest recorded, as the review screens show it
        .distinct("extraction_id")
        .annotate(first_page=_first_page(), correction=Subquery(correction))
        .values(
            "extraction_id",
            "decision",
            "correction",
            "extraction__status",
            "extraction__clause_text",
            "extraction__document_id",
            "extraction__document__doc_type",
            "extraction__clause_type__name",
            "first_page",
        )
    )
    return [
        {
            "extraction": r["extraction_id"],
            "decision": r["decision"],
            "corrected_text": r["correction"] or "",
            "status": r["extraction__status"],
            "clause_text": r["extraction__clause_text"] or "",
            "document": r["extraction__document_id"],
            "doc_type": r["extraction__document__doc_type"] or "",
            "clause_type": r["extraction__clause_type__name"],
            "page": r["first_page"],
        }
        for r in rows
    ]


def reviewer_counts(engagement_ids, filters: Filters | None = None, bounds=None) -> dict:
    """Raw stratum counts and silent-source counts of the reviewer side for some engagements."""
    bounds = bounds or conf.bounds()
    reviewed = latest_reviews(_extractions(engagement_ids, filters))
    for row in reviewed:
        row["passed"] = stratify.review_passes(
            row["decision"],
            corrected=bool(row["corrected_text"]),
            restated=stratify.restates(row["corrected_text"], row["status"], row["clause_text"]),
        )
    counts = stratify.count_strata(reviewed, bounds)
    strata = [
        {"doc_type": k[0], "clause_type": k[1], "section": k[2], "n": n, "passes": p}
        for k, (n, p) in sorted(counts.items())
    ]

    # Absence is a fact about the document: learnt from every review in the engagement, whatever the filters.
    everything = (
        reviewed
        if filters is None or not filters.narrowed
        else latest_reviews(_extractions(engagement_ids, None))
    )
    absent = stratify.absent_pairs(everything)
    observations = []
    if absent:
        answers = (
            _extractions(engagement_ids, filters)
            .filter(document_id__in={doc for doc, _ in absent})
            .annotate(
                first_page=Subquery(
                    Citation.objects.filter(extraction=OuterRef("pk"))
                    .order_by("ordinal", "id")
                    .values("page")[:1]
                )
            )
            .values(
                "id",
                "document_id",
                "document__title",
                "document__engagement_id",
                "clause_type__name",
                "status",
                "clause_text",
                "engine",
                "model",
                "first_page",
                "created_at",
            )
            .order_by("document__title", "clause_type__name", "id")
        )
        for a in answers:
            if (a["document_id"], a["clause_type__name"]) in absent:
                observations.append(
                    {
                        "extraction": a["id"],
                        "document": a["document_id"],
                        "document_title": a["document__title"],
                        "engagement": a["document__engagement_id"],
                        "clause_type": a["clause_type__name"],
                        "status": a["status"],
                        "engine": a["engine"],
                        "model": a["model"],
                        "page": a["first_page"],
                        "clause_text": (a["clause_text"] or "")[:INVENTED_TEXT_KEEP],
                        "created_at": a["created_at"].isoformat(),
                    }
                )
    silent = stratify.silent_source(observations)
    return {
        "strata": strata,
        "silent": silent.as_counts(),
        "absent_pairs": len(absent),
        "reviewed": len(reviewed),
    }


def snapshot_is_fresh(snapshot: DashboardSnapshot | None, now=None) -> bool:
    if snapshot is None:
        return False
    max_age = dt.timedelta(hours=float(conf.get("SNAPSHOT_MAX_AGE_HOURS")))
    b = conf.bounds()
    return (
        snapshot.bounds == {"front_max": b.front_max, "back_after": b.back_after}
        and (now or timezone.now()) - snapshot.computed_at <= max_age
    )


def latest_snapshots(engagement_ids) -> dict[int, DashboardSnapshot]:
    rows = (
        DashboardSnapshot.objects.filter(engagement_id__in=engagement_ids)
        .order_by("engagement_id", "-computed_at", "-id")
        .distinct("engagement_id")
    )
    return {s.engagement_id: s for s in rows}


def take_snapshot(engagement: Engagement) -> DashboardSnapshot:
    b = conf.bounds()
    return DashboardSnapshot.objects.create(
        engagement=engagement,
        computed_at=timezone.now(),
        bounds={"front_max": b.front_max, "back_after": b.back_after},
        figures=reviewer_counts([engagement.pk], None, b),
    )


@dataclass
class ReviewerFigures:
    strata: list = field(default_factory=list)  # list[stratify.Stratum], worst first
    silent: stratify.SilentSource = field(default_factory=stratify.SilentSource)
    reviewed: int = 0
    absent_pairs: int = 0
    as_of: dt.datetime | None = None  # oldest snapshot used; None when computed live


def reviewer_figures(filters: Filters) -> ReviewerFigures:
    """Reviewer figures over the filtered engagements: from fresh daily snapshots when nothing narrows
    the view, else computed live."""
    parts, as_of = [], None
    if filters.narrowed:
        parts.append(reviewer_counts(filters.engagement_ids, filters))
    else:
        snapshots = latest_snapshots(filters.engagement_ids)
        live = []
        for engagement_id in filters.engagement_ids:
            snapshot = snapshots.get(engagement_id)
            if snapshot is not None and snapshot_is_fresh(snapshot):
                parts.append(snapshot.figures)
                as_of = snapshot.computed_at if as_of is None else min(as_of, snapshot.computed_at)
            else:
                live.append(engagement_id)
        if live:
            parts.append(reviewer_counts(live, None))
    return combine(parts, as_of=None if filters.narrowed else as_of)


def combine(parts, as_of=None) -> ReviewerFigures:
    """Add up raw reviewer counts (snapshots or live) into strata and a silent-source figure."""
    target, silent_target = float(conf.get("TARGET_PASS_RATE")), float(conf.get("TARGET_SILENT_SOURCE"))
    counts = stratify.merge_counts(*(p["strata"] for p in parts))
    return ReviewerFigures(
        strata=stratify.build_strata(counts, target),
        silent=stratify.merge_silent((p["silent"] for p in parts), silent_target),
        reviewed=sum(p.get("reviewed", 0) for p in parts),
        absent_pairs=sum(p.get("absent_pairs", 0) for p in parts),
        as_of=as_of,
    )


# --------------------------------------------------------------------------- benchmark side
def visible_sets(engagement_ids):
    """Shared sets (no engagement) and those of the given engagements."""
    return BenchmarkSet.objects.filter(Q(engagement__isnull=True) | Q(engagement_id__in=engagement_ids))


def _runs(sets, filters: Filters):
    qs = BenchmarkRun.objects.filter(benchmark_set__in=sets, status=BenchmarkRun.Status.DONE)
    qs = qs.filter(filters.date_range("finished_at"))
    if filters.engine:
        qs = qs.filter(engine=filters.engine)
    if filters.model:
        qs = qs.filter(model=filters.model)
    return qs


def latest_runs(sets, filters: Filters, scope: str | None = BenchmarkRun.Scope.ALL) -> list[BenchmarkRun]:
    """The latest finished full run (no document limit) per set matching the filters (of ``scope``; any
    scope when None)."""
    qs = _runs(sets, filters)
    if filters.run_id:
        return list(qs.filter(pk=filters.run_id).select_related("benchmark_set"))
    qs = qs.filter(limit__isnull=True)
    if scope:
        qs = qs.filter(scope=scope)
    return one_per_corpus(
        qs.order_by("benchmark_set_id", "-finished_at", "-id")
        .distinct("benchmark_set_id")
        .select_related("benchmark_set")
    )


def one_per_corpus(runs) -> list[BenchmarkRun]:
    """The latest of runs whose sets hold the same corpus (same gold_sha256: one corpus imported under two
    names), so that its pairs are counted once when the figures of several sets are added up."""
    latest: dict[object, BenchmarkRun] = {}
    for run in runs:
        key = run.benchmark_set.gold_sha256 or run.benchmark_set_id
        kept = latest.get(key)
        if kept is None or (run.finished_at, run.pk) > (kept.finished_at, kept.pk):
            latest[key] = run
    return sorted(latest.values(), key=lambda r: (r.benchmark_set.name, r.pk))


@dataclass
class BenchmarkFigures:
    strata: list = field(default_factory=list)
    silent: stratify.SilentSource = field(default_factory=stratify.SilentSource)
    runs: list = field(default_factory=list)  # the runs the strata come from
    silent_runs: list = field(default_factory=list)
    credits: list = field(default_factory=list)


def outcome_rows(runs) -> list[Mapping[str, Any]]:
    return list(
        BenchmarkOutcome.objects.filter(run__in=runs).values(
            "run_id",
            "doc",
            "doc_type",
            "clause_type",
            "present",
            "status",
            "page",
            "passed",
            "clause_text",
            "run__benchmark_set__name",
        )
    )


def benchmark_figures(filters: Filters) -> BenchmarkFigures:
    target, silent_target = float(conf.get("TARGET_PASS_RATE")), float(conf.get("TARGET_SILENT_SOURCE"))
    sets = visible_sets(filters.engagement_ids)
    runs = latest_runs(sets, filters)
    silent_runs = latest_runs(sets, filters, scope=None)
    strata = stratify.stratify(outcome_rows(runs), conf.bounds(), target)
    observations = [
        {
            "run": r["run_id"],
            "set": r["run__benchmark_set__name"],
            "doc": r["doc"],
            "doc_type": r["doc_type"],
            "clause_type": r["clause_type"],
            "status": r["status"],
            "page": r["page"],
            "clause_text": r["clause_text"][:INVENTED_TEXT_KEEP],
        }
        for r in outcome_rows(silent_runs)
        if not r["present"]
    ]
    credits = sorted({r.benchmark_set.credit for r in runs + silent_runs if r.benchmark_set.credit})
    return BenchmarkFigures(
        strata=strata,
        silent=stratify.silent_source(observations, silent_target),
        runs=runs,
        silent_runs=silent_runs,
        credits=credits,
    )


def run_strata(run: BenchmarkRun) -> list:
    return stratify.stratify(outcome_rows([run]), conf.bounds(), float(conf.get("TARGET_PASS_RATE")))


def run_silent(run: BenchmarkRun) -> stratify.SilentSource:
    rows = [
        dict(r, clause_text=r["clause_text"][:INVENTED_TEXT_KEEP])
        for r in outcome_rows([run])
        if not r["present"]
    ]
    return stratify.silent_source(rows, float(conf.get("TARGET_SILENT_SOURCE")))


# --------------------------------------------------------------------------- both, side by side
@dataclass
class StratumPair:
    doc_type: str
    clause_type: str
    section: str
    reviews: stratify.Stratum | None = None
    benchmark: stratify.Stratum | None = None

    @property
    def section_label(self) -> str:
        return stratify.SECTION_LABELS.get(self.section, self.section)

    @property
    def below_target(self) -> bool:
        return any(s is not None and s.below_target for s in (self.reviews, self.benchmark))

    def sort_key(self):
        keys = [(s.rate, s.high, -s.n) for s in (self.reviews, self.benchmark) if s is not None and s.n]
        return (min(keys) if keys else (2.0, 1.0, 0)), (self.doc_type, self.clause_type, self.section)


def side_by_side(reviews: list, benchmark: list) -> list[StratumPair]:
    """Join the strata of both sources on (doc_type, clause_type, section), worst of either first."""
    pairs: dict[tuple, StratumPair] = {}
    for source, strata in (("reviews", reviews), ("benchmark", benchmark)):
        for s in strata:
            pair = pairs.setdefault(s.key, StratumPair(*s.key))
            setattr(pair, source, s)
    return sorted(pairs.values(), key=StratumPair.sort_key)
