"""Citation verification: the server, not the model, decides where a quote is.

For each citation ``{chunk_id, page, quote}`` the quote is searched in the cited
chunk's text after normalisation (whitespace runs incl. ``\\f``/newlines collapse
to one space, curly quotes and dashes fold to ASCII, soft hyphens and
line-end hyphenation vanish, superscript digits and "^1^" marks read as a space,
NFKD with accents dropped, so precomposed and decomposed letters match). A quote
must start and end on whole words and whole numbers, with their currency and
percent signs ("$247" or "247.83" of "$247.83" is refused; Chinese and Japanese,
written without spaces, excepted). The match is
mapped back to EXACT absolute offsets in the document; the page comes from the
document's page table, never from the model. A quote may run past the cited chunk
into an overlapping neighbour as long as it starts or ends inside the cited chunk;
it is then kept as one citation per chunk (``within_chunks``), so every stored
quote lies inside the chunk it names. A quote that reads across a page break
without the running header/footer in between (``furniture``) is found and kept
as the parts on each side (``around_furniture``).

Exact values in ``clause_text`` (money, percentages, dates, IDs, numbers with
units, bare numbers) must occur verbatim in the verified cited text, so a
paraphrased value ("~$250" for "$247.83") fails. And ``clause_text`` itself must
be the cited text, word for word and in order (``check_grounding``: words left out
are marked "…"), so a clause the model wrote itself cannot pass on the strength of
a quote of two words, and a dropped "not" or a swapped party cannot pass at all.

Errors are specific sentences meant to be shown to the model on retry.

Rooms: ``normalise`` (what two spellings share), ``locate`` (where a quote is), ``values`` (exact
values), ``grounding`` (clause text = its quotes), ``citations`` (the verifier that uses them).
This package's names below are its public face.
"""

from extraction.verify.citations import (
    MIN_QUOTE_CHARS,
    NOT_FOUND,
    VerificationResult,
    VerifiedCitation,
    around_furniture,
    joined_quotes,
    verify_citation,
    verify_extraction,
    within_chunks,
)
from extraction.verify.grounding import ELISION, check_grounding
from extraction.verify.locate import closest_passage, find_passage
from extraction.verify.normalise import norm, normalise
from extraction.verify.values import (
    ValueSource,
    check_values,
    exact_values,
    holds_values,
    value_spans,
    values_asked,
)

__all__ = [
    "ELISION",
    "MIN_QUOTE_CHARS",
    "NOT_FOUND",
    "ValueSource",
    "VerificationResult",
    "VerifiedCitation",
    "around_furniture",
    "check_grounding",
    "check_values",
    "closest_passage",
    "exact_values",
    "find_passage",
    "holds_values",
    "joined_quotes",
    "norm",
    "normalise",
    "verify_citation",
    "verify_extraction",
    "value_spans",
    "values_asked",
    "within_chunks",
]
