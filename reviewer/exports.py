"""Exports of clauses with their citations and current decision: CSV, JSON, XLSX.

``export_records`` turns loaded rows into plain dicts (one per extraction, citations nested; a
clause extracted again by a later run is its own row with its own run id and decisions);
``flat_rows`` flattens them to one row per citation for the tabular formats. Every decision on a clause
is exported with its reviewer and time (``decisions`` in JSON, oldest first; the ``history`` column of
CSV and XLSX, one decision a line), not only the one that stands; so is why the verifier flagged a clause
``unverified`` (``verification_errors``: a list in JSON, one reason a line in CSV and XLSX), and so is
every answer the server refused on the way (``refused_attempts``: its text, quotes and errors; a list in
JSON, one attempt a line in CSV and XLSX). Cells that a spreadsheet would run as a formula are neutralised
(contracts are untrusted text): in CSV with a leading apostrophe, in XLSX by writing every text as a string
cell, which keeps the exact text.

An engagement of a thousand contracts exports tens of thousands of clauses, so nothing here holds them
all: :func:`iter_records` reads the rows a batch at a time, CSV and JSON are produced as a stream of
byte chunks (:func:`csv_chunks`, :func:`json_chunks`), and XLSX is written row by row into a temporary
file (:func:`write_xlsx`). ``bench/bench_export.py`` measures the memory this holds.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from django.db.models import Prefetch, QuerySet
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

from extraction.closest import ClosestPassage
from extraction.models import Citation
from reviewer.decisions import derive_state, reviewer_name
from reviewer.models import Review
from reviewer.states import STATE_LABELS

COLUMNS = (
    "document_id",
    "document",
    "document_type",
    "extraction_id",
    "run_id",
    "clause",
    "type",
    "status",
    "engine",
    "model",
    "confidence",
    "verification_errors",
    "refused_attempts",
    "extraction_version",
    "citation_ordinal",
    "chunk_id",
    "page",
    "span_start",
    "span_end",
    "quote",
    "closest_page",
    "closest_quote",
    "current_decision",
    "reviewer",
    "decided_at",
    "reason",
    "history",
)
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def load(extractions: QuerySet) -> QuerySet:
    """The queryset with everything an export reads, in three queries whatever the size."""
    return (
        extractions.select_related("clause_type", "document")
        .defer("document__text")
        .prefetch_related(
            Prefetch(
                "citations",
                queryset=Citation.objects.select_related("chunk")
                .only("id", "extraction_id", "ordinal", "page", "start", "end", "quote", "chunk__chunk_id")
                .order_by("ordinal", "id"),
            ),
            Prefetch("reviews", queryset=Review.objects.select_related("reviewer").order_by("-id")),
        )
        .order_by("document__title", "document_id", "clause_type__name", "id")
    )


BATCH = 200  # extractions read (with their citations and reviews) per round trip while exporting
CHUNK_BYTES = 64 * 1024  # a streamed export is sent in pieces of about this size


def iter_records(extractions: QuerySet) -> Iterator[dict]:
    """The export record of each extraction of a :func:`load`-ed queryset, read ``BATCH`` at a time."""
    return (export_record(ex) for ex in extractions.iterator(chunk_size=BATCH))


def export_record(ex: Any) -> dict:
    reviews = list(ex.reviews.all())
    state = derive_state(ex.clause_text, reviews)
    near = ClosestPassage.of(ex)
    latest = reviews[0] if reviews else None
    return {
        "document_id": ex.document_id,
        "document": ex.document.title,
        "document_type": ex.document.doc_type,
        "extraction_id": ex.id,
        "run_id": ex.run_id,  # each run extracts again: a repeated answer is told apart by its run
        "clause": state.text,
        "engine_text": ex.clause_text,
        "type": ex.clause_type.name,
        "status": ex.status,
        "verification_errors": list(ex.verification_errors or []),  # why it is flagged unverified
        "refused_attempts": list(ex.refused_attempts or []),  # the answers refused before this one
        "engine": ex.engine,
        "model": ex.model,
        "confidence": ex.confidence,  # how sure the engine is of this answer (None: it does not say)
        # a not_found's closest sentence (``Extraction.closest``): never a citation
        "closest": {"page": near.page, "span": [near.start, near.end], "quote": near.quote} if near else None,
        "extraction_version": ex.version,
        "citations": [
            {
                "citation_id": c.id,
                "ordinal": c.ordinal,
                "chunk_id": c.chunk.chunk_id,
                "page": c.page,
                "span": [c.start, c.end],
                "quote": c.quote,
            }
            for c in ex.citations.all()
        ],
        "current_decision": STATE_LABELS[state.decision],
        "reviewer": state.reviewer,
        "decided_at": state.at.isoformat() if state.at else None,
        "reason": latest.reason if latest else "",
        "decisions": [decision_record(r) for r in reversed(reviews)],  # the audit trail, oldest first
    }


def decision_record(review: Any) -> dict:
    return {
        "review_id": review.id,
        "decision": STATE_LABELS[review.decision],
        "reviewer": reviewer_name(review.reviewer),
        "decided_at": review.created_at.isoformat(),
        "extraction_version": review.extraction_version,
        "reason": review.reason,
        "corrected_text": review.corrected_text,
    }


def history_text(decisions: list[dict]) -> str:
    """Every decision of a clause, one a line, oldest first: when, who, what, on which version, why."""
    lines = []
    for d in decisions:
        line = f"{d['decided_at']} {d['reviewer']}: {d['decision']} (v{d['extraction_version']})"
        if d["reason"]:
            line += f"; reason: “{d['reason']}”"
        if d["corrected_text"]:
            line += f"; corrected to: “{d['corrected_text']}”"
        lines.append(line)
    return "\n".join(lines)


def refused_text(attempts: list[dict]) -> str:
    """Every refused answer of a clause, one a line, oldest first: which attempt, what it said and quoted,
    why it was refused."""
    lines = []
    for a in attempts:
        line = f"attempt {a.get('attempt')}" + (f", call {a['call']}" if a.get("call") else "")
        line += f": “{a.get('clause_text') or ''}”"
        for c in a.get("citations") or []:
            line += f"; quoted p.{c.get('page', '?')}: “{c.get('quote', '')}”"
        lines.append(line + "; refused: " + " | ".join(a.get("errors") or []))
    return "\n".join(" ".join(line.split()) for line in lines)


def flat_rows(records: list[dict]) -> list[dict]:
    """One row per citation (a clause without citations still gets one row)."""
    rows = []
    for rec in records:
        base = {k: rec[k] for k in COLUMNS if k in rec}
        base["decided_at"] = rec["decided_at"] or ""
        base["history"] = history_text(rec.get("decisions") or [])
        base["verification_errors"] = "\n".join(rec.get("verification_errors") or [])  # one reason a line
        base["refused_attempts"] = refused_text(rec.get("refused_attempts") or [])  # one attempt a line
        near = rec.get("closest") or {}
        base["closest_page"], base["closest_quote"] = near.get("page", ""), near.get("quote", "")
        base["confidence"] = "" if rec.get("confidence") is None else rec["confidence"]
        for cit in rec["citations"] or [None]:
            row = dict(base)
            if cit:
                row.update(
                    citation_ordinal=cit["ordinal"],
                    chunk_id=cit["chunk_id"],
                    page=cit["page"],
                    span_start=cit["span"][0],
                    span_end=cit["span"][1],
                    quote=cit["quote"],
                )
            rows.append({k: row.get(k, "") for k in COLUMNS})
    return rows


def safe_cell(value: Any) -> Any:
    """A text cell a spreadsheet would evaluate (=, +, -, @ …) gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def _in_pieces(texts: Iterable[str]) -> Iterator[bytes]:
    """UTF-8 bytes of the joined ``texts``, in pieces of about ``CHUNK_BYTES`` (one write each)."""
    pending, size = [], 0
    for text in texts:
        pending.append(text)
        size += len(text)
        if size >= CHUNK_BYTES:
            yield "".join(pending).encode("utf-8")
            pending, size = [], 0
    if pending:
        yield "".join(pending).encode("utf-8")


def csv_chunks(records: Iterable[dict]) -> Iterator[bytes]:
    def lines() -> Iterator[str]:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=COLUMNS)

        def taken() -> str:
            text = out.getvalue()
            out.seek(0)
            out.truncate()
            return text

        out.write("\ufeff")  # BOM: Excel reads UTF-8 correctly
        writer.writeheader()
        yield taken()
        for record in records:
            for row in flat_rows([record]):
                writer.writerow({k: safe_cell(v) for k, v in row.items()})
            yield taken()

    return _in_pieces(lines())


def json_chunks(records: Iterable[dict], **meta: Any) -> Iterator[bytes]:
    """``{**meta, "clauses": [records]}`` as indented JSON, one record at a time."""

    def indented(value: Any, level: int) -> str:
        # json.dumps escapes every newline inside a string, so each line it writes can be indented
        return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + " " * level)

    def parts() -> Iterator[str]:
        yield "{"
        for key, value in meta.items():
            yield f"\n  {json.dumps(key)}: {indented(value, 2)},"
        yield '\n  "clauses": ['
        separator, empty = "\n    ", True
        for record in records:
            yield separator + indented(record, 4)
            separator, empty = ",\n    ", False
        yield "]\n}" if empty else "\n  ]\n}"

    return _in_pieces(parts())


def write_xlsx(
    records: Iterable[dict], file: IO[bytes], *, before: Iterable[tuple[str, Iterable[list]]] = ()
) -> None:
    """The sheet, written row by row (openpyxl's write-only mode) into ``file``; ``before``: sheets written
    ahead of it, each (title, rows of cell values), their texts kept as the clauses sheet keeps them."""
    wb = Workbook(write_only=True)
    for title, rows in before:
        sheet = wb.create_sheet(title)
        for values in rows:
            sheet.append([_xlsx_cell(sheet, v) for v in values])
    ws = wb.create_sheet("clauses")
    ws.append(list(COLUMNS))
    for record in records:
        for row in flat_rows([record]):
            ws.append([_xlsx_cell(ws, row[k]) for k in COLUMNS])
    wb.save(file)


XLSX_CELL_MAX = 32_767  # the most characters Excel holds in a cell (its documented limit)
XLSX_CUT_NOTE = " … [cut at Excel's 32,767-character cell limit; the JSON export has it whole]"


def _xlsx_cell(sheet, value: Any) -> Any:
    """Text as a string cell (type "s"): "=..." stays inert text, so the exact quote is kept with no
    apostrophe (the CSV guard would change it). A character XML cannot hold (a page break inside a
    quote) becomes a space, so the words on either side stay apart; a text past Excel's cell limit is
    cut, and says so."""
    if not isinstance(value, str):
        return value
    text = ILLEGAL_CHARACTERS_RE.sub(" ", value)
    if len(text) > XLSX_CELL_MAX:
        text = text[: XLSX_CELL_MAX - len(XLSX_CUT_NOTE)] + XLSX_CUT_NOTE
    cell = WriteOnlyCell(sheet, value=text)
    cell.data_type = "s"
    return cell
