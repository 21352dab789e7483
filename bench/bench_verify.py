"""Citation verification speed: ``verify_extraction`` on ``--citations`` quotes of a ``--pages``-page text.

The document is contract prose (``demo.prose.LegalProse``, seeded) wrapped at 90 characters per line, as
converted PDFs are, joined into pages (``ingest.pages.join_pages``) and cut by the real chunker
(``ingest.chunker.chunk_document``). Each citation quotes one sentence of a chunk on one line, as a model
writes it, so most quotes cross a line break of the source. The whole list is verified in one call, timed
``--repeat`` times (p50/p95, and per citation).

Baseline, same run: exact search, each quote looked up with ``str.find`` in its cited chunk and then in the
whole text: the least a verifier does, with none of the normalisation (line breaks, hyphenation,
ligatures, quotes) or the page and value checks. ``slowdown_vs_exact_find`` is the verifier's p50 and p95
over the baseline's (> 1: slower); ``found`` says how many of the citations each one placed.

Usage: ``python -m bench.bench_verify [--pages 50] [--citations 100] [--repeat 20]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import ratio, timed_repeats  # noqa: E402


def document(pages: int, seed: int = 0) -> list[str]:
    """Page texts of about 3,000 characters of contract prose, lines wrapped at 90 characters."""
    from demo.prose import LegalProse

    prose, texts = LegalProse(seed), []
    for _ in range(pages):
        paragraphs = []
        while sum(len(p) for p in paragraphs) < 3000:
            paragraphs.append(textwrap.fill(prose.paragraph(), 90))
        texts.append("\n\n".join(paragraphs) + "\n")
    return texts


def citations(chunks, count: int, seed: int = 0) -> list[dict]:
    """``count`` citations of distinct sentences (the clause text is their quotes one after the other, which
    a repeated one would break), each a sentence of a chunk with its line breaks read as spaces."""
    rng = random.Random(seed)
    cited, quoted = [], set()
    for _ in range(100 * count):
        chunk = rng.choice(chunks)
        sentences = [" ".join(s.split()) for s in re.split(r"(?<=\.)\s+", chunk.text) if len(s.split()) >= 6]
        quote = rng.choice(sentences) if sentences else ""
        if quote and quote not in quoted:
            quoted.add(quote)
            cited.append({"chunk_id": chunk.chunk_id, "page": chunk.page_start, "quote": quote})
            if len(cited) == count:
                return cited
    raise SystemExit(f"{len(cited)} distinct sentences found, not {count}: give more --pages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--citations", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    from extraction.verify import verify_extraction
    from ingest.chunker import chunk_document
    from ingest.pages import join_pages

    text, pages = join_pages(document(args.pages))
    chunks = chunk_document(text, pages)
    cited = citations(chunks, args.citations)
    clause_text = " ".join(c["quote"] for c in cited)
    by_id = {c.chunk_id: c for c in chunks}

    def exact_find() -> int:
        return sum(
            1 for c in cited if by_id[c["chunk_id"]].text.find(c["quote"]) >= 0 or text.find(c["quote"]) >= 0
        )

    verifier, result = timed_repeats(
        lambda: verify_extraction(cited, by_id, pages, clause_text, document_text=text), args.repeat
    )
    baseline, found_exact = timed_repeats(exact_find, args.repeat)
    verified = {" ".join(v.quote.split()) for v in result.citations}
    print(
        json.dumps(
            {
                "bench": "verify",
                "pages": args.pages,
                "chunks": len(chunks),
                "citations": len(cited),
                "verifier": {
                    **verifier,
                    "ms_per_citation_p50": round(verifier["p50_ms"] / len(cited), 3),
                    "ok": result.ok,
                    "errors": len(result.errors),
                    "found": sum(1 for c in cited if c["quote"] in verified),
                },
                "baseline_exact_find": {**baseline, "found": found_exact},
                "slowdown_vs_exact_find": {
                    "p50": ratio(verifier["p50_ms"], baseline["p50_ms"]),
                    "p95": ratio(verifier["p95_ms"], baseline["p95_ms"]),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
