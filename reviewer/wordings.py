"""Wordings of one clause type across contracts: identical and near-identical ones grouped, and a word-level
difference of a wording against another. Pure (plain strings in, plain values out).

Two answers have the *identical* wording when their texts are the same once whitespace runs are one space
(:func:`identical_key`). They have a *near-identical* wording when they are the same once case, whitespace,
punctuation and numbers are set aside (:func:`near_key`): "thirty (30) days" and "sixty (60) days" are one
near-identical group of two identical wordings. The heading lines a quote opens with are set aside too
("19.1 Governing Law" above the clause in one contract, "Section 19.2 Governing Law" in another, or none):
they say where the clause stands, not what it says. The comparison page lists the near-identical groups
smallest first (the unusual wordings are the ones an auditor looks for) and shows each wording against the
most common wording of the type (:func:`most_common`).
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ingest.headings import line_heading

T = TypeVar("T")

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PUNCTUATION = re.compile(r"[^\w\s#]+")
_WORD = re.compile(r"\S+")


def identical_key(text: str) -> str:
    """The text with whitespace runs as one space, trimmed: what identical wordings share."""
    return " ".join(text.split())


def split_heading(text: str) -> tuple[str, str]:
    """The heading lines ``text`` opens with (``ingest.headings.line_heading``; "" when none) and the rest,
    never empty: a text that is all headings is all rest."""
    lines = text.strip().splitlines()
    opening = 0
    while opening < len(lines) - 1 and line_heading(lines[opening].strip()) is not None:
        opening += 1
    return "\n".join(lines[:opening]), "\n".join(lines[opening:])


def near_key(text: str) -> str:
    """What near-identical wordings share: the text after the heading lines it opens with
    (:func:`split_heading`), case-folded, each number as "#", punctuation gone, whitespace runs as one space
    ("Thirty (30) days," -> "thirty # days")."""
    folded = _NUMBER.sub("#", split_heading(text)[1].casefold())
    return " ".join(_PUNCTUATION.sub(" ", folded).replace("_", " ").split())


@dataclass
class Wording(Generic[T]):
    """One identical wording and the items (answers) that have it."""

    text: str  # as the first of its items has it
    items: list[T] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.items)


@dataclass
class Group(Generic[T]):
    """Near-identical wordings, the most common first."""

    key: str
    wordings: list[Wording[T]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(w.size for w in self.wordings)


def group(items: Iterable[T], text_of: Callable[[T], str]) -> list[Group[T]]:
    """The items grouped by near-identical wording, and within a group by identical wording.

    Groups come smallest first (the unusual wordings), ties by their most common wording's text; within a
    group the wordings come most common first, then by text."""
    groups: dict[str, dict[str, Wording[T]]] = {}
    for item in items:
        text = text_of(item)
        wordings = groups.setdefault(near_key(text), {})
        wordings.setdefault(identical_key(text), Wording(text)).items.append(item)
    out = [
        Group(key, sorted(wordings.values(), key=lambda w: (-w.size, identical_key(w.text))))
        for key, wordings in groups.items()
    ]
    out.sort(key=lambda g: (g.size, identical_key(g.wordings[0].text)))
    return out


CENTRAL_POOL = 200  # tied wordings weighed for the reference; later ones lose the tie (bounds the work)


def most_common(groups: list[Group[T]]) -> Wording[T] | None:
    """The most common identical wording of all (of the largest near-identical group on a tie). Among
    wordings still tied (every contract words it alike or none does) the most central one: the one whose
    words most resemble all the others' (:func:`_likeness`), so that each wording's difference from it is
    small; the first of equals."""
    ranked = [((w.size, g.size), w) for g in groups for w in g.wordings]
    if not ranked:
        return None
    top = max(rank for rank, _ in ranked)
    tied = [w for rank, w in ranked if rank == top][:CENTRAL_POOL]
    if len(tied) == 1:
        return tied[0]
    everyone = [(_word_set(w.text), w.size) for _, w in ranked]

    def centrality(wording: Wording[T]) -> float:
        mine = _word_set(wording.text)
        return sum(n * _likeness(mine, theirs) for theirs, n in everyone)

    return max(tied, key=centrality)


def _word_set(text: str) -> frozenset[str]:
    return frozenset(near_key(text).split())


def _likeness(a: frozenset[str], b: frozenset[str]) -> float:
    """Words in common over words in either (1.0 for two empty texts)."""
    return len(a & b) / len(a | b) if a or b else 1.0


def word_diff(base: str, other: str) -> list[tuple[str, str]]:
    """``other`` against ``base`` word by word: [(op, words)], op one of "same", "ins" (in ``other`` only),
    "del" (in ``base`` only); a changed run is its "del" then its "ins"."""
    a, b = _WORD.findall(base), _WORD.findall(other)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", " ".join(a[i1:i2])))
            continue
        if op in ("replace", "delete"):
            out.append(("del", " ".join(a[i1:i2])))
        if op in ("replace", "insert"):
            out.append(("ins", " ".join(b[j1:j2])))
    return out


def diff_html(base: str, other: str) -> str:
    """:func:`word_diff` as escaped HTML: inserted words in ``<ins>``, removed ones in ``<del>``. The
    heading lines each text opens with are not compared: ``other``'s are shown above, as they are."""
    heading, body = split_heading(other)
    parts = []
    for op, words in word_diff(split_heading(base)[1], body):
        text = html.escape(words)
        parts.append(text if op == "same" else f"<{op}>{text}</{op}>")
    shown = f'<span class="wording-heading">{html.escape(heading)}</span>\n' if heading else ""
    return shown + " ".join(parts)
