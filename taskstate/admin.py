from django.contrib import admin

from taskstate.models import TaskState


@admin.register(TaskState)
class TaskStateAdmin(admin.ModelAdmin):
    list_display = ("name", "state", "attempts", "queued_at", "started_at", "finished_at")
    list_filter = ("state", "name")
    search_fields = ("task_id", "name", "error")
