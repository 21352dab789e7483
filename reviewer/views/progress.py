"""Review progress of an engagement, overall and per reviewer, by clause type (reviewer.progress).
Scoped like every engagement page: a non-member gets a 404; every member reads it."""

from __future__ import annotations

from django.shortcuts import render

from reviewer import access
from reviewer.progress import engagement_progress


def progress(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id)
    overall, reviewers = engagement_progress(engagement)
    context = {
        "engagement": engagement,
        "role": engagement.my_role,  # type: ignore[attr-defined]  # annotated by reviewer.access
        "overall": overall,
        "reviewers": reviewers,
    }
    return render(request, "reviewer/progress.html", context)
