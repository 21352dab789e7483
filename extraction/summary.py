"""The case summary of one contract: at most ten points, every value verbatim and checked.

Two ways to one shape (:class:`Summary`, a tuple of :class:`Point`):

* :func:`key_terms` (offline): the clauses already extracted from the document, grouped under
  the questions an auditor asks first (what agreement, who, when, how long, money, liability,
  restrictions, law). Each point quotes its clauses verbatim and says where they come from; the
  caller passes what reviewers left standing (a rejected clause is not in it, a corrected one
  comes with the reviewer's text).
* :func:`ask_claude`: Claude reads the whole-document context (the whole text under 12,000
  characters, else the sections by priority, else the chunks retrieved for the summary's topics;
  ``extraction.agent.whole_document``) and answers with bullet points.

Either way the server then looks for every exact value of every point (amounts, dates, ids:
:func:`extraction.verify.exact_values`) in the document text; a value it cannot find is listed
beside its point, never dropped or corrected silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from extraction.agent.claude_call import ClaudeCallError, create_message
from extraction.agent.prompts import SUMMARY_SYSTEM, summary_question
from extraction.agent.whole_document import SUMMARY_QUERIES, task_context
from extraction.docview import DocumentView
from extraction.usage import Usage
from extraction.verify import ValueSource, exact_values

MAX_POINTS = 10
MAX_TOKENS = 2048
# (topic, clause types answering it, in the order they are quoted)
TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Agreement", ("Document Name",)),
    ("Parties", ("Parties",)),
    ("Dates", ("Agreement Date", "Effective Date")),
    ("Term and renewal", ("Expiration Date", "Renewal Term", "Notice Period To Terminate Renewal")),
    ("Termination", ("Termination For Convenience", "Termination")),
    (
        "Money",
        (
            "Payment",
            "Minimum Commitment",
            "Revenue/Profit Sharing",
            "Price Restrictions",
            "Liquidated Damages",
        ),
    ),
    ("Liability", ("Cap On Liability", "Uncapped Liability", "Indemnification", "Insurance")),
    (
        "Restrictions",
        (
            "Exclusivity",
            "Non-Compete",
            "No-Solicit Of Customers",
            "No-Solicit Of Employees",
            "Most Favored Nation",
            "Rofr/Rofo/Rofn",
        ),
    ),
    ("Assignment and control", ("Anti-Assignment", "Change Of Control")),
    ("Governing law", ("Governing Law",)),
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")


class SummaryError(Exception):
    """The summary could not be made; the message says why, in words for the user."""


@dataclass(frozen=True)
class Source:
    clause_type: str
    extraction_id: int
    page: int | None
    text: str  # the clause as it stands (verbatim from the document, or a reviewer's correction)


@dataclass(frozen=True)
class Point:
    topic: str  # "" for a point Claude wrote
    text: str
    sources: tuple[Source, ...] = ()
    unverified: tuple[str, ...] = ()  # exact values the server did not find in the document

    def as_dict(self) -> dict:
        return {
            "topic": self.topic,
            "text": self.text,
            "unverified": list(self.unverified),
            "sources": [
                {
                    "clause_type": s.clause_type,
                    "extraction_id": s.extraction_id,
                    "page": s.page,
                    "text": s.text,
                }
                for s in self.sources
            ],
        }


@dataclass(frozen=True)
class Summary:
    engine: str  # "offline" | "anthropic"
    points: tuple[Point, ...]
    model: str = ""
    context_mode: str = ""  # how Claude saw the document: whole | sections | retrieval | opening
    truncated: bool = False  # Claude stopped at max_tokens; the points are the ones it finished
    usage: Usage = field(default_factory=Usage)

    @property
    def unverified_count(self) -> int:
        return sum(len(p.unverified) for p in self.points)


def key_terms(clauses: Sequence[Source]) -> tuple[Point, ...]:
    """The offline summary: one point per topic that has clauses, their types in ``TOPICS`` order
    (clauses of one type in the order given), at most ``MAX_POINTS`` points; a clause type outside
    ``TOPICS`` (a free question, an admin's own type) is left out."""
    by_type: dict[str, list[Source]] = {}
    for c in clauses:
        if c.text.strip():
            by_type.setdefault(c.clause_type.casefold(), []).append(c)
    points = []
    for topic, types in TOPICS:
        sources = tuple(s for t in types for s in by_type.get(t.casefold(), ()))
        if sources:
            text = "\n".join(f"{s.clause_type}: {s.text.strip()}" for s in sources)
            points.append(Point(topic, text, sources))
    return tuple(points[:MAX_POINTS])


def parse_points(answer: str) -> tuple[Point, ...]:
    """Claude's answer -> points: a bullet line starts a point, other lines continue it (lines before
    the first bullet are a preamble, dropped; an answer without bullets is one point a line)."""
    lines = [line for line in answer.splitlines() if line.strip()]
    bullets = [i for i, line in enumerate(lines) if _BULLET.match(line)]
    if bullets:
        lines = lines[bullets[0] :]
    points: list[str] = []
    for line in lines:
        if _BULLET.match(line) or not bullets or not points:
            points.append(_BULLET.sub("", line).strip())
        else:
            points[-1] += " " + line.strip()
    return tuple(Point("", p) for p in points if p)[:MAX_POINTS]


def check_points(points: Sequence[Point], document_text: str) -> tuple[Point, ...]:
    """Each point with the exact values in it that the document text does not contain."""
    document = ValueSource([document_text])
    return tuple(replace(p, unverified=tuple(document.absent(exact_values(p.text)))) for p in points)


def offline_summary(clauses: Sequence[Source], document_text: str) -> Summary:
    return Summary("offline", check_points(key_terms(clauses), document_text))


def ask_claude(document: DocumentView, *, client, model: str, max_tokens: int = MAX_TOKENS) -> Summary:
    """Claude's summary of ``document`` (one Messages API call; the SDK retries 429/500/529)."""
    pack = task_context(document, SUMMARY_QUERIES)
    try:
        response = create_message(
            client,
            task="summarise this document",
            model=model,
            max_tokens=max_tokens,
            system=SUMMARY_SYSTEM,
            messages=[summary_question(pack)],
        )
    except ClaudeCallError as exc:
        raise SummaryError(str(exc)) from exc
    stop = response.stop_reason
    if stop not in ("end_turn", "max_tokens", "stop_sequence"):
        raise SummaryError(f"Claude stopped without a summary (stop_reason {stop}).")
    answer = "".join(block.text for block in response.content if block.type == "text")
    points = parse_points(answer)
    if stop == "max_tokens" and len(points) > 1:
        points = points[:-1]  # the last point was cut mid-sentence
    if not points:
        raise SummaryError("Claude's answer had no summary points.")
    return Summary(
        "anthropic",
        check_points(points, document.text),
        model=response.model,
        context_mode=pack.mode,
        truncated=stop == "max_tokens",
        usage=Usage().add(response.usage),
    )
