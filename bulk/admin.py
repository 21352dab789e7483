"""Batches and their requests in the Django admin, to read only: the app is their one writer (a batch's row
deleted here cancelled nothing at the API and left its requests waiting on a batch no row followed)."""

from django.contrib import admin

from bulk.models import BatchItem, BatchJob
from config.admin_readonly import ReadOnlyAdmin


@admin.register(BatchJob)
class BatchJobAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "run",
        "sequence",
        "batch_id",
        "state",
        "request_count",
        "n_succeeded",
        "n_errored",
        "n_expired",
        "n_canceled",
        "retries",
        "cost_usd",
        "created_at",
    )
    list_filter = ("state",)
    search_fields = ("batch_id",)
    readonly_fields = [f.name for f in BatchJob._meta.fields]


@admin.register(BatchItem)
class BatchItemAdmin(ReadOnlyAdmin):
    list_display = ("custom_id", "run", "job", "state", "batches", "failures_in_row", "last_result")
    list_filter = ("state", "last_result")
    search_fields = ("custom_id",)
    readonly_fields = [f.name for f in BatchItem._meta.fields if f.name != "snapshot"]
    exclude = ("snapshot",)
