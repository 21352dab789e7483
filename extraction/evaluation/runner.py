"""The ``evaluate`` command's work: ingest a cuad-dev-format corpus, run retrieval + extraction on
every gold (document, clause type) pair through the production pipeline, write predictions and
metrics. The maths is in ``evaluation``; this module only moves rows.

Ingest is idempotent (one document per sha256 per engagement), so a second ``evaluate`` on the
same database reuses the documents already ready. ``calibrate`` fits the offline engine's
not_found threshold on the first half of ``documents.jsonl`` and reports both halves.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test.utils import override_settings

from engagements.models import Engagement
from extraction import launch, pipeline, run_status
from extraction.catalog.sync import ensure_catalog
from extraction.engines import get_engine, resolve_engine_name
from extraction.evaluation import metrics as evaluation
from extraction.evaluation.corpus import Corpus, load_corpus
from extraction.finder.model import ClauseFinder
from extraction.finder.runtime import active_finder, finder_folder
from extraction.models import ClauseTask, ClauseType, ExtractionRun
from extraction.offline import presence
from extraction.offline.engine import CALIBRATION_FILE, OfflineEngine
from ingest.intake import IntakeError, intake_file
from ingest.pages import page_of
from ingest.pipeline import run_pipeline

log = logging.getLogger(__name__)
Say = Callable[[str], None]
THRESHOLDS = [round(0.20 + 0.01 * i, 2) for i in range(61)]  # 0.20 .. 0.80


# --------------------------------------------------------------------------- ingest


@dataclass
class IngestReport:
    documents: dict = field(default_factory=dict)  # doc name -> Document
    created: int = 0
    reused: int = 0
    failed: list = field(default_factory=list)
    seconds: float = 0.0
    pages: int = 0


def ingest(corpus: Corpus, engagement, say: Say) -> IngestReport:
    rep = IngestReport()
    first_row: dict[int, dict] = {}  # Document pk -> the documents.jsonl line that brought it
    started = time.perf_counter()
    for i, row in enumerate(corpus.documents, 1):
        path = corpus.folder / row["pdf"]
        try:
            result = intake_file(
                engagement, path, filename=path.name, doc_type=row.get("contract_type", ""), enqueue=False
            )
        except (IntakeError, OSError) as exc:  # refused at the door (empty, encrypted...) or not there
            error = (
                exc.message
                if isinstance(exc, IntakeError)
                else f"{path} could not be read: {exc.strerror or exc}"
            )
            say(f"[{i}/{len(corpus.documents)}] {path.name} refused: {error}")
            rep.failed.append({"doc": row["doc"], "status": "refused", "error": error[:300]})
            continue
        doc = result.document
        first = first_row.setdefault(doc.pk, row)
        if first is not row:  # same bytes, same document: one run cannot hold its pairs twice
            error = f"the same file as {first['doc']} ({first['pdf']})"
            say(f"[{i}/{len(corpus.documents)}] {path.name} not evaluated: {error}")
            rep.failed.append({"doc": row["doc"], "status": "duplicate", "error": error[:300]})
            continue
        if doc.status != "ready" and doc.status not in ("failed", "needs_ocr"):
            t0 = time.perf_counter()
            run_pipeline(doc.pk)
            doc.refresh_from_db()
            say(
                f"[{i}/{len(corpus.documents)}] ingested {path.name}: {doc.status}, {doc.page_count} pages "
                f"({time.perf_counter() - t0:.1f} s)"
            )
            rep.created += 1
        else:
            rep.reused += 1
        if doc.status != "ready":
            rep.failed.append({"doc": row["doc"], "status": doc.status, "error": doc.error[:300]})
        rep.pages += doc.page_count
        rep.documents[row["doc"]] = doc
    rep.seconds = round(time.perf_counter() - started, 1)
    return rep


# --------------------------------------------------------------------------- extraction


def clause_type_rows(names: list[str]) -> dict[str, ClauseType]:
    ensure_catalog()
    rows = {t.name: t for t in ClauseType.objects.filter(name__in=names, engagement__isnull=True)}
    for name in names:  # a corpus may name a type the catalog lacks: search for its name, in this run only
        if name not in rows:  # (retired, so that every run after it does not extract it too)
            slug = "x-" + hashlib.sha1(name.encode()).hexdigest()[:12]
            rows[name], _ = ClauseType.objects.get_or_create(
                slug=slug,
                defaults={
                    "name": name,
                    "description": name,
                    "query": name,
                    "source": "custom",
                    "active": False,
                },
            )
    return rows


def _prediction(
    row: dict, event: dict | None, document, layouts: Layouts
) -> tuple[dict, evaluation.PairRecord]:
    retrieved = [sc.chunk for sc in (event or {}).get("retrieved") or []]
    ex = (event or {}).get("extraction")
    outcome = (event or {}).get("outcome")
    if ex is not None:
        status = ex.status
        cits = [
            {"chunk_id": c.chunk.chunk_id, "page": c.page, "start": c.start, "end": c.end, "quote": c.quote}
            for c in ex.citations.select_related("chunk").order_by("ordinal")
        ]
        text = ex.clause_text if status != "not_found" else "not_found"
        closest = (ex.closest or {}) if status == "not_found" else {}
    else:
        status, cits, text, closest = "failed", [], "", {}
    pred = {
        "doc": row["doc"],
        "clause_type": row["clause_type"],
        "retrieved": [
            {"chunk_id": c.chunk_id, "page_start": c.page_start, "page_end": c.page_end, "text": c.text}
            for c in retrieved
        ],
        "extraction": {"status": status, "clause_text": text, "citations": cits},
        "closest": closest or None,
        "latency_ms": {
            "retrieval": (event or {}).get("latency_ms", {}).get("retrieval"),
            "extraction": (event or {}).get("latency_ms", {}).get("extraction"),
        },
    }
    rec = evaluation.PairRecord(
        doc=row["doc"],
        clause_type=row["clause_type"],
        present=bool(row["present"]),
        gold_spans=row["spans"] or [],
        retrieved=[c.text for c in retrieved],
        retrieved_runs=_runs(retrieved, document),
        status=status,
        clause_text=text if status != "not_found" else "",
        citations=cits,
        citation_valid=[_valid(c, document, layouts) for c in cits],
        latency_ms=pred["latency_ms"],
        score=(outcome.detail.get("best_score") if outcome is not None else None),
        confidence=(outcome.detail.get("presence") if outcome is not None else None),
        closest=str(closest.get("quote", "")),
        features=(
            presence.features(outcome.detail, [sc.cosine for sc in (event or {}).get("retrieved") or []])
            if outcome is not None and "best_score" in outcome.detail
            else {}
        ),
    )
    return pred, rec


def _runs(chunks, document) -> list[str]:
    """Texts of maximal runs of retrieved chunks that touch or overlap in the document."""
    spans = sorted((c.char_start, c.char_end) for c in chunks)
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [document.text[s:e] for s, e in merged if len([1 for a, b in spans if s <= a and b <= e]) > 1]


def pdf_page_texts(path: Path) -> dict[int, str]:
    """Normalised text of each physical page of a PDF, read from its own text layer (pypdfium2),
    independently of ingest: what the page-accuracy check compares a cited page with. Cached by the file's
    path, size and time of change: a benchmark set refreshed with other PDFs under the same names is read
    again."""
    try:
        stat = Path(path).stat()
    except OSError:
        return {}
    return _pdf_page_texts(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _pdf_page_texts(path: str, size: int, mtime_ns: int) -> dict[int, str]:
    out: dict[int, str] = {}
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception:  # not a PDF (or unreadable): no independent page check
        return out
    try:
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            out[i + 1] = evaluation.norm_text(textpage.get_text_range())
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return out


class Layouts(dict):
    """Document pk -> (its pages, its chunks' spans by chunk id), read once per run: a cache that outlived
    the run (the benchmark runs share a long-lived worker) judged citations against the pages and chunks a
    document had before it was ingested again."""

    def of(self, document) -> tuple[tuple, dict]:
        if document.pk not in self:
            self[document.pk] = (
                tuple(document.pages.values_list("number", "char_start", "char_end")),
                {
                    cid: (s, e)
                    for cid, s, e in document.chunks.values_list("chunk_id", "char_start", "char_end")
                },
            )
        return self[document.pk]


def _valid(cit: dict, document, layouts: Layouts) -> bool:
    pages, chunks = layouts.of(document)
    page = page_of(cit["start"], pages) if pages else None
    return evaluation.citation_is_valid(cit, document.text, chunks.get(cit["chunk_id"]), page)


def run_pairs(
    corpus: Corpus,
    engagement,
    documents: dict,
    *,
    engine,
    k: int,
    say: Say,
    doc_names: set[str] | None = None,
) -> tuple[ExtractionRun, list[dict], list[evaluation.PairRecord]]:
    """One extraction run over the gold pairs (of ``doc_names``, default all); predictions and records
    in gold.jsonl order."""
    gold = [g for g in corpus.gold if doc_names is None or g["doc"] in doc_names]
    types = clause_type_rows(sorted({g["clause_type"] for g in gold}))
    ready = {name: d for name, d in documents.items() if d.status == "ready"}
    run = launch.create_run(engagement, documents=[], clause_types=[], engine=engine.name, enqueue=False)
    ExtractionRun.objects.filter(pk=run.pk).update(model=engine.model[:100])
    run.model = engine.model
    ClauseTask.objects.bulk_create(
        [
            ClauseTask(run=run, document=ready[g["doc"]], clause_type=types[g["clause_type"]])
            for g in gold
            if g["doc"] in ready
        ]
    )
    events: dict[tuple[str, str], dict] = {}
    order = [n for n in corpus.names if n in ready and (doc_names is None or n in doc_names)]
    for i, name in enumerate(order, 1):
        doc = ready[name]
        t0 = time.perf_counter()

        def observe(event, name=name):
            events[(name, event["clause"].name)] = event

        for _ in range(5):
            if (
                pipeline.process_document(run.pk, doc.pk, engine=engine, k=k, observe=observe)
                == pipeline.DONE
            ):
                break
        say(
            f"[{i}/{len(order)}] {name}: {sum(1 for (n, _) in events if n == name)} pairs "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    preds, recs, layouts = [], [], Layouts()
    pdf_paths = {d["doc"]: corpus.folder / d["pdf"] for d in corpus.documents}
    for g in gold:
        pred, rec = _prediction(g, events.get((g["doc"], g["clause_type"])), documents.get(g["doc"]), layouts)
        if rec.status == "found" and rec.present:
            rec.pdf_pages = pdf_page_texts(pdf_paths[g["doc"]])
        preds.append(pred)
        recs.append(rec)
    run_status.refresh_status(run)
    return run, preds, recs


# --------------------------------------------------------------------------- calibration

PROBABILITIES = [round(0.05 * i, 2) for i in range(1, 20)]  # 0.05 .. 0.95


def needs_both_kinds(labels: list[bool], said: Callable[[int, int], str]) -> None:
    """ValueError unless there are present and absent pairs to fit on (``said(present, absent)`` says
    where they were counted): with one kind only, the presence model learns a bias that answers every
    pair alike, and saved, it would decide every later offline extraction that way (with none at all
    the fit failed with a numpy TypeError)."""
    present = sum(map(bool, labels))
    absent = len(labels) - present
    if not present or not absent:
        raise ValueError(
            f"cannot calibrate: {said(present, absent)}; the presence model needs both kinds of pair"
        )


def calibrate(
    corpus: Corpus,
    engagement,
    documents: dict,
    *,
    k: int,
    say: Say,
    path: Path = CALIBRATION_FILE,
    options: dict | None = None,
) -> dict:
    """Fit the offline engine's not_found decision on the first half of the corpus and save it: the
    decision for the types the clause finder does not know (the seed types, an admin's own), so it is
    fitted with the finder off. Fit on cuad-train: ``evaluate`` refuses to calibrate on cuad-dev.

    One pass with no threshold gives every pair its best answer and its signals; on those a
    logistic presence model is fitted (label: the clause is present) and its probability
    threshold chosen to maximise hit rate + silent-source rate. The plain score threshold
    is fitted too and kept as the fallback (``threshold``).
    """
    fit_docs, _ = corpus.halves()
    options = dict(options or {})
    engine = OfflineEngine(
        calibration={"threshold": 0.0, "version": "uncalibrated", "options": options}, finder=False
    )
    say(f"calibrating the offline engine on {len(fit_docs)} documents (first half of documents.jsonl)")
    with override_settings(CLAUSE_FINDER=False):  # what the types the finder does not know get
        _, _, recs = run_pairs(corpus, engagement, documents, engine=engine, k=k, say=say, doc_names=fit_docs)
    usable = [r for r in recs if r.features]
    needs_both_kinds(
        [r.present for r in usable],
        lambda p, a: (
            f"of the first half's pairs {p} present and {a} absent got an answer (the others' "
            f"documents are not ready); nothing written to {path}"
        ),
    )
    score_choice = evaluation.calibrate_threshold(recs, THRESHOLDS)
    model = presence.fit([(r.features, r.clause_type, r.present) for r in usable])
    for r in usable:
        r.score = model.probability(r.features, r.clause_type)
    prob_choice = evaluation.calibrate_threshold(usable, PROBABILITIES)
    version = (
        dt.date.today().isoformat()
        + "-"
        + hashlib.sha1(
            json.dumps([model.as_dict(), prob_choice["best"]], sort_keys=True).encode()
        ).hexdigest()[:6]
    )
    data = {
        "version": version,
        "mode": "presence",
        "presence": model.as_dict(),
        "presence_threshold": prob_choice["threshold"],
        "threshold": score_choice["threshold"],
        "per_kind": {},
        "options": options,
        "calibrated_on": corpus.folder.name,
        "split": "first half of documents.jsonl",
        "documents": len(fit_docs),
        "k": k,
        "objective": prob_choice["objective"],
        "best": prob_choice["best"],
        "score_threshold_best": score_choice["best"],
        "curves": {"presence": prob_choice["curve"], "score": score_choice["curve"]},
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    say(
        f"presence threshold {prob_choice['threshold']} (hit rate {prob_choice['best']['hit_rate']}, "
        f"silent-source {prob_choice['best']['silent_source_rate']} on the calibration half; "
        f"a score threshold alone: {score_choice['best']}); written to {path}"
    )
    return data


# --------------------------------------------------------------------------- the whole command


def engine_for(name: str, *, k: int, calibration: dict | None = None):
    """The engine of an evaluation: Claude is shown the same top ``k`` chunks that recall@k scores
    (its own default is 5); the offline engine reads every retrieved chunk and takes a calibration."""
    return get_engine(name, calibration=calibration) if name == "offline" else get_engine(name, k=k)


def prepare_out(out: Path) -> None:
    """Make the --out folder (an existing one is reused: its files are replaced), or say why it cannot
    be, before any work: not after an hour of ingest and extraction."""
    if out.exists() and not out.is_dir():
        raise ValueError(
            f"{out} is not a folder (--out names the folder for predictions.jsonl and metrics.json)"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot make the --out folder {out}: {exc.strerror or exc}") from exc


def default_engagement_name(folder: Path) -> str:
    """The engagement ``evaluate`` ingests ``folder`` into when none is named; ``bench.user_wordings``
    looks there too, so the two find each other without being told."""
    return f"evaluate: {Path(folder).resolve().name}"[:200]


def finder_facts(finder: ClauseFinder | None) -> dict | None:
    """Which clause finder the figures are of (None: the finder was off). A fold's finder
    (``train_clause_finder --folds-out``) says its fold: its figures are of contracts it never saw."""
    if finder is None:
        return None
    folder = finder_folder().resolve()
    base = Path(settings.BASE_DIR).resolve()
    return {
        "folder": str(folder.relative_to(base) if folder.is_relative_to(base) else folder),
        "trained_on": (finder.meta.get("trained_on") or {}).get("sha256"),
        "fold": finder.meta.get("fold"),
    }


def evaluate(
    folder: Path,
    out: Path,
    *,
    limit: int | None = None,
    k: int = 5,
    engine_name: str | None = None,
    do_calibrate: bool = False,
    engagement_name: str | None = None,
    without_finder: bool = False,
    say: Say = print,
) -> dict:
    started = time.perf_counter()
    corpus = load_corpus(folder, limit)
    if not corpus.documents:
        raise ValueError(f"{folder}/documents.jsonl lists no documents")
    if not corpus.gold:  # nothing to score: not an ingest of every PDF for a metrics.json of 0 pairs
        raise ValueError(
            f"{folder}/gold.jsonl has no pair of the {len(corpus.documents)} document(s) evaluated"
        )
    try:  # a finder folder without an artifact is refused here, not once every pair has failed on it
        finder = active_finder()
    except ImproperlyConfigured as exc:
        raise ValueError(str(exc)) from exc
    name = resolve_engine_name(engine_name)  # refused here, before ingest: not after an hour of it
    if name == "anthropic" and not settings.ANTHROPIC_API_KEY:
        raise ValueError("the anthropic engine needs ANTHROPIC_API_KEY; set it, or use --engine offline")
    if do_calibrate and Path(folder).resolve().name == "cuad-dev":
        raise ValueError("cuad-dev chooses between methods and reports figures; calibrate on cuad-train")
    if do_calibrate and name != "offline":
        raise ValueError("--calibrate fits the offline engine's threshold; use --engine offline")
    if do_calibrate:
        fit_docs = corpus.halves()[0]  # refused here, before ingest, when gold alone says it cannot be fitted
        needs_both_kinds(
            [g["present"] for g in corpus.gold if g["doc"] in fit_docs],
            lambda p, a: f"the first half's gold has {p} present and {a} absent pair(s)",
        )
    prepare_out(out)
    engagement, _ = Engagement.objects.get_or_create(
        name=(engagement_name or default_engagement_name(folder))[:200],
        defaults={"client": "evaluation corpus"},
    )
    rep = ingest(corpus, engagement, say)
    say(
        f"ingest: {rep.created} new, {rep.reused} reused, {len(rep.failed)} not ready, {rep.pages} pages, "
        f"{rep.seconds} s"
    )
    calibration = None
    if do_calibrate:
        calibration = calibrate(corpus, engagement, rep.documents, k=k, say=say)
    engine = engine_for(name, k=k, calibration=calibration)
    run, preds, recs = run_pairs(corpus, engagement, rep.documents, engine=engine, k=k, say=say)

    summary = evaluation.summarise(recs)
    baseline = None
    if without_finder:  # the same pairs again, the clause finder off in retrieval and in the engine
        with override_settings(CLAUSE_FINDER=False):
            _, _, base_recs = run_pairs(
                corpus, engagement, rep.documents, engine=engine_for(name, k=k), k=k, say=say
            )
        base = evaluation.summarise(base_recs)
        baseline = {
            "overall": base["overall"],
            "precision_recall": {key: v for key, v in base["precision_recall"].items() if key != "curve"},
            "timings_ms": base["timings_ms"],
        }
    fit, held = corpus.halves()
    cal = getattr(engine, "calibration", None) or {}
    metrics = {
        "credit": evaluation.corpus_credit(folder),
        "corpus": str(folder),
        "engine": engine.name,
        "model": engine.model,
        "finder": finder_facts(finder),
        "k": k,
        "limit": limit,
        "run_id": run.pk,
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "documents": {
            "total": len(corpus.documents),
            "ingested": rep.created,
            "reused": rep.reused,
            "not_ready": rep.failed,
            "pages": rep.pages,
        },
        **summary,
        "splits": {
            "first_half": evaluation.metrics([r for r in recs if r.doc in fit]),
            "second_half": evaluation.metrics([r for r in recs if r.doc in held]),
        },
        "calibration": (
            {
                key: cal.get(key)
                for key in (
                    "version",
                    "mode",
                    "presence_threshold",
                    "threshold",
                    "options",
                    "calibrated_on",
                    "split",
                    "documents",
                    "objective",
                    "best",
                    "score_threshold_best",
                )
            }
            if engine.name == "offline"
            else None
        ),
    }
    if baseline is not None:
        metrics["without_finder"] = baseline
    metrics["timings_ms"]["ingest_s"] = rep.seconds
    metrics["timings_ms"]["wall_s"] = round(time.perf_counter() - started, 1)
    # Everything is computed before anything is written, and metrics.json comes last: a run that fails (or is
    # stopped) on the way leaves the older run's three files as they were, never new predictions beside old
    # figures.
    _replace(out / "predictions.jsonl", (json.dumps(p, ensure_ascii=False) + "\n" for p in preds))
    _replace(
        out / "scores.jsonl",
        (  # per pair, for threshold analysis
            json.dumps(
                {
                    "doc": r.doc,
                    "clause_type": r.clause_type,
                    "present": r.present,
                    "status": r.status,
                    "score": r.score,
                    "confidence": r.confidence,
                    "hit": evaluation.is_hit(r),
                    "features": r.features,
                }
            )
            + "\n"
            for r in recs
        ),
    )
    _replace(out / "metrics.json", [json.dumps(metrics, indent=2, ensure_ascii=False) + "\n"])
    return metrics


def _replace(path: Path, lines: Iterable[str]) -> None:
    """Write ``path`` whole or not at all: into a temporary file beside it, then renamed over it."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as fh:
        fh.writelines(lines)
    os.replace(partial, path)
