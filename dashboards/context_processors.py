"""What every page's header needs from the dashboards: whether to offer the link at all."""

from __future__ import annotations

from dashboards.access import managed_engagements


def dashboards_nav(request):
    """``shows_dashboards``: the header's Dashboards link, only for a manager or admin of some engagement
    (an auditor following it met "Not allowed"). Asked lazily, so a page without the header costs nothing."""
    user = getattr(request, "user", None)
    return {"shows_dashboards": lambda: user is not None and managed_engagements(user).exists()}
