"""The rerank model (``extraction.agent.rerank``) played in the mock API, for measurement only: a perfect
chooser and a random one, which bound what a real model's choice can do to the Claude path's ceiling.

``Chooser`` answers a ``choose_passages`` request: it reads the clause type and the candidates' chunk
ids from the request, finds their document and full chunk text in the database, and names K numbers.
``perfect``: the candidates holding the gold span of cuad-dev for that (document, clause type) first
(a chunk holds it when it contains a probe of a gold part, ``bench._cuad.probes``: the start or end of
a part, normalised), in fused order, then the rest in fused order; with no gold (an absent pair), the
fused order. ``random``: K numbers drawn without repeats from a generator seeded once per run.
``Router`` sends each request of the mock to the chooser or to the reader (``bench.perfect_reader``).

Data: CUAD v1, The Atticus Project (CC BY 4.0), read from ``../shared/eval/cuad-dev`` (never copied).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field

from bench._cuad import norm, probes
from bench.perfect_reader import PerfectReader
from extraction.agent.rerank import TOOL
from tests.mock_anthropic import message, tool_use_block

MODES = ("perfect", "random")
_CANDIDATE = re.compile(r"^\[(\d+)\] chunk (\S+),", re.M)
_CLAUSE = re.compile(r"^Clause type: (.+)$", re.M)
_K = re.compile(r"Choose exactly (\d+) different passage numbers")


@dataclass
class Chooser:
    reader: PerfectReader  # its gold and its document names
    mode: str = "perfect"
    seed: int = 25
    calls: int = 0
    holding_gold: int = 0  # questions where some candidate held the gold
    gold_kept: int = 0  # of them, where a kept candidate does
    _rng: random.Random = field(init=False)

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {self.mode!r}")
        self._rng = random.Random(self.seed)

    def __call__(self, body: dict) -> dict:
        self.calls += 1
        text = body["messages"][0]["content"]
        text = text if isinstance(text, str) else "\n".join(b.get("text", "") for b in text)
        candidates = [(int(n), cid) for n, cid in _CANDIDATE.findall(text)]
        k = int(_K.search(text)[1])  # type: ignore[index]
        clause_type = _CLAUSE.search(text)[1].strip()  # type: ignore[index]
        numbers = [n for n, _ in candidates]
        holders = self._holders(clause_type, candidates)
        if self.mode == "random":
            picks = self._rng.sample(numbers, k)
        else:
            picks = (holders + [n for n in numbers if n not in holders])[:k]
        if holders:
            self.holding_gold += 1
            self.gold_kept += any(n in holders for n in picks)
        return message([tool_use_block(TOOL, {"passages": picks})], "tool_use")

    def _holders(self, clause_type: str, candidates: list[tuple[int, str]]) -> list[int]:
        """The candidates (numbers, fused order) whose chunk holds a probe of the pair's gold."""
        from ingest.models import Chunk

        rows = list(Chunk.objects.filter(chunk_id__in=[c for _, c in candidates]).select_related("document"))
        if not rows:
            return []
        doc_pk = Counter(r.document_id for r in rows).most_common(1)[0][0]  # ids are content hashes
        document = next(r.document for r in rows if r.document_id == doc_pk)
        doc = self.reader.doc_of(document.original_name or document.title)
        spans = self.reader.gold.get((doc, clause_type)) if doc else None
        if not spans:
            return []
        found, _ = probes({"spans": spans})
        texts = {r.chunk_id: norm(r.text) for r in rows if r.document_id == doc_pk}
        return [n for n, cid in candidates if any(p in texts.get(cid, "") for p in found)]


@dataclass
class Router:
    """The mock's model: ``choose_passages`` requests to the chooser, every other to the reader."""

    reader: PerfectReader
    chooser: Chooser | None = None

    def __call__(self, body: dict) -> dict:
        if (body.get("tool_choice") or {}).get("name") == TOOL:
            if self.chooser is None:
                raise AssertionError("a rerank request with no chooser")
            return self.chooser(body)
        return self.reader(body)
