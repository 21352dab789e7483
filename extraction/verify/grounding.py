"""Grounding: ``clause_text`` must be the cited text, word for word and in order. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from extraction.verify.normalise import norm


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", norm(text).lower())


ELISION = "..."  # "…", "...", "[…]" in clause_text: words of a quote left out, on purpose and visibly


def check_grounding(clause_text: str, quotes: Sequence[str]) -> list[str]:
    """An error unless ``clause_text`` is its quotes, word for word and in order.

    Words are compared case-folded, punctuation aside. A run of the clause may begin anywhere in a
    quote and may end anywhere; it may pass from one quote into another only where the first ends
    and the next begins, so no word inside a quote can be dropped silently ("shall not sublicense"
    is not "shall sublicense"). Words left out must be marked with an ellipsis."""
    quoted = [_words(q) for q in quotes]
    for part in norm(clause_text).split(ELISION):
        words = _words(part)
        reached = _covered(words, quoted)
        if reached < len(words):
            shown = " ".join(words[max(0, reached - 4) : reached + 4])
            return [
                f'clause_text is not the cited text word for word: at "{shown}" it departs from the quotes. '
                "Give the clause exactly as the quotes have it, in their order; where you leave words of a "
                'quote out, write "…" in their place'
            ]
    return []


def _covered(words: list[str], quoted: list[list[str]]) -> int:
    """How many of ``words`` (from the start) the quotes cover as described in :func:`check_grounding`:
    ``len(words)`` when all. A run goes on only into another quote's first word."""
    best = 0
    todo, seen = [(0, -1)], set()  # (position in words, the quote the last run ended; -1: none)
    while todo:
        i, last = todo.pop()
        for k, q in enumerate(quoted):
            if k == last:
                continue
            for o in range(len(q)) if last < 0 else range(min(1, len(q))):
                n = 0
                while i + n < len(words) and o + n < len(q) and words[i + n] == q[o + n]:
                    n += 1
                if not n:
                    continue
                best = max(best, i + n)
                if i + n == len(words):
                    return best
                if o + n == len(q) and (i + n, k) not in seen:  # run on into the next quote
                    seen.add((i + n, k))
                    todo.append((i + n, k))
    return best if words else 0
