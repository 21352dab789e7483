"""Dashboard settings with their defaults; override any key in ``settings.DASHBOARDS``."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from extraction.evaluation.stratify import SectionBounds

DEFAULTS = {
    "FRONT_MAX_PAGE": 30,  # front: first citation on page <= 30
    "BACK_AFTER_PAGE": 150,  # back: first citation on page > 150; middle otherwise
    "TARGET_PASS_RATE": 0.90,  # a stratum below this is highlighted and raises an alert
    "TARGET_SILENT_SOURCE": 0.95,  # not_found rate on known-absent pairs
    "ALERT_MIN_N": 1,  # strata with fewer rows than this raise no alert (still highlighted)
    "SNAPSHOT_MAX_AGE_HOURS": 26,  # older snapshots are recomputed on view
    "HEATMAP_ROWS": 25,  # worst (doc type, clause type) rows drawn in the heatmap
    "BENCHMARK_ENGINE": "offline",  # engine for scheduled runs
    "BENCHMARK_K": 5,
    # Documents per weekly silent-source run (None = all). A limit makes it a partial run: listed, but left
    # out of the headline figures and alerts.
    "SILENT_SOURCE_LIMIT": None,
    "EVALUATE_COMMAND": "evaluate",
    "BENCHMARK_TIME_LIMIT": 6
    * 3600,  # seconds; a run still "running" after this is marked failed (worker lost)
    # Seconds; a run still "queued" this long after it was created is marked failed (its message was lost).
    "BENCHMARK_QUEUED_MAX_AGE": 24 * 3600,
    # Folders a corpus may be imported from through the UI (the command accepts any path).
    "CORPUS_ROOTS": None,  # default: ../shared/eval and MEDIA_ROOT/corpora
    "RUNS_DIR": None,  # default: MEDIA_ROOT/benchmarks
}


def get(name: str):
    return {**DEFAULTS, **getattr(settings, "DASHBOARDS", {})}[name]


def bounds() -> SectionBounds:
    return SectionBounds(front_max=int(get("FRONT_MAX_PAGE")), back_after=int(get("BACK_AFTER_PAGE")))


def corpus_roots() -> list[Path]:
    roots = get("CORPUS_ROOTS")
    if roots is None:
        roots = [Path(settings.BASE_DIR).parent / "shared" / "eval", Path(settings.MEDIA_ROOT) / "corpora"]
    return [Path(r).resolve() for r in roots]


def runs_dir() -> Path:
    folder = get("RUNS_DIR")
    return Path(folder) if folder else Path(settings.MEDIA_ROOT) / "benchmarks"
