from django.contrib import admin

from config.admin_readonly import ReadOnlyAdmin
from extraction.models import (
    Checkpoint,
    Citation,
    ClauseTask,
    ClauseType,
    Extraction,
    ExtractionRun,
)


@admin.register(ClauseType)
class ClauseTypeAdmin(ReadOnlyAdmin):
    """Read only: admins add, edit, retire and reactivate types on the catalog page, which checks names
    (a free question's "Q: ", a twin in other capitals), keeps built-in types' exact CUAD names and
    keeps every edit beside the wording it replaced (reviewer.catalog_edits)."""

    list_display = ("name", "kind", "source", "active")
    list_filter = ("source", "kind", "active")
    search_fields = ("name", "description", "query", "example")


class ClauseTaskInline(admin.TabularInline):
    model = ClauseTask
    extra = 0
    fields = ("document", "clause_type", "status", "attempts", "error")
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(ExtractionRun)
class ExtractionRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "engagement",
        "engine",
        "model",
        "mode",
        "status",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cost_usd",
        "created_at",
        "finished_at",
    )
    list_filter = ("engine", "status", "mode")
    readonly_fields = (
        "engine",
        "model",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "cost_usd",
        "created_at",
        "finished_at",
        "error",
    )
    inlines = [ClauseTaskInline]


class CitationInline(admin.TabularInline):
    model = Citation
    extra = 0
    fields = ("ordinal", "chunk", "page", "start", "end", "quote", "model_page")
    readonly_fields = fields
    can_delete = False


@admin.register(Extraction)
class ExtractionAdmin(ReadOnlyAdmin):
    """Read only: a clause's text changes only through a reviewer's correction, which is kept as a
    Review (an edit here would show as what the auditor accepted, with no trail)."""

    list_display = ("id", "document", "clause_type", "status", "engine", "model", "version", "created_at")
    list_filter = ("status", "engine", "clause_type")
    search_fields = ("clause_text", "document__title")
    inlines = [CitationInline]


@admin.register(Checkpoint)
class CheckpointAdmin(admin.ModelAdmin):
    list_display = ("run", "document", "updated_at")
    readonly_fields = ("run", "document", "case_facts", "last_record", "position", "history", "updated_at")
