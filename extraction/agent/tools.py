"""The agent's progressive-disclosure tools, over plain data.

``ToolBox.run(name, input)`` executes ``search_document``, ``read_chunk``,
``regex_document``, ``load_skill`` and ``read_history`` and returns
``(text, is_error)``; every passage of document text it returns is headed by a
provenance tag (see ``provenance``), so the model can cite what it read. It keeps
the ids of the chunks it has shown (``chunks_read``, latest last) for the per-turn note.
``search`` is injected (``query, k -> chunks``) so the box stays pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import regex

from extraction.agent import skill_loader
from extraction.agent.compaction import read_archive
from extraction.agent.context import ContextPack, segment_blocks
from extraction.agent.provenance import ProvenanceTag, render_tag
from extraction.docview import DocumentView, ScoredChunk
from ingest.chunker import ChunkSpec
from ingest.pages import page_of

Search = Callable[[str, int], Sequence["ChunkSpec | ScoredChunk"]]
REGEX_TIMEOUT_S = 2.0
MAX_UNROLLED = 10_000  # pattern items once counted repeats are unrolled (a few MB when compiled)
MATCH_CONTEXT = 160
HISTORY_PAGE_MAX = 20_000  # read_history's most chars a call (its schema's maximum)
DISCLOSURE_TOOLS = {"search_document", "read_chunk", "regex_document", "load_skill", "read_history"}


_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_BRACED_ESCAPES = "pPN"  # \p{Lu}, \P{..}, \N{EM DASH}: braces that are no count
_VERBOSE = re.compile(r"\(\?[a-zA-Z]*x")  # (?x) or (?ix:...): spaces and # comments are ignored


def unrolled_size(pattern: str) -> int:
    """About how many items ``regex`` compiles ``pattern`` to.

    It unrolls a counted repeat into as many copies of its body as the smallest count it
    allows: "a{1000000000}" (13 characters) compiles to a billion nodes, gigabytes, enough
    for the kernel to kill the worker (or the database beside it), and the match timeout
    never starts. "a{0,1000000000}" is one loop and costs nothing. Each literal, escape,
    set or group counts one; a count multiplies the item before it, nested counts multiply.
    A count after a comment or (verbose mode) a space repeats the item before those.
    """
    verbose = _VERBOSE.search(pattern) is not None
    stack = [[0, 0]]  # per open group: items so far, items of its last one (what a count repeats)
    i, n = 0, len(pattern)
    while i < n:
        c, top = pattern[i], stack[-1]
        if pattern.startswith("(?#", i) or (verbose and c == "#"):
            i = pattern.find(")" if c == "(" else "\n", i) + 1 or n
            continue
        if (
            c.isspace()
        ):  # counted, but not what a count after it repeats (an overestimate outside verbose mode)
            top[0] += 1
            i += 1
            continue
        if c == "(":
            stack.append([0, 0])
            i += 1
            continue
        if c == ")" and len(stack) > 1:
            size = stack.pop()[0]
            stack[-1][0] += size
            stack[-1][1] = size
            i += 1
            continue
        m = _COUNT.match(pattern, i) if c == "{" else None
        if m and (m[1] or m[2]):
            times = max(1, int(m[1] or 0))
            top[0] += top[1] * (times - 1)
            top[1] *= times
            i = m.end()
            continue
        if c == "\\":
            i += 2
            if pattern[i - 1 : i] in _BRACED_ESCAPES and pattern[i : i + 1] == "{":
                i = pattern.find("}", i) + 1 or n
        elif c == "[":
            i = _set_end(pattern, i)
        else:
            i += 1
        top[0] += 1
        top[1] = 1
    return sum(s[0] for s in stack)


def _set_end(pattern: str, i: int) -> int:
    """Index just past the ``[...]`` set opening at ``i`` (a "]" first in the set is a literal)."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


class ToolError(Exception):
    """A bad tool call; its message goes back to the model as an error result."""


@dataclass
class ToolBox:
    document: DocumentView
    search: Search | None = None
    files: dict[str, str] = field(default_factory=dict)  # compacted history, by name
    chunks_read: list[str] = field(default_factory=list)
    skills_dir: str | None = None

    def run(self, name: str, data: dict) -> tuple[str, bool]:
        handler = getattr(self, f"_{name}", None) if name in DISCLOSURE_TOOLS else None
        if handler is None:
            return f'unknown tool "{name}"', True
        try:
            return handler(**(data if isinstance(data, dict) else {})), False
        except ToolError as exc:
            return str(exc), True
        except (TypeError, ValueError, OverflowError) as exc:  # k="five", neighbours=1e400: tell the model
            return f"bad arguments for {name}: {exc}", True

    def note_read(self, chunk_ids: Sequence[str]) -> None:
        """Record chunks shown to the model; one shown again moves to the end (the latest read)."""
        for c in chunk_ids:
            if c in self.chunks_read:
                self.chunks_read.remove(c)
            if c:
                self.chunks_read.append(c)

    def render(self, chunks: Sequence[ChunkSpec], header: str) -> str:
        if not chunks:
            return f"{header}\n(no passages)"
        pack = ContextPack(
            "retrieval", tuple(segment_blocks(chunks, source=self.document.source, pages=self.document.pages))
        )
        self.note_read(pack.chunk_ids)
        return f"{header}\n\n{pack.text}"

    # ---- tools
    def _search_document(self, query: str, k: int = 5) -> str:
        if self.search is None:
            raise ToolError("search_document is not available for this document; use regex_document")
        query = str(query).strip()
        if len(query) < 2:
            raise ToolError("query is too short")
        k = max(1, min(int(k), 20))
        hits = [h.chunk if isinstance(h, ScoredChunk) else h for h in self.search(query, k)][:k]
        return self.render(hits, f'search_document("{query}", k={k}): {len(hits)} passages in reading order')

    def _read_chunk(self, chunk_id: str, neighbours: int = 0) -> str:
        chunk = self.document.by_id.get(str(chunk_id))
        if chunk is None:
            raise ToolError(f'chunk "{chunk_id}" does not exist in this document')
        n = max(0, min(int(neighbours), 3))
        ordered = self.document.chunks
        i = next(j for j, c in enumerate(ordered) if c.chunk_id == chunk.chunk_id)
        picked = ordered[max(0, i - n) : i + n + 1]
        return self.render(picked, f"read_chunk({chunk_id}, neighbours={n})")

    def _regex_document(self, pattern: str, max_matches: int = 20) -> str:
        if not isinstance(pattern, str) or not pattern or len(pattern) > 500:
            raise ToolError("pattern must be 1-500 characters")
        if unrolled_size(pattern) > MAX_UNROLLED:
            raise ToolError(
                f"the pattern repeats too much (over {MAX_UNROLLED:,} items once its {{n}} counts are "
                "unrolled); use smaller counts, or {0,n} for a gap of up to n characters"
            )
        try:
            rx = regex.compile(pattern, regex.IGNORECASE | regex.V0)
        except regex.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        limit = max(1, min(int(max_matches), 50))
        text = self.document.text
        lines: list[str] = []
        total = 0
        try:
            for m in rx.finditer(text, timeout=REGEX_TIMEOUT_S):
                if m.end() == m.start():
                    continue
                total += 1
                if len(lines) < limit:
                    lines.append(self._match_block(m.start(), m.end()))
        except TimeoutError:
            raise ToolError(f"the pattern took longer than {REGEX_TIMEOUT_S:.0f}s; simplify it") from None
        head = f"regex_document(/{pattern}/i): {total} matches" + (
            f", first {limit} shown" if total > limit else ""
        )
        return head + ("\n\n" + "\n\n".join(lines) if lines else "")

    def _match_block(self, start: int, end: int) -> str:
        doc = self.document
        chunk = self._chunk_at(start, end)
        lo, hi = max(0, start - MATCH_CONTEXT), min(len(doc.text), end + MATCH_CONTEXT)
        if chunk is not None:  # keep the excerpt inside the chunk it is cited from
            lo, hi = max(lo, chunk.char_start), min(hi, chunk.char_end)
            self.note_read([chunk.chunk_id])
        p1 = page_of(lo, doc.pages)
        p2 = page_of(max(lo, hi - 1), doc.pages)
        tag = ProvenanceTag(
            doc.source,
            (chunk.chunk_id,) if chunk else (),
            p1,
            p2,
            chunk.paragraph if chunk else 0,
            chunk.section if chunk else "",
            lo,
        )
        return f"{render_tag(tag)}\n{doc.text[lo:hi]}"

    def _chunk_at(self, start: int, end: int) -> ChunkSpec | None:
        inside = [c for c in self.document.chunks if c.char_start <= start and end <= c.char_end]
        if inside:
            return min(inside, key=lambda c: c.char_end - c.char_start)
        touching = [c for c in self.document.chunks if c.char_start <= start < c.char_end]
        return touching[0] if touching else None

    def _load_skill(self, name: str) -> str:
        try:
            if self.skills_dir:
                return skill_loader.load_skill(str(name), self.skills_dir)
            return skill_loader.load_skill(str(name))
        except KeyError as exc:
            raise ToolError(str(exc.args[0])) from None

    def _read_history(self, name: str, offset: int = 0, limit: int = 8000) -> str:
        text = self.files.get(str(name))
        if text is None:
            known = ", ".join(sorted(self.files)) or "none"
            raise ToolError(f'no history file "{name}"; files: {known}')
        return read_archive(text, offset, min(int(limit), HISTORY_PAGE_MAX))
