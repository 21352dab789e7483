"""A contract's type read from its title, for documents uploaded without one. Pure.

Managers read accuracy per document type × clause type × page section; a document the admin
uploaded without a type would land in "unclassified". Most contracts name their type in the
title ("EXCLUSIVE DISTRIBUTOR AGREEMENT", "Mutual Non-Disclosure Agreement"), so the type is read from
the words before "Agreement" in the first title line of the opening text that names one; when none does,
from the sentence that names the agreement ("This Hosting Agreement ..."). The name is the run of
capitalised words right before "Agreement" ("that certain Domain Name License Agreement"): a scan's body
lines are as short as a title, and "the Lessor's maintenance programme during each contract year" names
no contract. In it the type is the one named last (the head of the compound: "Trademark License"), and
"Services" only when no other type is named ("Transportation Services"), as CUAD files them.
The names are CUAD's 25 contract types (CUAD v1, The Atticus Project, CC BY 4.0) plus
non-disclosure agreements and leases (a lease is often titled without "Agreement": "WAREHOUSE LEASE").
``bench/doctype_accuracy.py`` measures how many contracts get CUAD's type from their text alone
(docs/decisions.md, ingest.doctype). When the title names none and the run's engine is Claude,
``extraction.doc_type`` asks Claude.

The reader is pure; ``type_choices`` asks the database which names an engagement already uses.
"""

from __future__ import annotations

import re

from ingest.models import Document

# (type, words that name it in a title); a type's words are searched whole, case-insensitively
TYPES: tuple[tuple[str, str], ...] = (
    ("Non-Disclosure", r"non-?\s?disclosure|confidentiality|nda"),
    ("Co-Branding", r"co-?\s?brand\w*"),
    ("Joint Venture", r"joint\s+venture"),
    ("Strategic Alliance", r"(?:strategic\s+)?alliance"),
    ("Non-Compete", r"non-?\s?compet\w*|non-?\s?solicit\w*"),
    ("Affiliate", r"affiliate"),
    ("Agency", r"agency|agent"),
    ("Collaboration", r"collaborat\w*|co-?operat\w*"),
    ("Consulting", r"consult\w*|advisory"),
    ("Development", r"development"),
    ("Distributor", r"distribut\w*"),
    ("Endorsement", r"endorse\w*"),
    ("Franchise", r"franchis\w*"),
    ("Hosting", r"hosting|web\s?site"),
    ("IP", r"intellectual\s+property|patent|trademark|copyright"),
    ("License", r"licen[cs]\w*"),
    ("Maintenance", r"maintenance|support"),
    ("Manufacturing", r"manufactur\w*"),
    ("Marketing", r"(?:re)?marketing"),
    ("Outsourcing", r"outsourc\w*"),
    ("Promotion", r"promot\w*"),
    ("Reseller", r"resell\w*|resale"),
    ("Service", r"services?|servicing"),
    ("Sponsorship", r"sponsor\w*"),
    ("Supply", r"supply|purchase"),
    ("Transportation", r"transport\w*|shipping|freight|carriage"),
    ("Lease", r"(?:sub)?leases?|leasing|tenancy"),
)
_PATTERNS = [(name, re.compile(rf"\b(?:{words})\b", re.I)) for name, words in TYPES]
# buying shares, securities or a business ("Stock Purchase Agreement") is no supply contract: no type of
# the list names it
_DEAL_PURCHASE = re.compile(
    r"\b(?:stock|shares?|assets?|securities|equity|units?|notes?|warrants?|"
    r"interests?)\s+purchase\b",
    re.I,
)
_TITLE_LINE = re.compile(r"\b(?:agreement|contract)\b", re.I)
# a lease is often titled without "Agreement": "WAREHOUSE LEASE", "Deed of Lease"
_LEASE_TITLE = re.compile(r"\b(?:sub)?lease$", re.I)
_JOINING_WORDS = frozenset({"and", "&", "of", "for", "the", "to", "in", "on", "with", "or", "a", "an", "-"})
_NAMING_SENTENCE = re.compile(r"\bthis\s+([A-Za-z][\w\s,&/-]{0,80}?)\s+(?:agreement|contract)\b", re.I)
OPENING_CHARS = 3000
TITLE_MAX_CHARS = 150


def type_in(text: str) -> str | None:
    """The type ``text`` (a title's words) names: the one named last, the head of the compound ("Trademark
    License", "Licence and Maintenance"); a service contract only when nothing more particular is named
    ("Transportation Services"). Ties: the order of ``TYPES``."""
    text = _DEAL_PURCHASE.sub(lambda m: " " * len(m.group(0)), text)
    named = [
        (m.end(), -order, name)
        for order, (name, pattern) in enumerate(_PATTERNS)
        for m in pattern.finditer(text)
    ]
    particular = [n for n in named if n[2] != "Service"] or named
    return max(particular)[2] if particular else None


def _named_run(words: str) -> str:
    """The words right before "Agreement" that read as its name: the run of capitalised words, numbers and
    joining words that ends there ("that certain Domain Name License" -> "Domain Name License"; "on the
    Lessor's maintenance programme during each" -> nothing)."""
    listed = words.split()
    start = len(listed)
    while start and (
        not listed[start - 1][0].isalpha()
        or listed[start - 1][0].isupper()
        or listed[start - 1].lower() in _JOINING_WORDS
    ):
        start -= 1
    return " ".join(listed[start:])


def classify(text: str) -> str | None:
    """The contract type named by the title of ``text`` (a document's text), or None."""
    opening = text[:OPENING_CHARS]
    previous = ""
    for line in opening.splitlines():
        line = line.strip(" #*\t")
        if line and len(line) <= TITLE_MAX_CHARS and _TITLE_LINE.search(line):
            # the words before "Agreement" ("CONTRACT MANUFACTURING AGREEMENT": those after "Contract"); a
            # title broken before it ("SUPPLY\nAGREEMENT") reads the line above
            found = type_in(_named_run(_title_words(line) or previous))
            if found:
                return found
        elif (
            line[:1].isalpha()
            and len(line.split()) <= 6
            and _LEASE_TITLE.search(line)
            and _named_run(line) == line
        ):
            return "Lease"  # a title of capitalised words that ends in "Lease" (not a numbered heading)
        previous = line or previous
    m = _NAMING_SENTENCE.search(opening)
    return type_in(m.group(1)) if m else None


def _title_words(line: str) -> str:
    """The words of a title line before its first "Agreement" or "Contract" that has any before it."""
    return next((part.strip() for part in _TITLE_LINE.split(line)[:-1] if part.strip()), "")


def type_choices(engagement) -> list[str]:
    """The type names to offer (the upload and change forms, Claude's choices): the engagement's
    own types first, then the title reader's, without repeats. One engagement should name each
    type one way, since managers read accuracy per document type."""
    used = (
        Document.objects.filter(engagement=engagement)
        .exclude(doc_type="")
        .order_by("doc_type")
        .values_list("doc_type", flat=True)
        .distinct()
    )
    names = list(used)
    seen = {n.casefold() for n in names}
    return names + sorted(name for name, _ in TYPES if name.casefold() not in seen)
