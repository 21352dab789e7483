"""Benchmark sets and runs (measured against gold), cached dashboard figures and raised alerts.

Reviewer-side figures are derived from Review rows; nothing here duplicates them
except the daily ``DashboardSnapshot`` (a cache, recomputed any time).
"""

from django.conf import settings
from django.db import models

from engagements.models import Engagement
from extraction.evaluation.stratify import pass_rate, wilson_interval


class BenchmarkSet(models.Model):
    """A labelled corpus in the cuad-dev format (documents.jsonl, gold.jsonl, pdf/), registered by path."""

    name = models.CharField(max_length=200, unique=True)
    path = models.CharField(max_length=1000)
    # Blank = a shared corpus (public, no client data) that every manager may see.
    engagement = models.ForeignKey(
        Engagement, null=True, blank=True, on_delete=models.CASCADE, related_name="benchmark_sets"
    )
    credit = models.CharField(max_length=300, blank=True)  # shown wherever its figures are
    document_count = models.PositiveIntegerField(default=0)
    pair_count = models.PositiveIntegerField(default=0)
    absent_count = models.PositiveIntegerField(default=0)
    contract_types = models.JSONField(default=list, blank=True)
    gold_sha256 = models.CharField(max_length=64, blank=True)
    weekly_silent_source = models.BooleanField(
        default=True, help_text="Run the silent-source benchmark (absent pairs only) on it every week."
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class BenchmarkRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    class Scope(models.TextChoices):
        ALL = "all", "all pairs"
        ABSENT = "absent", "absent pairs (silent source)"

    class Trigger(models.TextChoices):
        UI = "ui"
        COMMAND = "command"
        SCHEDULE = "schedule"
        IMPORT = "import", "imported predictions"

    benchmark_set = models.ForeignKey(BenchmarkSet, on_delete=models.CASCADE, related_name="runs")
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.ALL)
    trigger = models.CharField(max_length=8, choices=Trigger.choices, default=Trigger.UI)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED, db_index=True)
    engine = models.CharField(max_length=16, blank=True)
    model = models.CharField(max_length=100, blank=True)
    k = models.PositiveSmallIntegerField(default=5)
    limit = models.PositiveIntegerField(null=True, blank=True)
    out_dir = models.CharField(max_length=1000, blank=True)
    metrics = models.JSONField(default=dict, blank=True)  # metrics.json of the evaluate command, as written
    # Our own tallies over the imported outcomes (same criterion as the strata).
    n = models.PositiveIntegerField(default=0)
    passes = models.PositiveIntegerField(default=0)
    present_n = models.PositiveIntegerField(default=0)
    present_passes = models.PositiveIntegerField(default=0)
    silent_n = models.PositiveIntegerField(default=0)
    silent = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.benchmark_set} #{self.pk} {self.status}"

    @property
    def pass_rate(self):
        return pass_rate(self.passes, self.n)

    @property
    def hit_rate(self):
        return pass_rate(self.present_passes, self.present_n)

    @property
    def silent_rate(self):
        return pass_rate(self.silent, self.silent_n)

    @property
    def is_active(self) -> bool:
        return self.status in {self.Status.QUEUED, self.Status.RUNNING}


class BenchmarkOutcome(models.Model):
    """One (document, clause type) pair of a run, judged against gold."""

    run = models.ForeignKey(BenchmarkRun, on_delete=models.CASCADE, related_name="outcomes")
    doc = models.CharField(max_length=500)
    doc_type = models.CharField(max_length=100, blank=True)
    clause_type = models.CharField(max_length=100)
    present = models.BooleanField()
    status = models.CharField(max_length=16)  # found | not_found | unverified | missing
    page = models.PositiveIntegerField(null=True, blank=True)  # first citation page (gold page if none)
    page_from = models.CharField(max_length=8, blank=True)  # citation | gold | ""
    passed = models.BooleanField()
    best_jaccard = models.FloatField(null=True, blank=True)
    clause_text = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "doc", "clause_type"]
        constraints = [
            models.UniqueConstraint(fields=["run", "doc", "clause_type"], name="one_outcome_per_pair")
        ]

    def __str__(self):
        return f"{self.doc} {self.clause_type} {self.status}"


class DashboardSnapshot(models.Model):
    """Reviewer-side figures of one engagement (raw counts, unfiltered), refreshed daily by beat."""

    ENGAGEMENT_PATH = "engagement"

    engagement = models.ForeignKey(Engagement, on_delete=models.CASCADE, related_name="dashboard_snapshots")
    computed_at = models.DateTimeField(db_index=True)
    bounds = models.JSONField(default=dict)  # the page-section bounds the counts were made with
    figures = models.JSONField(default=dict)  # {"strata": [...], "silent": {...}}

    class Meta:
        ordering = ["-computed_at", "-id"]
        indexes = [models.Index(fields=["engagement", "-computed_at"])]

    def __str__(self):
        return f"{self.engagement_id} {self.computed_at}"


class Alert(models.Model):
    class Kind(models.TextChoices):
        STRATUM = "stratum", "stratum under target"
        SILENT_SOURCE = "silent", "silent source under target"

    class Source(models.TextChoices):
        REVIEWS = "reviews", "reviewer decisions"
        BENCHMARK = "benchmark", "benchmark"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    source = models.CharField(max_length=10, choices=Source.choices)
    engagement = models.ForeignKey(
        Engagement, null=True, blank=True, on_delete=models.CASCADE, related_name="dashboard_alerts"
    )
    benchmark_set = models.ForeignKey(
        BenchmarkSet, null=True, blank=True, on_delete=models.CASCADE, related_name="alerts"
    )
    run = models.ForeignKey(
        BenchmarkRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="alerts"
    )
    key = models.CharField(max_length=400)  # "doc_type|clause_type|section", or "silent"
    subject = models.CharField(
        max_length=300, blank=True
    )  # "Reviews · Acme audit", "Benchmark · cuad-dev run #4"
    message = models.CharField(max_length=600)
    n = models.PositiveIntegerField(default=0)
    passes = models.PositiveIntegerField(default=0)
    threshold = models.FloatField()
    raised_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-raised_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "source", "engagement", "benchmark_set", "key"],
                condition=models.Q(resolved_at__isnull=True),
                nulls_distinct=False,
                name="one_open_alert_per_subject",
            )
        ]

    def __str__(self):
        return f"{self.subject}: {self.message}" if self.subject else self.message

    @property
    def rate(self):
        return pass_rate(self.passes, self.n)

    @property
    def interval(self):
        return wilson_interval(self.passes, self.n)
