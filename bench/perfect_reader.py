"""A "perfect reader" for the mock Anthropic API (``tests.mock_anthropic``), for measurement only.

Asked for a clause type, it answers ``extract_clause`` quoting the gold span part(s) of cuad-dev for
that (document, clause type) that lie in the text it was shown (whitespace normalised when matching,
quoted exactly as the block shows it, cited with that block's chunk id and page), else
``report_not_found``. Of a pair's gold spans it quotes the one with the most of its text shown. What it
scores is the ceiling the context allows the Claude path, not a model. ``lenient`` also reads through
typographic differences (curly or straight quotes, dashes), quotes a part split over blocks piece by
piece, and widens a part that starts or ends inside a word to whole words.

Data: CUAD v1, The Atticus Project (CC BY 4.0), read from ``../shared/eval/cuad-dev`` (never copied).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from extraction.agent.provenance import parse_blocks
from tests.mock_anthropic import (
    _question_index,
    all_context,
    current_question,
    extract_call,
    message,
    not_found_call,
    tool_use_block,
)

ELISION = " … "


QUOTES = "'‘’‚‛′`´"
DOUBLE_QUOTES = '"“”„‟″'
DASHES = "-‐‑‒–—−"
MIN_PIECE_WORDS = 3  # a piece of a part shorter than this, alone in a block, is not quoted (lenient)


def _char(ch: str, lenient: bool) -> str:
    if lenient:
        for family in (QUOTES, DOUBLE_QUOTES, DASHES):
            if ch in family:
                return "[" + re.escape(family) + "]"
    return re.escape(ch)


def _pattern(text: str | list[str], lenient: bool = False) -> re.Pattern | None:
    """Whitespace-normalised (any run of whitespace matches any other); ``lenient``: also any quote
    mark for any other, any dash for any other, and no space needed after a word ending in a dash."""
    words = text.split() if isinstance(text, str) else text
    if not words:
        return None
    out = []
    for i, w in enumerate(words):
        if i:
            out.append(r"\s*" if lenient and words[i - 1][-1] in DASHES else r"\s+")
        out.append("".join(_char(ch, lenient) for ch in w))
    return re.compile("".join(out))


def _quote(text: str, m: re.Match, lenient: bool) -> str:
    """The matched text; ``lenient``: widened to whole words (a CUAD part may start or end inside one,
    "h day of August 2018", which the server refuses to find as a quote)."""
    start, end = m.span()
    if lenient:
        while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum() and text[end - 1].isalnum():
            end += 1
    return text[start:end]


def _pieces(part: str, blocks: list, lenient: bool) -> list[dict]:
    """Citations quoting ``part`` from the blocks: the whole part from one block, or (``lenient``) the
    part's words covered left to right by the longest run each block shows (a part split over chunk
    or page boundaries), pieces of fewer than MIN_PIECE_WORDS words left out."""
    pat = _pattern(part, lenient)
    if pat is None:
        return []
    for tag, text in blocks:
        m = pat.search(text)
        if m and tag.chunk_ids:
            return [{"chunk_id": tag.chunk_ids[0], "page": tag.page_start, "quote": _quote(text, m, lenient)}]
    if not lenient:
        return []
    words, i, cits = part.split(), 0, []
    while i < len(words):
        best: tuple[int, dict] | None = None
        for tag, text in blocks:
            if not tag.chunk_ids:
                continue
            lo, hi, found = i + 1, len(words), None  # the longest words[i:j] the block shows
            while lo <= hi:
                mid = (lo + hi) // 2
                m = _pattern(words[i:mid], lenient).search(text)  # type: ignore[union-attr]
                if m:
                    found, lo = (mid, _quote(text, m, lenient)), mid + 1
                else:
                    hi = mid - 1
            if found and (best is None or found[0] > best[0]):
                best = (found[0], {"chunk_id": tag.chunk_ids[0], "page": tag.page_start, "quote": found[1]})
        if best is not None and best[0] - i >= min(MIN_PIECE_WORDS, len(words) - i):
            cits.append(best[1])
            i = best[0]
        else:
            i += 1
    return cits


@dataclass
class PerfectReader:
    """``gold``: (doc, clause type) -> its gold spans; ``docs``: a source name in a tag -> doc."""

    gold: dict[tuple[str, str], list[dict]]
    docs: dict[str, str]
    lenient: bool = False  # quote marks and dashes of any kind, parts split over blocks (see _pieces)
    calls: int = 0
    found: int = 0
    not_found: int = 0
    retried: int = 0  # questions asked again after the server refused an answer (answered not found)
    unknown_source: set[str] = field(default_factory=set)

    @classmethod
    def from_corpus(cls, folder: Path, *, lenient: bool = False) -> PerfectReader:
        gold: dict[tuple[str, str], list[dict]] = {}
        for line in (folder / "gold.jsonl").read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                if row["present"]:
                    gold[(row["doc"], row["clause_type"])] = row["spans"] or []
        docs: dict[str, str] = {}
        for line in (folder / "documents.jsonl").read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                for name in (row["doc"], Path(row["pdf"]).name, Path(row["pdf"]).stem):
                    docs[name] = row["doc"]
        return cls(gold, docs, lenient)

    def doc_of(self, source: str) -> str | None:
        for name in (source, Path(source).name, Path(source).stem):
            if name in self.docs:
                return self.docs[name]
        self.unknown_source.add(source)
        return None

    def __call__(self, body: dict) -> dict:
        self.calls += 1
        if (body.get("tool_choice") or {}).get("name") == "classify_document":
            return message(
                [tool_use_block("classify_document", {"doc_type": "Other", "evidence": ""})], "tool_use"
            )
        q = current_question(body)
        if q is None:
            return message([{"type": "text", "text": "I have no clause question to answer."}], "end_turn")
        clause_id, clause_type = q
        if self._answered_since_question(body):  # the server refused the answer: no second guess
            self.retried += 1
            self.not_found += 1
            return not_found_call(clause_id, clause_type)
        blocks = parse_blocks(all_context(body))
        doc = next((d for tag, _ in blocks if (d := self.doc_of(tag.source))), None)
        best: list[dict] = []
        best_chars = 0
        for span in self.gold.get((doc, clause_type), []) if doc else []:
            cits, chars = [], 0
            for part in span.get("parts") or [{"text": span.get("text", "")}]:
                for cit in _pieces(part.get("text", ""), blocks, self.lenient):
                    cits.append(cit)
                    chars += len(cit["quote"])
            if chars > best_chars:
                best, best_chars = cits, chars
        if not best:
            self.not_found += 1
            return not_found_call(clause_id, clause_type)
        self.found += 1
        return extract_call(clause_id, clause_type, ELISION.join(c["quote"] for c in best), best)

    @staticmethod
    def _answered_since_question(body: dict) -> bool:
        msgs = body.get("messages", [])
        return any(
            b.get("type") == "tool_use" and b.get("name") in ("extract_clause", "report_not_found")
            for m in msgs[_question_index(body) :]
            if m.get("role") == "assistant"
            for b in m.get("content") or []
        )
