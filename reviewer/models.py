"""Reviews are append-only: the current state of a clause is derived from its latest review."""
from django.conf import settings
from django.db import models

from extraction.models import Extraction


class AppendOnlyError(Exception):
    pass


class Review(models.Model):
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

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise AppendOnlyError("Reviews are append-only: record a new decision instead of editing one.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("Reviews are append-only and cannot be deleted.")
