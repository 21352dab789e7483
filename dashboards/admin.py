from django.contrib import admin

from dashboards.models import Alert, BenchmarkRun, BenchmarkSet, DashboardSnapshot


@admin.register(BenchmarkSet)
class BenchmarkSetAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "engagement",
        "document_count",
        "pair_count",
        "absent_count",
        "weekly_silent_source",
    )
    readonly_fields = ("gold_sha256", "created_at")


@admin.register(BenchmarkRun)
class BenchmarkRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "benchmark_set",
        "scope",
        "status",
        "engine",
        "model",
        "passes",
        "n",
        "silent",
        "silent_n",
        "created_at",
    )
    list_filter = ("status", "scope", "engine")
    readonly_fields = ("metrics", "created_at", "started_at", "finished_at")


@admin.register(DashboardSnapshot)
class DashboardSnapshotAdmin(admin.ModelAdmin):
    list_display = ("engagement", "computed_at")
    readonly_fields = ("figures", "bounds", "computed_at")


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ("message", "source", "kind", "raised_at", "last_seen_at", "resolved_at")
    list_filter = ("source", "kind", "resolved_at")
