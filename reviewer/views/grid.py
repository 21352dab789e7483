"""The engagement grid (contracts × clause types) and its XLSX export, scoped like every page: a
non-member gets a 404. Its URL keeps the view (filters, sort, columns, page), so it can be shared and
the export holds what the screen shows."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from functools import cache

from django.core.paginator import Paginator
from django.http import FileResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.text import slugify

from extraction.models import Extraction
from ingest.models import Document
from reviewer import access, exports
from reviewer import grid as core
from reviewer.decisions import reviewer_name
from reviewer.timing import server_timing

EXPORT_BATCH = 50  # documents read per round trip while the export is written


@cache
def clause_url() -> str:
    """The clause view's URL with its ids left to fill in: reversed once, not once per cell."""
    url = reverse("clause", args=[123456789, 987654321])
    return url.replace("123456789", "{document}").replace("987654321", "{extraction}")


def _setup(request, engagement_id: int):
    engagement = access.engagement_for(request.user, engagement_id)
    types = core.catalog_types(engagement)
    people = core.reviewers(engagement)
    dts = core.doc_types(engagement)
    q = core.GridQuery.parse(request.GET, [t.pk for t in types], dts, {u.pk: u.username for u in people})
    return engagement, types, people, dts, q


@server_timing
def grid(request, engagement_id: int):
    engagement, types, people, dts, q = _setup(request, engagement_id)
    by_id = {t.pk: t for t in types}
    docs = core.documents(engagement, q)
    page = Paginator(docs, q.per_page).get_page(q.page)
    q.page = page.number
    rows = core.rows_of(list(page.object_list), q, {t.pk: t.kind for t in types})
    for row in rows:
        row.html = mark_safe(  # noqa: S308  # every text in it is escaped by cell_html
            "".join(cell_html(row.document.pk, c, q.filters_clauses) for c in row.cells)
        )
    totals = core.column_totals(docs, q.columns)
    columns = [(by_id[c], totals.get(c, 0)) for c in q.columns]
    context = {
        "engagement": engagement,
        "role": engagement.my_role,  # annotated by reviewer.access
        "q": q,
        "rows": rows,
        "columns": columns,
        "page": page,
        "types": types,
        "people": [(u.pk, reviewer_name(u)) for u in people],
        "doc_types": dts,
        "statuses": [(s, core.STATUS_LABELS[s]) for s in core.STATUSES],
        "review_states": [(s, core.STATE_LABELS[s]) for s in core.REVIEW_STATES],
        "sorts": list(core.SORTS.items()),
        "page_sizes": core.PAGE_SIZES,
        "sort_links": _sort_links(q),
        "export_query": q.url(page=None),
        "prev_url": q.url(page=page.previous_page_number()) if page.has_previous() else "",
        "next_url": q.url(page=page.next_page_number()) if page.has_next() else "",
        "first_url": q.url(page=None) if page.number > 1 else "",
        "last_url": q.url(page=page.paginator.num_pages) if page.number < page.paginator.num_pages else "",
    }
    return render(request, "reviewer/grid.html", context)


def _sort_links(q: core.GridQuery) -> dict[str, dict]:
    """For each sortable column head: the URL that sorts by it (ascending, or descending when it already
    sorts ascending) and the aria-sort it has now."""
    links = {}
    for key, first in (("title", "title"), ("date", "-date"), ("found", "-found"), ("reviewed", "-reviewed")):
        current = q.sort.lstrip("-") == key
        flipped = ("-" + key) if q.sort == key else key
        links[key] = {
            "url": q.url(sort=flipped if current else first, page=None),
            "aria": ("descending" if q.sort.startswith("-") else "ascending") if current else "none",
        }
    return links


def grid_export(request, engagement_id: int):
    """The grid as the screen shows it (every page of it) in XLSX: a "grid" sheet of the cells, then the
    "clauses" sheet of the exports (``reviewer.exports``) with the answer each cell shows, its citations
    and every decision on it, in the grid's order. Written into a temporary file a batch of documents at a
    time (a zip cannot be sent before it is finished)."""
    engagement, types, _people, _dts, q = _setup(request, engagement_id)
    by_id = {t.pk: t for t in types}
    kinds = {t.pk: t.kind for t in types}
    ids = list(core.documents(engagement, q).values_list("pk", flat=True))

    def batches() -> Iterator[list[core.Row]]:
        for at in range(0, len(ids), EXPORT_BATCH):
            part = ids[at : at + EXPORT_BATCH]
            loaded = {d.pk: d for d in Document.objects.filter(pk__in=part).defer("text")}
            yield core.rows_of([loaded[i] for i in part if i in loaded], q, kinds)

    def grid_sheet() -> Iterator[list]:
        yield ["document_id", "document", "document_type", "added", "found", "reviewed"] + [
            by_id[c].name for c in q.columns
        ]
        for rows in batches():
            for row in rows:
                d = row.document
                yield [
                    d.pk,
                    d.title,
                    d.doc_type,
                    d.created_at.date().isoformat(),
                    row.found,
                    row.reviewed,
                ] + [cell_text(c) for c in row.cells]

    def records() -> Iterator[dict]:
        for rows in batches():
            shown = [c.answer.id for row in rows for c in row.cells if c is not None]
            loaded = {
                r["extraction_id"]: r
                for r in exports.iter_records(exports.load(Extraction.objects.filter(pk__in=shown)))
            }
            for extraction_id in shown:
                yield loaded[extraction_id]

    file = tempfile.TemporaryFile()  # closed (and so removed) by the response once sent
    exports.write_xlsx(records(), file, before=[("grid", grid_sheet())])
    file.seek(0)
    response = FileResponse(
        file,
        as_attachment=True,
        filename=f"{slugify(engagement.name) or 'engagement'}-grid.xlsx",
        content_type=exports.CONTENT_TYPES["xlsx"],
    )
    response["Cache-Control"] = "private, no-store"
    return response


def cell_html(document_id: int, cell: core.Cell | None, dim_empty: bool) -> str:
    """One cell of the grid as HTML, its texts escaped. Written here rather than in the template: a page
    holds thousands of cells, and the template engine's per-node cost was most of the page's time."""
    if cell is None:
        return (
            f'<td class="cell empty{" dim" if dim_empty else ""}"><span class="sr-only">not extracted</span>'
            '<span aria-hidden="true">·</span></td>'
        )
    a = cell.answer
    href = clause_url().format(document=document_id, extraction=a.id)
    parts = [
        f'<td class="cell status-{a.status}{" dim" if cell.dim else ""}">'
        f'<a class="cell-link" href="{href}" data-extraction-id="{a.id}">'
        f'<span class="cell-status">{cell.status_label}</span> '
        f'<span class="chip review-{cell.review}">{cell.review_label}</span>'
    ]
    if cell.absent:
        parts.append(' <span class="cell-value"><em>not in contract</em></span>')
    elif cell.value:
        parts.append(f' <span class="cell-value">{escape(cell.value)}</span>')
    if a.page:
        parts.append(f' <span class="cell-page">p. {a.page}</span>')
    if cell.answers > 1:
        parts.append(
            f' <span class="cell-more" title="{cell.answers} different answers from the runs; the clause '
            f'list has them all">+{cell.answers - 1} other</span>'
        )
    parts.append("</a></td>")
    return "".join(parts)


def cell_text(cell: core.Cell | None) -> str:
    """A cell as the screen shows it, in words: "found · accepted · $247,830.00 · p. 3"."""
    if cell is None:
        return ""
    parts = [cell.status_label, cell.review_label]
    if cell.absent:
        parts.append("marked not in this contract")
    elif cell.value:
        parts.append(cell.value)
    if cell.answer.page:
        parts.append(f"p. {cell.answer.page}")
    return " · ".join(parts)
