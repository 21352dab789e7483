"""Small formatting helpers for the dashboard templates."""

from django import template
from django.urls import NoReverseMatch, reverse

from dashboards import charts

register = template.Library()


@register.filter
def pct(value):
    """0.8333 -> "83%", rounded down (see charts.pct); None -> "–"."""
    return charts.pct(value)


@register.filter
def heat(rate):
    return charts.heat_class(rate)


@register.filter
def ci(stratum):
    """A Stratum (or anything with low/high) -> "21–100%"."""
    if stratum is None:
        return ""
    return f"{charts.bound_pct(stratum.low).rstrip('%')}–{charts.bound_pct(stratum.high)}"


@register.filter
def ci_pair(interval):
    low, high = interval
    return f"{charts.bound_pct(low).rstrip('%')}–{charts.bound_pct(high)}"


@register.simple_tag
def review_url(document_id, extraction_id):
    """The review screen of one clause (the reviewer app's ``clause`` URL; the literal path if it is
    absent)."""
    for name in ("reviewer:clause", "clause"):
        try:
            return reverse(name, args=[document_id, extraction_id])
        except NoReverseMatch:
            continue
    return f"/documents/{document_id}/clauses/{extraction_id}/"


@register.simple_tag
def ci_bar(stratum, width=100):
    """Geometry of a small interval bar: {x1, x2, px} in 0..width for the low, high and point estimate."""
    if stratum is None or not stratum.n:
        return None
    x1, x2 = round(stratum.low * width, 1), round(stratum.high * width, 1)
    return {
        "x1": x1,
        "x2": x2,
        "rw": round(max(x2 - x1, 1), 1),
        "px": round((stratum.rate or 0) * width, 1),
        "w": width,
        "tx": round(stratum.target * width, 1),
    }
