"""OCR quality on real contracts: each contract ingested from its text layer and from an image-only scan
of it, and the figures of the two side by side; then the end-to-end time of a 200-page scan.

Data: CUAD v1, The Atticus Project (CC BY 4.0), read from ``../shared/eval/cuad-dev`` at run time and never
copied into the repository. The contracts are ``--docs`` of the 89, chosen before any is read by
``bench._cuad.pick`` (spread evenly over the folder in name order; 0: all 89). Two corpus folders in the
cuad-dev format are written under the throw-away database's folder (``EMBEDDED_DIR``): ``text`` (the PDFs as
filed, linked, not copied) and ``image`` (each PDF's every page drawn at 200 dpi grey, every 4th turned a few
degrees, every 5th specked, kept as JPEG in an image-only PDF: ``bench.bench_ocr.image_only``, the page
maker of ``bench_ocr``). Each folder goes through ``manage.py evaluate --engine offline --k 5`` (the real
intake and pipeline; the image version's pages are read by ``ingest.ocr``), then:

* ``chunks``: ``bench/chunk_quality.py``'s scoring on the chunks and text the pipeline stored:
  ``page_accuracy`` (the first chunk wholly holding a gold part has a page range meeting the part's gold
  pages) and ``coverage_single_chunk`` (located gold parts wholly inside one chunk). A gold part is located
  by exact search of its letters and digits (lower case) in the document's; one OCR error inside it leaves
  it unlocated, so those two figures are over the parts located, and ``parts_located`` (and
  ``coverage_single_chunk_of_all_parts``, an unlocated part counted as uncovered) say what OCR errors cost.
* ``char_accuracy``: per page with a text layer of at least ``bench_ocr.MIN_REFERENCE_CHARS`` characters
  (the text version's page not itself OCRed), 1 - Levenshtein distance / length of the text version's page
  text, the image version's page text against it: ``strict`` (runs of whitespace one space) and ``alnum``
  (lower-case letters and digits only); mean, median, and by kind of page.
* ``evaluate``: recall@5 (a gold part counts as retrieved when its whole normalised text lies in one of the
  top 5 chunks: one OCR error inside it is a miss) and the offline engine's hit rate (answer and gold span
  share at least half their words: a few misread words cost little), silent-source and false not_found
  rates; target: the image version within 3 points of the text version.
* ``end_to_end`` (``--e2e-pages``, 0 to skip): a ``bench_ocr`` scan of that many pages uploaded through
  ``intake_file`` and the pipeline (convert with OCR, chunk, embed, index) and extracted with the offline
  engine over every active clause type, in this process as a worker runs it; seconds per stage and from
  upload to extracted, with this process's CPU seconds (its Tesseract readers too) (the machine is
  shared: the load average before and after says how much).

Usage: ``EMBEDDED_DIR=DIR MEDIA_ROOT=DIR/media python -m bench.bench_ocr_quality [--docs 30]
[--e2e-pages 200] [--reuse-evaluations] [--out FILE]``  (prints one JSON object and writes it to
``bench/results/bench_ocr_quality.json``; without ``EMBEDDED_DIR`` the database lives under ``var/bench`` and
is removed afterwards; with it, a second run reuses the documents ingested, and with ``--reuse-evaluations``
``evaluate``'s metrics and predictions too)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._cuad import CREDIT, CUAD, _jsonl, pick  # noqa: E402
from bench._django import bench_django, write_result  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "bench_ocr_quality.json"
TARGET_POINTS = 3.0  # the image version's figures within this many points of the text version's
TARGET_CHUNK_SHARE = 0.99  # page accuracy and coverage of the image version
VERSIONS = ("text", "image")


# --------------------------------------------------------------------------- the two corpora


def write_corpora(work: Path, docs: int, say) -> list[dict]:
    """The ``text`` and ``image`` corpus folders under ``work`` for the picked contracts (an image-only PDF
    already made is kept); returns the picked rows of documents.jsonl."""
    from bench.bench_ocr import image_only

    listed = pick(_jsonl(CUAD / "documents.jsonl"), docs)
    names = {row["doc"] for row in listed}
    gold = [
        line for line in (CUAD / "gold.jsonl").read_text().splitlines() if json.loads(line)["doc"] in names
    ]
    readme = f"Contracts of cuad-dev for bench_ocr_quality. Data: {CREDIT}.\n"
    for version in VERSIONS:
        folder = work / version
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "README.md").write_text(readme)
        (folder / "gold.jsonl").write_text("\n".join(gold) + "\n")
        (folder / "documents.jsonl").write_text("".join(json.dumps(row) + "\n" for row in listed))
    if not (work / "text" / "pdf").exists():
        (work / "text" / "pdf").symlink_to(CUAD / "pdf")
    (work / "image" / "pdf").mkdir(exist_ok=True)
    started = time.perf_counter()
    for n, row in enumerate(listed, 1):
        out = work / "image" / row["pdf"]
        if not out.exists():
            partial = out.with_suffix(".part")
            image_only(CUAD / row["pdf"], partial)
            partial.rename(out)
            say(f"[{n}/{len(listed)}] image-only {out.name} ({time.perf_counter() - started:.0f} s)")
    return listed


def evaluate(folder: Path, say, *, reuse: bool = False) -> tuple[dict, float | None]:
    """``manage.py evaluate FOLDER --engine offline --k 5`` (its talk to stderr); its metrics and seconds.
    ``reuse``: the metrics an earlier run wrote to FOLDER/out, when there are (seconds: None)."""
    from django.core.management import call_command

    written = folder / "out" / "metrics.json"
    if reuse and written.is_file():
        say(f"evaluate {folder.name}: reusing {written}")
        return json.loads(written.read_text()), None
    started = time.perf_counter()
    with redirect_stdout(sys.stderr):
        call_command(
            "evaluate", str(folder), out=str(folder / "out"), engine="offline", k=5, stdout=sys.stderr
        )
    seconds = time.perf_counter() - started
    say(f"evaluate {folder.name}: {seconds:.0f} s")
    return json.loads((folder / "out" / "metrics.json").read_text()), seconds


def documents_of(folder: Path, listed: list[dict]) -> dict:
    """doc name -> its Document in the engagement ``evaluate`` ingested ``folder`` into (found by sha256)."""
    import hashlib

    from extraction.evaluation.runner import default_engagement_name
    from ingest.models import Document

    found = {}
    for row in listed:
        sha = hashlib.sha256((folder / row["pdf"]).read_bytes()).hexdigest()
        doc = Document.objects.filter(engagement__name=default_engagement_name(folder), sha256=sha).first()
        if doc is not None and doc.status == "ready":
            found[row["doc"]] = doc
    return found


def layout(document) -> tuple[str, list[tuple[int, int, int]], list, dict[int, float | None]]:
    """(text, pages, chunks in reading order, page number -> OCR confidence) as the pipeline stored them."""
    pages = list(document.pages.order_by("number").values_list("number", "char_start", "char_end"))
    confidence = dict(document.pages.values_list("number", "ocr_confidence"))
    return document.text, pages, list(document.chunks.order_by("ordinal")), confidence


# --------------------------------------------------------------------------- figures


def share(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


TOLERANCE = 0.05  # OCR-tolerant matching: a gold part within this share of edits of a stretch of text


def best_stretch(part: str, text: str) -> tuple[int, int, int]:
    """(edits, start, end): the stretch ``text[start:end]`` closest to ``part`` by Levenshtein distance
    (free start and end in ``text``), one numpy row per character of ``part`` as ``bench_ocr.levenshtein``
    does; the start found by aligning both reversed, up to that end."""
    import numpy as np

    def ends(a: str, b: str) -> np.ndarray:
        codes = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
        index = np.arange(len(b) + 1)
        row = np.zeros(len(b) + 1, dtype=np.int64)  # a stretch may start anywhere: no cost before it
        for ch in a:
            substitute = row[:-1] + (codes != ord(ch))
            tmp = np.empty_like(row)
            tmp[0] = row[0] + 1
            tmp[1:] = np.minimum(substitute, row[1:] + 1)
            row = np.minimum.accumulate(tmp - index) + index
        return row

    if not part or not text:
        return len(part), 0, 0
    row = ends(part, text)
    end = int(np.argmin(row))
    back = ends(part[::-1], text[:end][::-1])
    return int(row[end]), end - int(np.argmin(back)), end


def within_tolerance(part: str, text: str) -> tuple[int, int] | None:
    """Where in ``text`` (both normalised) a stretch within :data:`TOLERANCE` edits of ``part`` lies, or
    None; exact search only for a part too short to allow one edit."""
    at = text.find(part)
    if at >= 0:
        return at, at + len(part)
    allowed = int(TOLERANCE * len(part))
    if not allowed or len(text) < len(part) - allowed:
        return None
    edits, start, end = best_stretch(part, text)
    return (start, end) if edits <= allowed else None


def tolerant_chunk_figures(documents: dict, parts: dict[str, list[dict]]) -> dict:
    """Coverage and page accuracy with gold parts located OCR-tolerantly: a part's letters and digits are
    looked for in its gold pages (and the page before and after), exactly or within :data:`TOLERANCE` edits;
    the stretch found must lie wholly inside one chunk (the first such chunk's pages meet the gold pages)."""
    from bench.chunk_quality import normalise

    located = covered = paged = page_ok = total = 0
    for name, document in documents.items():
        text, pages, chunks, _ = layout(document)
        starts = {number: start for number, start, _ in pages}
        ends = {number: end for number, _, end in pages}
        for part in parts.get(name, []):
            target, _ = normalise(part["text"])
            gold_pages = part.get("pages")
            if not target or not gold_pages:
                continue
            total += 1
            first, last = gold_pages
            lo, hi = (
                starts.get(first - 1, starts.get(first, 0)),
                ends.get(last + 1, ends.get(last, len(text))),
            )
            window, offsets = normalise(text[lo:hi])
            found = within_tolerance(target, window)
            if found is None:
                continue
            located += 1
            raw_start, raw_end = lo + offsets[found[0]], lo + offsets[found[1] - 1] + 1
            holding = [c for c in chunks if c.char_start <= raw_start and c.char_end >= raw_end]
            if holding:
                covered += 1
                paged += 1
                page_ok += holding[0].page_start <= last and holding[0].page_end >= first
    return {
        "parts_with_pages": total,
        "parts_located": share(located, total),
        "coverage_single_chunk": share(covered, located),
        "page_accuracy": share(page_ok, paged),
    }


def tolerant_recall(folder: Path) -> float | None:
    """recall@5 of ``evaluate``'s predictions with a gold part counted as retrieved when it is in a top-5
    chunk as ``evaluate`` judges it (``metrics.contains``), or its letters and digits are within
    :data:`TOLERANCE` edits of a stretch of one."""
    from bench.chunk_quality import normalise
    from extraction.evaluation.metrics import contains, norm_text

    hits = total = 0
    gold = {(g["doc"], g["clause_type"]): g for g in _jsonl(folder / "gold.jsonl") if g["present"]}
    for pred in _jsonl(folder / "out" / "predictions.jsonl"):
        row = gold.get((pred["doc"], pred["clause_type"]))
        if row is None:
            continue
        chunks = [c["text"] for c in pred["retrieved"]]
        normed = [norm_text(c) for c in chunks]
        alnum = [normalise(c)[0] for c in chunks]
        for span in row["spans"]:
            for part in span.get("parts") or []:
                if not part.get("text"):
                    continue
                total += 1
                target = normalise(part["text"])[0]
                hits += any(contains(h, part["text"]) for h in normed) or any(
                    within_tolerance(target, a) is not None for a in alnum
                )
    return share(hits, total)


def chunk_figures(documents: dict, parts: dict[str, list[dict]]) -> dict:
    """``bench/chunk_quality.py``'s page accuracy and coverage on the stored chunks of ``documents``."""
    from bench import chunk_quality

    tally = chunk_quality.new_tally()
    for name, document in documents.items():
        text, pages, chunks, _ = layout(document)
        tally["pages"] += len(pages)
        chunk_quality.score_document(text, pages, chunks, parts.get(name, []), tally)
        chunk_quality.chunk_figures(text, chunks, tally)
    return {
        "documents": len(documents),
        "pages": tally["pages"],
        "chunks": tally["chunks"],
        "gold_parts": tally["parts"],
        "parts_located": share(tally["located"], tally["parts"]),
        "page_accuracy": share(tally["chunk_page_ok"], tally["chunk_paged"]),
        "page_accuracy_parts": tally["chunk_paged"],
        "coverage_single_chunk": share(tally["covered_single"], tally["located"]),
        "coverage_single_chunk_parts_within_max_chars": share(
            tally["covered_single"] - tally["covered_single_long"], tally["located"] - tally["long_parts"]
        ),
        "coverage_single_chunk_of_all_parts": share(tally["covered_single"], tally["parts"]),
        "sentence_end_share": share(tally["sentence_end"], tally["chunks"]),
    }


def char_accuracy(text_docs: dict, image_docs: dict) -> dict:
    """The image version's page texts against the text version's, page by page (see the module's doc)."""
    from bench.bench_ocr import MIN_REFERENCE_CHARS, accuracy, alnum, scan_kind, strict
    from ingest.ocr import LOW_CONFIDENCE

    rows, skipped, confidences = [], 0, []
    for name, image_doc in image_docs.items():
        if name not in text_docs:
            continue
        text, pages, _, ocr_before = layout(text_docs[name])
        read, read_pages, _, confidence = layout(image_doc)
        assert len(pages) == len(read_pages), f"{name}: page counts differ"
        for (number, start, end), (_, read_start, read_end) in zip(pages, read_pages):
            if confidence.get(number) is not None:
                confidences.append(confidence[number])
            reference = text[start:end]
            if ocr_before.get(number) is not None or len(reference.strip()) < MIN_REFERENCE_CHARS:
                skipped += 1  # a page the filed PDF has as a scan, or a cover or signature page
                continue
            ocr = read[read_start:read_end]
            rows.append(
                {
                    "kind": scan_kind(number - 1),
                    "strict": accuracy(strict(reference), strict(ocr)),
                    "alnum": accuracy(alnum(reference), alnum(ocr)),
                }
            )
    kinds = sorted({r["kind"] for r in rows})
    return {
        "pages_compared": len(rows),
        "pages_left_out": skipped,
        "strict": mean([r["strict"] for r in rows]),
        "alnum": mean([r["alnum"] for r in rows]),
        "strict_median": round(statistics.median(r["strict"] for r in rows), 4) if rows else None,
        "pages_under_0.90": sum(r["strict"] < 0.90 for r in rows),
        "by_kind": {
            kind: {
                "pages": sum(r["kind"] == kind for r in rows),
                "strict": mean([r["strict"] for r in rows if r["kind"] == kind]),
                "alnum": mean([r["alnum"] for r in rows if r["kind"] == kind]),
            }
            for kind in kinds
        },
        "ocr_confidence_mean": mean(confidences),
        "pages_flagged_low_confidence": sum(c < LOW_CONFIDENCE for c in confidences),
        "pages_read_by_ocr": len(confidences),
    }


def eval_figures(metrics: dict) -> dict:
    o = metrics["overall"]
    keys = (
        "recall_at_k",
        "pair_recall_at_k",
        "hit_rate",
        "silent_source_rate",
        "false_not_found_rate",
        "pairs",
        "failed",
    )
    return {key: o.get(key) for key in keys} | {"documents_not_ready": len(metrics["documents"]["not_ready"])}


def compare(text: dict, image: dict, keys: tuple[str, ...]) -> dict:
    """Per figure: text, image, the difference in points and whether it is within the target."""
    out = {}
    for key in keys:
        a, b = text.get(key), image.get(key)
        points = round(100 * (b - a), 2) if a is not None and b is not None else None
        out[key] = {
            "text_layer": a,
            "image_only": b,
            "points": points,
            "within_3_points": points is not None and abs(points) <= TARGET_POINTS,
        }
    return out


# --------------------------------------------------------------------------- end to end


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def end_to_end(pages: int, say) -> dict:
    """A ``pages``-page scan from upload to extracted (offline engine, every active clause type)."""
    from bench.bench_ocr import make_scan
    from engagements.models import Engagement
    from extraction import launch
    from extraction import pipeline as extraction_pipeline
    from extraction.catalog.sync import ensure_catalog
    from extraction.engines import get_engine
    from extraction.models import ClauseTask
    from ingest import embeddings
    from ingest.intake import intake_file
    from ingest.pipeline import run_pipeline

    with tempfile.TemporaryDirectory() as folder:
        scan = Path(folder) / f"scanned-contract-{pages}-pages.pdf"
        make_scan(pages, scan)
        ensure_catalog()
        engine = get_engine("offline")
        embeddings.get_embedder().encode(["warm up"])  # a worker has its model loaded already
        engagement, _ = Engagement.objects.get_or_create(
            name=f"bench: ocr end to end {os.getpid()}", defaults={"client": "bench"}
        )
        load_before, cpu_before = os.getloadavg()[0], _cpu_s()
        started = time.perf_counter()
        document = intake_file(engagement, scan, filename=scan.name, enqueue=False).document
        upload_s = time.perf_counter() - started
    run_pipeline(document.pk)
    ingested_s = time.perf_counter() - started
    document.refresh_from_db()
    if document.status != "ready":
        raise RuntimeError(f"the scan ended {document.status}: {document.error}")
    run = launch.create_run(engagement, documents=[document], engine="offline", enqueue=False)
    result = extraction_pipeline.process_until_done(run.pk, document.pk, engine=engine)
    total_s = time.perf_counter() - started
    cpu_s = _cpu_s() - cpu_before
    stages = {
        stage.name: round((stage.finished_at - stage.started_at).total_seconds(), 1)
        for stage in document.stages.all()
        if stage.started_at and stage.finished_at
    }
    tasks = ClauseTask.objects.filter(run=run)
    say(f"end to end: {pages} pages, {total_s:.0f} s")
    return {
        "pages": document.page_count,
        "pages_read_by_ocr": document.pages.exclude(ocr_confidence=None).count(),
        "chunks": document.chunks.count(),
        "clause_types": tasks.count(),
        "clause_tasks_done": tasks.filter(status=ClauseTask.Status.DONE).count(),
        "extraction_result": result,
        "upload_s": round(upload_s, 1),
        "stages_s": stages,
        "upload_to_ready_s": round(ingested_s, 1),
        "extraction_s": round(total_s - ingested_s, 1),
        "upload_to_extracted_s": round(total_s, 1),
        "cpu_s": round(cpu_s, 1),
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--docs", type=int, default=30, help="contracts of cuad-dev (bench._cuad.pick); 0: all"
    )
    parser.add_argument("--e2e-pages", type=int, default=200, help="pages of the end-to-end scan; 0: skip")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--reuse-evaluations",
        action="store_true",
        help="take evaluate's metrics and predictions from an earlier run on the same EMBEDDED_DIR",
    )
    args = parser.parse_args(argv)

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with bench_django("ocr-quality") as folder:
        work = Path(os.environ.get("EMBEDDED_DIR", folder)) / "corpora"
        listed = write_corpora(work, args.docs, say)
        from bench import chunk_quality

        parts = chunk_quality.gold_parts(work / "text")
        result: dict = {
            "bench": "ocr_quality",
            "data": f"{CREDIT}; {len(listed)} contracts of cuad-dev, "
            + ("all" if not args.docs else "spread evenly in name order (bench._cuad.pick)"),
            "contracts": len(listed),
            "pages": sum(row["pages"] for row in listed),
        }
        metrics, docs, seconds = {}, {}, {}
        for version in VERSIONS:
            metrics[version], seconds[version] = evaluate(work / version, say, reuse=args.reuse_evaluations)
            docs[version] = documents_of(work / version, listed)
        chunks = {version: chunk_figures(docs[version], parts) for version in VERSIONS}
        figures = {version: eval_figures(metrics[version]) for version in VERSIONS}
        tolerant = {version: tolerant_chunk_figures(docs[version], parts) for version in VERSIONS}
        for version in VERSIONS:
            figures[version]["recall_at_k_ocr_tolerant"] = tolerant_recall(work / version)
        result.update(
            {
                "evaluate_s": {
                    version: round(seconds[version], 1) if seconds[version] is not None else "reused"
                    for version in VERSIONS
                },
                "chunks": {
                    **chunks,
                    "compared": compare(
                        chunks["text"],
                        chunks["image"],
                        ("page_accuracy", "coverage_single_chunk", "parts_located"),
                    ),
                    "image_meets_0.99": all(
                        (chunks["image"][key] or 0) >= TARGET_CHUNK_SHARE
                        for key in ("page_accuracy", "coverage_single_chunk")
                    ),
                },
                "chunks_ocr_tolerant": {
                    **tolerant,
                    "compared": compare(
                        tolerant["text"],
                        tolerant["image"],
                        ("page_accuracy", "coverage_single_chunk", "parts_located"),
                    ),
                },
                "char_accuracy": char_accuracy(docs["text"], docs["image"]),
                "evaluate": {
                    **figures,
                    "compared": compare(
                        figures["text"],
                        figures["image"],
                        (
                            "recall_at_k",
                            "recall_at_k_ocr_tolerant",
                            "pair_recall_at_k",
                            "hit_rate",
                            "silent_source_rate",
                            "false_not_found_rate",
                        ),
                    ),
                },
            }
        )
        if args.e2e_pages:
            result["end_to_end"] = end_to_end(args.e2e_pages, say)
    write_result(result, args.out)
    return result


if __name__ == "__main__":
    main()
