"""Evaluation maths for the ``evaluate`` command: plain functions over plain rows. No Django.

Per (document, clause type) pair the command gives a ``PairRecord``: the gold row of
``gold.jsonl``, what retrieval returned, what the engine answered, and checks the
command made against the database (citation validity). ``summarise`` turns the
records into the figures of ``metrics.json``:

- retrieval recall@k: a gold part counts as retrieved when its case- and
  punctuation-normalised text lies inside one retrieved chunk (``recall_at_k``);
  ``recall_at_k_merged`` also accepts it inside a run of adjacent retrieved chunks
  (a part longer than a chunk can only be found that way). ``pair_recall_at_k``:
  present pairs with at least one gold part retrieved.
- hit rate: present pairs answered ``found`` whose clause text has word-set Jaccard
  >= 0.5 with some gold span (the CUAD criterion; ``stratify.jaccard``; a list of parties
  value by value, ``stratify.answer_texts``).
- citation page accuracy: of the citations of found answers that match a located
  gold part (one normalised text inside the other, or Jaccard >= 0.5; both at least
  4 words, as a shorter text occurs in too many places), the share whose page lies
  on the gold part's page(s) or whose matched text is on the cited page of the PDF
  itself (gold pages are first occurrences; a repeated text cited where its copy is
  is right). ``citation_page_accuracy_first_occurrence`` counts gold pages only.
- citation validity: the share of all citations whose quote is exactly
  ``text[start:end]``, lies inside its chunk and sits on the page it names.
- silent-source rate: not_found on absent pairs; false not_found rate: not_found on
  present pairs. A pair that got no answer (status failed: its document never became
  ready, the engine failed) is in neither denominator, as ``stratify.silent_source`` and
  the dashboards count it; ``failed`` says how many. Hit rate and recall still count it
  as a miss.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from extraction.evaluation.stratify import (
    NOT_RUN,
    best_answer_jaccard,
    best_jaccard,
    citation_quotes,
    jaccard,
)

HIT_JACCARD = 0.5
CREDIT = "CUAD v1, The Atticus Project (CC BY 4.0)"


def corpus_credit(folder) -> str:
    """The credit a corpus folder's figures carry: CUAD's when its README.md names CUAD (cuad-dev
    and slices of it), none otherwise (a corpus of one's own, the synthetic demo set)."""
    readme = Path(folder) / "README.md"
    return CREDIT if readme.is_file() and "CUAD" in readme.read_text(errors="replace") else ""


# --------------------------------------------------------------------------- normalisation

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def norm_text(text: str) -> str:
    """Case- and punctuation-normalised text: NFKC, lower case, every run of non-word characters one space."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    return " ".join(_NON_WORD.sub(" ", text).split())


def contains(haystack_norm: str, needle: str) -> bool:
    """``needle`` (raw) inside ``haystack_norm`` (normalised): as whole words, or, for a needle of three
    words or more, ignoring spaces too (PDF text splits "8th" into "8 th", "Co- operation"...)."""
    n = norm_text(needle)
    if not n:
        return False
    if f" {n} " in f" {haystack_norm} ":
        return True
    return len(n.split()) >= 3 and n.replace(" ", "") in haystack_norm.replace(" ", "")


# --------------------------------------------------------------------------- records


@dataclass
class PairRecord:
    doc: str
    clause_type: str
    present: bool
    gold_spans: list[dict]  # gold.jsonl "spans": [{text, parts: [{text, pages}]}]
    retrieved: list[str]  # retrieved chunk texts, rank order (top k)
    retrieved_runs: list[str] = field(default_factory=list)  # texts of adjacent retrieved chunks merged
    status: str = "not_found"  # found | not_found | unverified | failed
    clause_text: str = ""
    citations: list[dict] = field(default_factory=list)  # {page, quote, ...}
    citation_valid: list[bool] = field(default_factory=list)
    latency_ms: dict = field(default_factory=dict)  # {"retrieval": ms, "extraction": ms}
    score: float | None = None  # the offline engine's best sentence score, when it has one
    confidence: float | None = None  # the engine's probability that the clause is there, when it gives one
    features: dict = field(default_factory=dict)  # the engine's decision signals (offline)
    pdf_pages: dict[int, str] = field(default_factory=dict)  # page number -> normalised PDF text layer
    closest: str = ""  # a not_found's closest sentence (``Extraction.closest``), when the engine kept one

    @property
    def parts(self) -> list[dict]:
        return [p for s in self.gold_spans for p in s.get("parts") or [] if p.get("text")]

    @property
    def quotes(self) -> list[str]:
        return citation_quotes(self.citations)

    @property
    def span_texts(self) -> list[str]:
        return [s.get("text", "") for s in self.gold_spans if s.get("text")]


# --------------------------------------------------------------------------- per-pair judgements


def parts_retrieved(rec: PairRecord, *, merged: bool = False) -> tuple[int, int]:
    """(gold parts retrieved, gold parts) of one pair."""
    hay = [norm_text(t) for t in rec.retrieved]
    if merged:
        hay += [norm_text(t) for t in rec.retrieved_runs]
    parts = rec.parts
    return sum(1 for p in parts if any(contains(h, p["text"]) for h in hay)), len(parts)


def is_hit(rec: PairRecord, threshold: float = HIT_JACCARD) -> bool:
    return (
        rec.present
        and rec.status == "found"
        and best_answer_jaccard(rec.clause_text, rec.quotes, rec.span_texts) >= threshold
    )


def closest_is_hit(rec: PairRecord, threshold: float = HIT_JACCARD) -> bool:
    """A present clause answered not_found whose closest sentence would have been a hit."""
    return (
        rec.present
        and rec.status == "not_found"
        and bool(rec.closest)
        and best_jaccard(rec.closest, rec.span_texts) >= threshold
    )


MIN_JUDGED_WORDS = 4  # a shorter part ("Association", a date) occurs in many places: its page proves nothing


def _matches(quote: str, part_text: str) -> tuple[bool, bool]:
    """(quote matches the gold part, the part lies inside the quote)."""
    q, p = norm_text(quote), norm_text(part_text)
    if not q or not p or min(len(q.split()), len(p.split())) < MIN_JUDGED_WORDS:
        return False, False
    part_in_quote = f" {p} " in f" {q} "
    return part_in_quote or f" {q} " in f" {p} " or jaccard(quote, part_text) >= HIT_JACCARD, part_in_quote


def page_judgements(rec: PairRecord, *, any_occurrence: bool = True) -> list[bool]:
    """For each citation of a found answer that matches a located gold part: is its page right?

    Right when the page lies on the gold part's page(s) (gold locates a part at its first
    occurrence), or, with ``any_occurrence``, when the matched text is on the cited page of the
    PDF itself (``rec.pdf_pages``, the physical page's own text layer): a party name or a clause
    repeated in an exhibit is correctly cited on the page where that copy is.
    """
    out: list[bool] = []
    if rec.status != "found":
        return out
    located = [p for p in rec.parts if p.get("pages")]
    for cit in rec.citations:
        page = cast(int, cit.get("page"))  # a found answer's citations carry their page
        for part in located:
            ok, part_inside = _matches(cit.get("quote", ""), part["text"])
            if not ok:
                continue
            first, last = part["pages"][0], part["pages"][-1]
            right = first <= page <= last or (part_inside and first - 1 <= page <= first)
            if (
                not right and any_occurrence and rec.pdf_pages
            ):  # the gold text itself starts on the cited page
                here = rec.pdf_pages.get(page, "")
                right = contains(f"{here} {rec.pdf_pages.get(page + 1, '')}", part["text"]) and (
                    contains(here, part["text"]) or _starts_on(here, part["text"])
                )
            out.append(right)
            break
    return out


def _starts_on(page_norm: str, text: str, words: int = 6) -> bool:
    """The first words of ``text`` are on the page (a text that runs on to the next page)."""
    head = " ".join(norm_text(text).split()[:words])
    return bool(head) and contains(page_norm, head)


def citation_is_valid(
    citation: Mapping, text: str, chunk_range: tuple[int, int] | None, page_of_start: int | None
) -> bool:
    """The quote is exactly ``text[start:end]``, lies inside its chunk and starts on the page it names."""
    start, end = citation.get("start"), citation.get("end")
    if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end <= len(text):
        return False
    if text[start:end] != citation.get("quote"):
        return False
    if chunk_range is None or not (chunk_range[0] <= start and end <= chunk_range[1]):
        return False
    return page_of_start is not None and citation.get("page") == page_of_start


# --------------------------------------------------------------------------- aggregation


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def latency_stats(values: Sequence[float | None]) -> dict:
    """n, mean and percentiles of the timings given; a pair with no timing (None: it got no answer,
    e.g. its PDF never converted) is left out, not counted as 0 ms."""
    vals = sorted(float(v) for v in values if v is not None)
    if not vals:
        return {"n": 0, "mean": None, "p50": None, "p95": None, "max": None}

    def pct(q: float) -> float:
        i = max(0, min(len(vals) - 1, math.ceil(q * len(vals)) - 1))
        return round(vals[i], 1)

    return {
        "n": len(vals),
        "mean": round(sum(vals) / len(vals), 1),
        "p50": pct(0.5),
        "p95": pct(0.95),
        "max": round(vals[-1], 1),
    }


def metrics(records: Iterable[PairRecord]) -> dict:
    """The figures for a set of pairs (all of them, or one clause type's)."""
    recs = list(records)
    present = [r for r in recs if r.present]
    absent = [r for r in recs if not r.present]
    got = tot = got_m = 0
    pair_hits = 0
    for r in present:
        g, t = parts_retrieved(r)
        gm, _ = parts_retrieved(r, merged=True)
        got, tot, got_m = got + g, tot + t, got_m + gm
        pair_hits += bool(g)
    pages = [j for r in present for j in page_judgements(r)]
    first_pages = [j for r in present for j in page_judgements(r, any_occurrence=False)]
    valid = [v for r in recs for v in r.citation_valid]
    answered_absent = [r for r in absent if r.status not in NOT_RUN]
    answered_present = [r for r in present if r.status not in NOT_RUN]
    return {
        "pairs": len(recs),
        "present": len(present),
        "absent": len(absent),
        "gold_parts": tot,
        "recall_at_k": _rate(got, tot),
        "recall_at_k_merged": _rate(got_m, tot),
        "pair_recall_at_k": _rate(pair_hits, len(present)),
        "hit_rate": _rate(sum(is_hit(r) for r in present), len(present)),
        "citation_page_accuracy": _rate(sum(pages), len(pages)),
        "page_judged_citations": len(pages),
        "citation_page_accuracy_first_occurrence": _rate(sum(first_pages), len(first_pages)),
        "citation_validity": _rate(sum(valid), len(valid)),
        "citations": len(valid),
        "silent_source_rate": _rate(
            sum(r.status == "not_found" for r in answered_absent), len(answered_absent)
        ),
        "false_not_found_rate": _rate(
            sum(r.status == "not_found" for r in answered_present), len(answered_present)
        ),
        # of the present clauses answered not_found, those whose closest sentence (shown to the reviewer)
        # is the clause by the hit criterion: a wrong not_found that still points at the clause
        "false_not_found_closest_hit_rate": _rate(
            sum(closest_is_hit(r) for r in answered_present if r.status == "not_found"),
            sum(r.status == "not_found" for r in answered_present),
        ),
        "found": sum(r.status == "found" for r in recs),
        "unverified": sum(r.status == "unverified" for r in recs),
        "failed": sum(r.status == "failed" for r in recs),
    }


def precision_recall(records: Iterable[PairRecord], recall_for_precision: float = 0.8) -> dict:
    """The precision-recall curve of found answers ranked by the engine's confidence, as the CUAD paper
    reports its models (precision: hits among the answers kept; recall: hits over present pairs); its
    area (AUPR, step-wise: each hit adds its precision times its share of recall) and the precision at
    ``recall_for_precision`` (None when the answers never reach that recall). Answers without a
    confidence rank last, so an engine that gives none is scored as if it ranked at random."""
    recs = list(records)
    present = sum(1 for r in recs if r.present)
    found = [r for r in recs if r.status == "found"]
    found.sort(key=lambda r: -(r.confidence if r.confidence is not None else -1.0))
    hits = area = 0.0
    curve: list[dict] = []
    precision_at = None
    for i, r in enumerate(found, 1):
        if not is_hit(r):
            continue
        hits += 1
        precision = hits / i
        area += precision / present if present else 0.0
        recall = hits / present if present else 0.0
        if precision_at is None and recall >= recall_for_precision:
            precision_at = round(precision, 4)
        if not curve or recall - curve[-1]["recall"] >= 0.05:
            curve.append(
                {
                    "recall": round(recall, 4),
                    "precision": round(precision, 4),
                    "confidence": r.confidence,
                }
            )
    return {
        "aupr": round(area, 4),
        f"precision_at_{round(recall_for_precision * 100)}_recall": precision_at,
        "answers": len(found),
        "with_confidence": sum(1 for r in found if r.confidence is not None),
        "curve": curve,
    }


def timings(records: Sequence[PairRecord]) -> dict:
    return {
        "retrieval": latency_stats([r.latency_ms.get("retrieval") for r in records]),
        "extraction": latency_stats([r.latency_ms.get("extraction") for r in records]),
    }


def summarise(records: Iterable[PairRecord]) -> dict:
    """``{"overall": metrics, "timings_ms": {...}, "per_clause_type": {name: {**metrics, "timings_ms"}}}``."""
    recs = list(records)
    by_type: dict[str, list[PairRecord]] = {}
    for r in recs:
        by_type.setdefault(r.clause_type, []).append(r)
    return {
        "overall": metrics(recs),
        "precision_recall": precision_recall(recs),
        "timings_ms": timings(recs),
        "per_clause_type": {
            name: {**metrics(rows), "timings_ms": timings(rows)} for name, rows in sorted(by_type.items())
        },
    }


# --------------------------------------------------------------------------- calibration


def with_threshold(rec: PairRecord, threshold: float) -> str:
    """The status the offline engine would report with ``threshold`` (its score is the best sentence's)."""
    if rec.score is None or rec.status not in ("found", "not_found"):
        return rec.status
    if rec.status == "not_found" and not rec.clause_text:
        return "not_found"
    return "found" if rec.score >= threshold else "not_found"


def calibrate_threshold(records: Sequence[PairRecord], candidates: Sequence[float]) -> dict:
    """Pick the not_found threshold that maximises hit rate + silent-source rate (balanced accuracy of
    the two kinds of pair) over ``records``, which must have been run with threshold 0 so every pair
    carries its best answer and score. Returns the choice and the curve."""
    present = [r for r in records if r.present]
    absent = [r for r in records if not r.present and r.status not in NOT_RUN]  # answered ones, as in metrics
    hits = [(r, is_hit(r)) for r in present]
    curve = []
    for t in candidates:
        hit = sum(ok and with_threshold(r, t) == "found" for r, ok in hits)
        silent = sum(with_threshold(r, t) == "not_found" for r in absent)
        hr, ss = (hit / len(present) if present else 0.0), (silent / len(absent) if absent else 0.0)
        curve.append(
            {
                "threshold": round(t, 4),
                "hit_rate": round(hr, 4),
                "silent_source_rate": round(ss, 4),
                "objective": round(hr + ss, 4),
            }
        )
    # on a tie the lower threshold: a clause missed ends an auditor's search, a wrong answer is seen and
    # rejected (the curve runs from the lowest threshold, and max keeps the first of equals)
    best = max(curve, key=lambda c: c["objective"])
    return {
        "threshold": best["threshold"],
        "objective": "hit_rate + silent_source_rate",
        "best": best,
        "curve": curve,
    }
