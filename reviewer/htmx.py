"""Full page or fragment: the same URL serves both (no-JS reading path + htmx enhancement)."""

from __future__ import annotations

from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def is_fragment(request) -> bool:
    """An htmx request that wants a fragment (a history restore wants the whole page)."""
    return (
        request.headers.get("HX-Request") == "true"
        and request.headers.get("HX-History-Restore-Request") != "true"
    )


def render_page(request, page_template: str, fragment_template: str, context: dict, status: int = 200):
    template = fragment_template if is_fragment(request) else page_template
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ("HX-Request", "HX-History-Restore-Request"))
    return response
