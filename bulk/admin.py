from django.contrib import admin

from bulk.models import BatchItem, BatchJob


@admin.register(BatchJob)
class BatchJobAdmin(admin.ModelAdmin):
    list_display = ("id", "run", "sequence", "batch_id", "state", "request_count", "n_succeeded", "n_errored",
                    "n_expired", "n_canceled", "retries", "cost_usd", "created_at")
    list_filter = ("state",)
    search_fields = ("batch_id",)
    readonly_fields = [f.name for f in BatchJob._meta.fields]


@admin.register(BatchItem)
class BatchItemAdmin(admin.ModelAdmin):
    list_display = ("custom_id", "run", "job", "state", "batches", "failures_in_row", "last_result")
    list_filter = ("state", "last_result")
    search_fields = ("custom_id",)
    readonly_fields = [f.name for f in BatchItem._meta.fields if f.name != "snapshot"]
    exclude = ("snapshot",)
