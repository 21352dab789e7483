"""Admin views of documents (with their stages, pages and chunk counts) and the embedding cache."""

from django.contrib import admin

from config.admin_readonly import DeletesWithReadOnlyRows, ReadOnlyAdmin
from ingest.models import Chunk, Document, DocumentStage, EmbeddingCache, Page


class DocumentStageInline(admin.TabularInline):
    model = DocumentStage
    extra = 0
    can_delete = False
    fields = ("name", "status", "progress", "attempts", "detail", "started_at", "finished_at")
    readonly_fields = fields


@admin.register(Document)
class DocumentAdmin(DeletesWithReadOnlyRows):
    list_display = (
        "title",
        "engagement",
        "doc_type",
        "doc_type_source",
        "kind",
        "status",
        "progress",
        "page_count",
        "error_code",
        "created_at",
    )
    list_filter = ("status", "kind", "doc_type_source", "engagement")
    search_fields = ("title", "original_name", "sha256")
    # The type changes on the document page, where each change is kept (reviewer.doc_types). The engagement
    # and the file are fixed: moving a reviewed contract to another client, or swapping its file under
    # verified citations, would leave no trail. Documents enter through the upload page.
    readonly_fields = (
        "engagement",
        "file",
        "original_name",
        "doc_type",
        "doc_type_source",
        "sha256",
        "size_bytes",
        "kind",
        "status",
        "progress",
        "error",
        "error_code",
        "page_count",
        "chunk_count",
        "pages_estimated",
        "source_url",
        "fetched_at",
        "created_at",
        "updated_at",
    )
    exclude = ("text",)
    inlines = [DocumentStageInline]

    def has_add_permission(self, request):
        return False


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ("document", "ordinal", "chunk_id", "page_start", "page_end", "section")
    list_filter = ("document__engagement",)
    search_fields = ("chunk_id", "section")
    exclude = ("embedding",)
    readonly_fields = (
        "document",
        "chunk_id",
        "ordinal",
        "text",
        "char_start",
        "char_end",
        "page_start",
        "page_end",
        "paragraph",
        "section",
    )


@admin.register(Page)
class PageAdmin(ReadOnlyAdmin):
    """Read only: a page's offsets place every verified citation on it."""

    list_display = ("document", "number", "char_start", "char_end")


@admin.register(EmbeddingCache)
class EmbeddingCacheAdmin(admin.ModelAdmin):
    list_display = ("model_name", "content_hash", "created_at")
    list_filter = ("model_name",)
    exclude = ("embedding",)
