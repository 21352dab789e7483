"""Clause catalog, extraction runs and their results.

One ``ClauseTask`` row per (run, document, clause type) is the unit of work:
completion of a run is derived from these rows, never from a chord.
An ``Extraction`` is what an engine found (or reported absent) for one task; its
``Citation`` rows carry offsets the server computed and verified against the
document text. ``Checkpoint`` keeps what a long run needs to resume.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from engagements.models import Engagement
from extraction.catalog import QUESTION_PREFIX, name_key
from ingest.models import Chunk, Document

# an answer the engine is less sure of than this is flagged to reviewers (docs/decisions.md,
# extraction.models.UNSURE_BELOW)
UNSURE_BELOW = 0.7


class ClauseType(models.Model):
    class Source(models.TextChoices):
        SEED = "seed"
        CUAD = "cuad"
        CUSTOM = "custom"

    # CUAD types keep their exact CUAD names. A name is one type among those an engagement sees (the global
    # catalog and its own): two engagements may each have their own type of one name, and neither learns of
    # the other's (clause_type_name_per_engagement; the global catalog's names are one set, NULL alike).
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField()
    query = models.TextField(help_text="Retrieval query used to find candidate passages.")
    example = models.TextField(
        blank=True,
        help_text="A model clause of this type, written in contract language; "
        "searched as one more retrieval query.",
    )
    kind = models.CharField(max_length=16, default="text")  # text | value
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CUSTOM)
    active = models.BooleanField(default=True)  # global: a superuser retires a type for every engagement
    # An engagement admin's own type belongs to that engagement alone; built-in and global types have none.
    # Which types an engagement extracts is ``extraction.catalog.scope.active_types``.
    engagement = models.ForeignKey(
        Engagement, null=True, blank=True, on_delete=models.CASCADE, related_name="own_clause_types"
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["engagement", "name"], nulls_distinct=False, name="clause_type_name_per_engagement"
            )
        ]

    def __str__(self):
        return self.name

    def clean(self):
        """A name that differs from another type's only in capitals, spacing or punctuation would be the
        same type twice: extracted twice per document and counted apart on the dashboards."""
        super().clean()
        if self.pk and ClauseType.objects.filter(pk=self.pk, name=self.name).exists():
            return  # a name it already has: twins saved before this check can still have their wording edited
        key = name_key(self.name or "")
        # An engagement's own type meets the types that engagement sees; a global type meets every type,
        # since every engagement sees it (a superuser adds global types and sees every catalog).
        others = ClauseType.objects.exclude(pk=self.pk)
        if self.engagement_id is not None:
            others = others.filter(Q(engagement__isnull=True) | Q(engagement_id=self.engagement_id))
        twin = next((n for n in others.values_list("name", flat=True) if name_key(n) == key), None)
        if twin is not None:
            raise ValidationError(
                {
                    "name": f"“{twin}” is already in the catalog (names that differ only in "
                    "capitals, spacing or punctuation are the same type); edit or "
                    "reactivate it instead."
                }
            )


class ClauseTypeRetirement(models.Model):
    """An engagement admin retired a clause type for that engagement alone (``retired``), or reactivated it
    there (not ``retired``). Append-only: the latest row of an (engagement, type) is its state there, and
    every row keeps who and when. Other engagements never read these rows."""

    ENGAGEMENT_PATH = "engagement"

    engagement = models.ForeignKey(Engagement, on_delete=models.CASCADE, related_name="clause_retirements")
    clause_type = models.ForeignKey(ClauseType, on_delete=models.CASCADE, related_name="retirements")
    retired = models.BooleanField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["engagement", "clause_type", "-at", "-id"]
        indexes = [models.Index(fields=["engagement", "clause_type", "-id"], name="retirement_latest")]

    def __str__(self):
        return f"{self.engagement_id} {self.clause_type_id} {'retired' if self.retired else 'active'}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Clause type retirements are append-only: record a new one.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("Clause type retirements are append-only and cannot be deleted.")


def questions(path: str = "") -> models.Q:
    """The free questions asked with Find a clause (``catalog.is_question``: an admin's own type cannot take
    their names), as a lookup on clause types or, through ``path`` ("clause_type",
    "extractions__clause_type"), on the rows that have one: a question and its answer are not a clause of
    the catalog, so clause lists, counts and exports leave them out (``~questions(...)``)."""
    prefix = f"{path}__" if path else ""
    return models.Q(
        **{f"{prefix}source": ClauseType.Source.CUSTOM, f"{prefix}name__startswith": QUESTION_PREFIX}
    )


class ExtractionRun(models.Model):
    ENGAGEMENT_PATH = "engagement"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    class Mode(models.TextChoices):
        SYNC = "sync"
        BATCH = "batch"

    engagement = models.ForeignKey(Engagement, on_delete=models.CASCADE, related_name="runs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    engine = models.CharField(max_length=16)  # anthropic | offline
    model = models.CharField(max_length=100, blank=True)
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.SYNC)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error = models.TextField(blank=True)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)  # the rerank's included
    # The rerank (CLAUDE_RERANK, extraction.agent.rerank): its model, questions asked, of them answered by the
    # fused order (an error, a bad answer), its tokens (not in the fields above) and its cost.
    rerank_model = models.CharField(max_length=100, blank=True)
    rerank_calls = models.PositiveIntegerField(default=0)
    rerank_fallbacks = models.PositiveIntegerField(default=0)
    rerank_input_tokens = models.BigIntegerField(default=0)
    rerank_output_tokens = models.BigIntegerField(default=0)
    rerank_cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"#{self.pk} {self.engine} {self.status}"


class ClauseTask(models.Model):
    ENGAGEMENT_PATH = "run__engagement"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="tasks")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="clause_tasks")
    clause_type = models.ForeignKey(ClauseType, on_delete=models.PROTECT)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "document", "clause_type"], name="one_task_per_run_doc_type"
            )
        ]

    def __str__(self):
        return f"{self.run_id} {self.document_id} {self.clause_type_id} {self.status}"


class Extraction(models.Model):
    ENGAGEMENT_PATH = "document__engagement"

    class Status(models.TextChoices):
        FOUND = "found"
        NOT_FOUND = "not_found"
        UNVERIFIED = "unverified"

    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="extractions")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="extractions")
    clause_type = models.ForeignKey(ClauseType, on_delete=models.PROTECT, related_name="extractions")
    status = models.CharField(max_length=16, choices=Status.choices, db_index=True)
    clause_text = models.TextField(blank=True)
    engine = models.CharField(max_length=16)
    model = models.CharField(max_length=100, blank=True)
    # Idempotency: (run, document, clause type, key) where key is the first cited chunk id
    # (or "not_found"), so a rerun or a redelivered task never duplicates a clause.
    dedupe_key = models.CharField(max_length=64)
    version = models.PositiveIntegerField(default=1)  # bumped when the text is corrected by review
    verification_errors = models.JSONField(default=list, blank=True)
    # The answers the server refused before this one (``extraction.outcome.refused_attempt``): what each
    # said and cited, and why it was refused, so the audit trail keeps a retry's first try.
    refused_attempts = models.JSONField(default=list, blank=True)
    # How sure the engine is of this answer, 0..1, when it says (the offline engine's clause finder: the
    # probability that the clause is there for a found answer, that it is not for a not_found)
    confidence = models.FloatField(null=True, blank=True)
    # A not_found's closest sentence (``extraction.closest``): the one its engine, or the clause finder,
    # judged best, located as a citation is ({chunk_id, page, start, end, quote}); never a citation, never
    # counted as an answer
    closest = models.JSONField(default=dict, blank=True)
    # Found because a sentence states the type in a wording the training contracts bore out
    # (``extraction.finder.statements``): the reviewer is told why, beside how sure
    stated = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "clause_type__name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "document", "clause_type", "dedupe_key"], name="one_extraction_per_key"
            )
        ]

    def __str__(self):
        return f"{self.clause_type} · {self.status}"

    @property
    def unsure(self) -> bool:
        """The engine said how sure it is, and it is less than ``UNSURE_BELOW``: a reviewer looks first."""
        return self.confidence is not None and self.confidence < UNSURE_BELOW

    @property
    def confidence_percent(self) -> int | None:
        return None if self.confidence is None else round(100 * self.confidence)


class Citation(models.Model):
    ENGAGEMENT_PATH = "extraction__document__engagement"

    extraction = models.ForeignKey(Extraction, on_delete=models.CASCADE, related_name="citations")
    # RESTRICT: a chunk that a citation stands on is never deleted on its own (a re-chunking would have
    # dropped stored clauses' evidence silently); deleting the whole document still takes both.
    chunk = models.ForeignKey(Chunk, on_delete=models.RESTRICT, related_name="citations")
    ordinal = models.PositiveSmallIntegerField(default=0)
    page = models.PositiveIntegerField()  # computed by the server from the page table
    start = models.PositiveIntegerField()  # absolute offsets into Document.text
    end = models.PositiveIntegerField()
    quote = models.TextField()  # == document.text[start:end]
    model_page = models.PositiveIntegerField(null=True, blank=True)  # what the engine claimed, for audit

    class Meta:
        ordering = ["extraction", "ordinal"]

    def __str__(self):
        return f"{self.extraction_id} p.{self.page} [{self.start}:{self.end}]"


class Checkpoint(models.Model):
    """What a fresh session needs to resume a run on one document; written atomically."""

    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="checkpoints")
    document = models.ForeignKey(Document, on_delete=models.CASCADE)
    case_facts = models.JSONField(default=dict)
    last_record = models.JSONField(default=dict, blank=True)
    position = models.JSONField(default=dict, blank=True)
    history = models.JSONField(default=list, blank=True)  # compacted conversation, readable as a virtual file
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "document"], name="one_checkpoint_per_run_doc")]

    def __str__(self):
        return f"{self.run_id} {self.document_id}"
