"""Reviewers' records, append-only: the current state of a clause is derived from its latest review,
a document's type and title changes are kept beside what they replaced, and edits of the clause catalog
beside the wording they replaced. Also the sign-in throttle's failed attempts (``LoginFailure``), which are
not a record: each is kept for the throttle's window only."""

from django.conf import settings
from django.db import models

from extraction.models import ClauseType, Extraction
from ingest.models import Document
from reviewer.states import decision_label


class AppendOnlyError(Exception):
    pass


class AppendOnly(models.Model):
    """A row that is written once: never edited, never deleted."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise AppendOnlyError(
                f"{self._meta.verbose_name_plural.capitalize()} are append-only: "
                "record a new one instead of editing one."
            )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError(
            f"{self._meta.verbose_name_plural.capitalize()} are append-only and cannot be deleted."
        )


class Review(AppendOnly):
    ENGAGEMENT_PATH = "extraction__document__engagement"

    class Decision(models.TextChoices):
        ACCEPT = "accept"
        REJECT = "reject"
        CORRECT = "correct"

    extraction = models.ForeignKey(Extraction, on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reviews")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    corrected_text = models.TextField(blank=True)
    reason = models.TextField(blank=True)
    extraction_version = models.PositiveIntegerField()  # the version the reviewer saw and decided on
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["extraction", "-created_at", "-id"]
        indexes = [models.Index(fields=["extraction", "-id"])]

    def __str__(self):
        return f"{self.extraction_id} {self.decision} v{self.extraction_version}"

    @property
    def decision_label(self) -> str:
        """The decision in words ("Not in this contract" for the `n` key's correction to not_found)."""
        return decision_label(self.decision, self.corrected_text, self.get_decision_display())


class DocumentTypeChange(AppendOnly):
    """An admin changed a document's type (the managers' accuracy is broken down by it)."""

    ENGAGEMENT_PATH = "document__engagement"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="type_changes")
    old_type = models.CharField(max_length=100, blank=True)
    old_source = models.CharField(max_length=8, choices=Document.TypeSource.choices, blank=True)
    new_type = models.CharField(max_length=100)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="type_changes"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "-created_at", "-id"]

    def __str__(self):
        return f"{self.document_id}: {self.old_type or '(none)'} -> {self.new_type}"


class DocumentTitleChange(AppendOnly):
    """An admin renamed a document (its title; the uploaded file's name stays as ``original_name``)."""

    ENGAGEMENT_PATH = "document__engagement"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="title_changes")
    old_title = models.CharField(max_length=300)
    new_title = models.CharField(max_length=300)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="title_changes"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "-created_at", "-id"]

    def __str__(self):
        return f"{self.document_id}: {self.old_title} -> {self.new_title}"


class ClauseTypeChange(AppendOnly):
    """An admin edited a catalog type on the catalog page, or retired or reactivated it ({"active": ...});
    what it had before is kept."""

    clause_type = models.ForeignKey(ClauseType, on_delete=models.PROTECT, related_name="changes")
    before = models.JSONField()  # {field: value} of the fields that changed, as they were
    after = models.JSONField()  # the same fields as the admin left them
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="clause_type_changes"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["clause_type", "-created_at", "-id"]

    def __str__(self):
        return f"{self.clause_type_id} {self.created_at}"


class CaseSummary(AppendOnly):
    """A summary of one document made for its reviewers; a new one never replaces an old one."""

    ENGAGEMENT_PATH = "document__engagement"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="summaries")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="summaries"
    )
    engine = models.CharField(max_length=16)  # offline | anthropic
    model = models.CharField(max_length=100, blank=True)
    context_mode = models.CharField(max_length=16, blank=True)  # how Claude saw the document
    truncated = models.BooleanField(default=False)  # Claude stopped at max_tokens
    points = models.JSONField(default=list)  # extraction.summary.Point.as_dict() rows
    unverified_count = models.PositiveIntegerField(default=0)  # values not found in the document
    usage = models.JSONField(default=dict, blank=True)  # tokens, when Claude made it
    created_at = models.DateTimeField(auto_now_add=True)

    CONTEXT_LABELS = {
        "whole": "the whole text",
        "sections": "its sections",
        "opening": "its opening",
        "retrieval": "its opening and the passages found for the summary's topics",
    }

    class Meta:
        ordering = ["document", "-created_at", "-id"]

    def __str__(self):
        return f"{self.document_id} {self.engine} {self.created_at}"

    @property
    def context_label(self) -> str:
        """What Claude read of the document, in words."""
        return self.CONTEXT_LABELS.get(self.context_mode, self.context_mode)


class LoginFailure(models.Model):
    """A failed sign-in, counted by the throttle (``reviewer.login``) while it is in its window."""

    username = models.CharField(max_length=150)  # as typed, lower-cased; need not name a user
    address = models.CharField(max_length=64)  # the client's, as config.client_address reads it
    at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["address", "at"], name="login_failures_of_address"),
            models.Index(fields=["username", "address", "at"], name="login_failures_of_user"),
        ]

    def __str__(self):
        return f"{self.username} {self.address} {self.at}"
