"""The clause catalog in the database: seeding and row <-> plain-data conversion.

``ensure_catalog()`` creates the catalog types that are missing (by name) and
never overwrites a row an admin has edited. The data migration calls it with the
historical model; tests that flush tables call it again.
"""

from __future__ import annotations

from extraction import catalog
from extraction.models import ClauseType


def ensure_catalog(model=None) -> int:
    """Create missing catalog ``ClauseType`` rows; return how many were created."""
    if model is None:
        model = ClauseType
    existing = set(model.objects.values_list("name", flat=True))
    slugs = set(model.objects.values_list("slug", flat=True))
    has_example = any(f.name == "example" for f in model._meta.get_fields())  # historical models before 0003
    new = [
        model(
            name=c.name,
            slug=c.slug,
            description=c.description,
            query=c.query,
            kind=c.kind,
            source=c.source,
            active=True,
            **({"example": c.example} if has_example else {}),
        )
        for c in catalog.CATALOG
        if c.name not in existing and c.slug not in slugs
    ]
    model.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def fill_examples(model=None) -> int:
    """Give catalog rows with no example the catalog's one (never overwrites an admin's text)."""
    if model is None:
        model = ClauseType
    filled = 0
    for c in catalog.CATALOG:
        filled += model.objects.filter(name=c.name, example="").update(example=c.example)
    return filled


def as_plain(row) -> catalog.ClauseType:
    """A ``ClauseType`` row as the plain dataclass the cores use (admin edits included)."""
    return catalog.ClauseType(
        row.name, row.slug, row.kind or catalog.TEXT, row.description, row.query, row.source, row.example
    )


def catalog_order(name: str) -> int:
    """Position in the built-in catalog (custom types last)."""
    try:
        return catalog.names().index(name)
    except ValueError:
        return len(catalog.CATALOG)
