"""Bulk runs through the Message Batches API: one ``BatchJob`` per submitted batch, one
``BatchItem`` per ``ClauseTask`` of a bulk run.

A bulk run is an ``ExtractionRun`` with ``mode=batch``; its ``ClauseTask`` rows stay
the unit of work (the run's status is derived from them). A ``BatchItem`` follows one
task through the batches: which batch it is in, how many batches it has been in,
how many failed in a row, and the agent's conversation (``snapshot``) the next
request continues from. It maps to its task through ``custom_id``.
"""

from django.db import models

from extraction.models import ClauseTask, ExtractionRun


class BatchJob(models.Model):
    ENGAGEMENT_PATH = "run__engagement"

    class State(models.TextChoices):
        SUBMITTING = "submitting"  # row written, the API call under way
        IN_PROGRESS = "in_progress"  # the API is processing it
        CANCELING = "canceling"
        ENDED = "ended"  # results ready, not harvested yet
        HARVESTING = "harvesting"
        HARVESTED = "harvested"
        FAILED = "failed"  # the API refused the batch (its requests went back to pending)
        LOST = "lost"  # the submitting process died before the batch id was saved

    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="batch_jobs")
    sequence = models.PositiveIntegerField()  # 1, 2, ... within the run
    batch_id = models.CharField(max_length=100, blank=True, db_index=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.SUBMITTING, db_index=True)
    processing_status = models.CharField(max_length=16, blank=True)  # as the API last said
    request_count = models.PositiveIntegerField(default=0)
    size_bytes = models.BigIntegerField(default=0)
    # requests sent before: in an earlier batch, or in one the API refused (``bulk.submit.refused``)
    retries = models.PositiveIntegerField(default=0)
    # request_counts as the API reports them
    n_processing = models.PositiveIntegerField(default=0)
    n_succeeded = models.PositiveIntegerField(default=0)
    n_errored = models.PositiveIntegerField(default=0)
    n_canceled = models.PositiveIntegerField(default=0)
    n_expired = models.PositiveIntegerField(default=0)
    # what the harvest made of the results
    n_harvested = models.PositiveIntegerField(default=0)
    n_stored = models.PositiveIntegerField(default=0)  # clause stored (found / not_found / unverified)
    n_requeued = models.PositiveIntegerField(default=0)  # sent on to the next batch
    n_failed = models.PositiveIntegerField(default=0)  # failed for a person to look at
    n_max_tokens = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)  # at batch price (50%)
    # succeeded lines whose request was gone (its document deleted mid-run), their tokens counted once
    gone_counted = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    polled_at = models.DateTimeField(null=True, blank=True)
    harvest_started_at = models.DateTimeField(null=True, blank=True)  # renewed by the harvest at each group
    harvest_lease = models.CharField(
        max_length=32, blank=True
    )  # the harvest that holds it (new at each take)
    harvested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["run", "sequence"], name="one_batch_job_per_sequence"),
            models.UniqueConstraint(
                fields=["batch_id"], condition=~models.Q(batch_id=""), name="one_batch_job_per_batch_id"
            ),
        ]

    def __str__(self):
        return f"batch {self.sequence} of run {self.run_id} ({self.batch_id or 'unsent'})"

    ACTIVE = (State.SUBMITTING, State.IN_PROGRESS, State.CANCELING, State.ENDED, State.HARVESTING)

    @property
    def is_active(self) -> bool:
        return self.state in self.ACTIVE

    @property
    def progress(self) -> int:
        """Percent: API processing first (half), then the harvest (the other half). A batch the API
        refused, or one lost before its id was saved, processed nothing that is followed here."""
        if not self.request_count or self.state in (self.State.FAILED, self.State.LOST):
            return 0
        if self.state == self.State.HARVESTED:
            return 100
        processed = self.request_count - self.n_processing if self.state != self.State.SUBMITTING else 0
        return int(50 * processed / self.request_count + 50 * self.n_harvested / self.request_count)


class BatchItem(models.Model):
    ENGAGEMENT_PATH = "run__engagement"

    class State(models.TextChoices):
        PENDING = "pending"  # waits for the next batch
        BUILDING = "building"  # claimed by a submitter
        SUBMITTED = "submitted"  # in ``job``
        DONE = "done"  # clause stored
        FAILED = "failed"  # for a person to look at

    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="batch_items")
    task = models.OneToOneField(ClauseTask, on_delete=models.CASCADE, related_name="batch_item")
    custom_id = models.CharField(max_length=64, unique=True)
    job = models.ForeignKey(BatchJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="items")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    batches = models.PositiveIntegerField(default=0)  # batches it has been sent in
    failures_in_row = models.PositiveIntegerField(default=0)  # errored/expired/canceled/max_tokens in a row
    last_result = models.CharField(max_length=16, blank=True)
    error = models.TextField(blank=True)  # the last failure, as told to the model
    snapshot = models.JSONField(null=True, blank=True)  # agent conversation the next request continues
    claimed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "id"]
        indexes = [models.Index(fields=["run", "state"]), models.Index(fields=["job", "state"])]

    def __str__(self):
        return f"{self.custom_id} · {self.state}"
