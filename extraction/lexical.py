"""Words of a contract as the lexical signals count them: content-word stems, stop words removed.
Pure. BM25 (``extraction.bm25``) indexes these terms; the offline reader's lexical score counts them.
"""

from __future__ import annotations

import re

_STOP = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "by",
        "with",
        "from",
        "at",
        "as",
        "is",
        "are",
        "be",
        "been",
        "being",
        "was",
        "were",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "any",
        "all",
        "each",
        "such",
        "other",
        "shall",
        "will",
        "may",
        "must",
        "can",
        "hereby",
        "herein",
        "hereof",
        "hereunder",
        "thereof",
        "therein",
        "thereto",
        "which",
        "who",
        "whom",
        "whose",
        "than",
        "then",
        "there",
        "their",
        "them",
        "they",
        "he",
        "she",
        "his",
        "her",
        "if",
        "not",
        "no",
        "nor",
        "so",
        "upon",
        "under",
        "within",
        "without",
        "into",
        "onto",
        "over",
        "per",
        "via",
        "also",
        "only",
        "own",
        "same",
        "both",
        "either",
        "neither",
        "whether",
        "between",
        "during",
        "after",
        "before",
        "until",
        "while",
        "agreement",
        "party",
        "parties",
        "section",
        "clause",
        "contract",
    ]
)


def stem(w: str) -> str:
    for suf in ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            return w[: -len(suf)] + ("y" if suf in ("ies", "ied") else "")
    return w


def terms(text: str) -> list[str]:
    """Content-word stems of ``text`` in order (stop words removed). Hyphenated words are split, so
    "non-transferable", "non- transferable" (a compound broken at a line end in the PDF) and "non
    transferable" read alike, and "non" stays a term (docs/decisions.md, extraction.lexical.terms)."""
    return [
        stem(w) for w in re.findall(r"[a-z][a-z']*[a-z]|[a-z]", text.lower()) if w not in _STOP and len(w) > 1
    ]


def terms_and_pairs(text: str, joiner: str = " ") -> list[str]:
    """The content-word stems of ``text``, then each pair of neighbouring stems joined by ``joiner``
    ("change of control" -> ``change control``): a phrase is a term of its own beside its words, so it
    outscores the same words scattered over a passage. BM25 (``extraction.retrieval.lexical_terms``) and
    the clause finder's words (``extraction.finder.words``) both read a passage this way."""
    stems = terms(text)
    return stems + [f"{a}{joiner}{b}" for a, b in zip(stems, stems[1:])]
