"""The batch page and the admins' "Bulk extract" action. Thin: scope, call ``service`` / ``progress``, render.

Everything goes through ``engagements.scoping``: a run outside the user's engagements
is a 404; starting a bulk run needs the admin role in the engagement (403 otherwise).
"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from bulk import progress
from bulk.forms import BulkExtractForm
from bulk.service import BulkError, start_bulk, usable_engine
from engagements.models import Engagement, Role
from engagements.scoping import get_scoped_or_404, require_role, scoped
from extraction.models import ExtractionRun


@require_GET
def run_list(request):
    runs = progress.listed(scoped(ExtractionRun.objects.all(), request.user))
    return render(request, "bulk/runs.html", {"runs": runs})


def _run(request, run_id: int) -> ExtractionRun:
    return get_scoped_or_404(
        ExtractionRun.objects.filter(mode=ExtractionRun.Mode.BATCH).select_related("engagement"),
        request.user,
        pk=run_id,
    )


@require_GET
def run_detail(request, run_id: int):
    run = _run(request, run_id)
    return render(request, "bulk/run.html", _run_context(run))


@require_GET
def run_status(request, run_id: int):
    """The run's progress and batches table (htmx polls it while the run is active)."""
    run = _run(request, run_id)
    return render(request, "bulk/_run_body.html", _run_context(run))


def _run_context(run) -> dict:
    return {
        "summary": progress.run_summary(run),
        "failed": progress.failed_items(run),
        "documents": progress.document_rows(run),
        "run": run,
    }


@require_http_methods(["GET", "POST"])
def start(request, engagement_id: int):
    engagement = get_scoped_or_404(Engagement.objects.all(), request.user, pk=engagement_id)
    require_role(request.user, engagement, Role.ADMIN)
    form = BulkExtractForm(request.POST or None, engagement=engagement)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            usable_engine(data["engine"])
            run = start_bulk(
                engagement,
                clause_types=list(data["clause_types"]),
                documents=list(data["documents"]) or None,
                engine=data["engine"],
                user=request.user,
            )
        except BulkError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request,
                f"Bulk run {progress.number(run)} of {engagement.name} started: "
                f"{run.tasks.count()} clause tasks ({run.engine}).",
            )
            return redirect("bulk:run", run_id=run.pk)
    status = 422 if request.method == "POST" else 200
    return render(request, "bulk/new.html", {"form": form, "engagement": engagement}, status=status)
