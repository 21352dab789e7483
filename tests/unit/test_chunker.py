"""Chunker, sentence splitter, heading and page-table units on hard contract text (pure, fast)."""

from __future__ import annotations

import re

import pytest

from ingest.blocks import split_blocks
from ingest.chunker import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_TOKENS,
    ChunkSpec,
    chunk_document,
    estimate_wordpieces,
)
from ingest.headings import inline_heading, line_heading
from ingest.pages import PageSpan, estimate_pages, join_pages, page_of, spans_from_text
from ingest.sentences import sentence_spans, split_oversized

END = re.compile(r"[.!?;:][\"'”’)\]]*$")


def chunks_of(text: str, **kwargs) -> list[ChunkSpec]:
    chunks = chunk_document(text, spans_from_text(text), **kwargs)
    check_invariants(text, chunks, kwargs.get("max_chars", DEFAULT_MAX_CHARS))
    return chunks


def check_invariants(text: str, chunks: list[ChunkSpec], max_chars: int) -> None:
    """What every chunking must satisfy, whatever the text."""
    assert chunks, "non-empty text gives chunks"
    for n, c in enumerate(chunks):
        assert c.text == text[c.char_start : c.char_end]
        assert c.ordinal == n
        assert 0 < len(c.text) <= max_chars
        assert c.text == c.text.strip()
        assert c.page_start <= c.page_end
    # every non-space character is in some chunk, in order
    covered = [False] * len(text)
    for c in chunks:
        for i in range(c.char_start, c.char_end):
            covered[i] = True
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)
    assert len({c.chunk_id for c in chunks}) == len(chunks)


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


# --- sentences ------------------------------------------------------------------------


def test_abbreviations_do_not_end_sentences():
    text = (
        'This Agreement is made by ABC Inc. and XYZ Corp. (the "Parties"). The U.S. Government '
        "shall pay $5.00 per unit. See Sec. 2.1 of the Plan, i.e. the main plan. Payment is due "
        "per Exhibit A. The buyer, John Q. Public, signs as No. 5 on the list."
    )
    assert sentences(text) == [
        'This Agreement is made by ABC Inc. and XYZ Corp. (the "Parties").',
        "The U.S. Government shall pay $5.00 per unit.",
        "See Sec. 2.1 of the Plan, i.e. the main plan.",
        "Payment is due per Exhibit A.",
        "The buyer, John Q. Public, signs as No. 5 on the list.",
    ]


def test_enumerators_and_references_stay_inside_sentences():
    text = "1. The parties agree. (a) First item applies. 2. Second! Really? As stated in Section 2(a). Smith et al. Agree."
    assert sentences(text) == [
        "1. The parties agree.",
        "(a) First item applies.",
        "2. Second!",
        "Really?",
        "As stated in Section 2(a).",
        "Smith et al. Agree.",
    ]


def test_sentence_spans_cover_text_and_are_trimmed():
    text = "  First one.   Second one?\n\nThird, with e.g. an example.  "
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ["First one.", "Second one?", "Third, with e.g. an example."]


def test_oversized_sentence_is_cut_at_clause_punctuation_first():
    clause = "the Licensee shall maintain insurance coverage with reputable carriers at its own cost"
    text = "; ".join(f"({chr(97 + i)}) {clause}" for i in range(20)) + "."
    pieces = split_oversized(text, 0, len(text), 300)
    assert len(pieces) > 1
    for s, e in pieces:
        assert e - s <= 300
    # every cut falls before an enumerated item, never inside a word
    for s, _ in pieces[1:]:
        assert re.match(r"\([a-z]\) ", text[s:])


# --- headings and blocks ----------------------------------------------------------------


@pytest.mark.parametrize(
    "line,level,label",
    [
        ("# Master Services Agreement", 1, "Master Services Agreement"),
        ("## 2. Fees", 2, "2. Fees"),
        ("ARTICLE V", 1, "ARTICLE V"),
        ("ARTICLE 5 -- INDEMNIFICATION", 1, "ARTICLE 5 INDEMNIFICATION"),
        ("Section 12.3 Indemnification", 3, "Section 12.3 Indemnification"),
        ("12. INDEMNIFICATION", 2, "12. INDEMNIFICATION"),
        ("12.3 Limitation of Liability", 3, "12.3 Limitation of Liability"),
        ("C. POLICY CANCELLATION", 2, "C. POLICY CANCELLATION"),
        ("CONFIDENTIALITY", 2, "CONFIDENTIALITY"),
        ("EXHIBIT A", 1, "EXHIBIT A"),
    ],
)
def test_headings_recognised(line, level, label):
    heading = line_heading(line)
    assert heading is not None and (heading.level, heading.label) == (level, label)


@pytest.mark.parametrize(
    "line",
    [
        "| Item | Price |",  # a table row
        "Section 8.2 Optional Redemption of Notes 38",  # a table-of-contents entry
        "2. Commissions on premiums shall be paid to the Agency within 30",  # a clause
        "14.1 NEITHER PARTY SHALL HAVE ANY LIABILITY FOR ANY INDIRECT, SPECIAL, PUNITIVE",  # caps clause
        "[*****] FLAP VALVE BLOCK 1,234",  # redacted table row
        "1,250 units per Contract Year",  # a quantity, not a clause number
        "$5,000,000",
        "The Company shall indemnify the Licensee.",
    ],
)
def test_non_headings_rejected(line):
    assert line_heading(line) is None


def test_inline_heading_opens_a_clause():
    heading = inline_heading("5.2 Indemnification. Each party shall indemnify the other ...")
    assert heading is not None and heading.label == "5.2 Indemnification" and heading.level == 3
    assert inline_heading("5.2 The Licensee shall pay the fees. Then ...") is None


def test_caps_disclaimer_is_text_not_headings():
    text = (
        "12. LIMITATION OF LIABILITY\n\n"
        "IN NO EVENT SHALL EITHER PARTY BE LIABLE TO THE OTHER FOR ANY\n"
        "INDIRECT, INCIDENTAL, SPECIAL OR CONSEQUENTIAL DAMAGES ARISING\n"
        "OUT OF THIS AGREEMENT.\n"
    )
    blocks = split_blocks(text)
    assert [b.kind for b in blocks] == ["heading", "paragraph"]
    assert text[blocks[1].start : blocks[1].end].endswith("OUT OF THIS AGREEMENT.")


def test_wrapped_heading_line_followed_by_lowercase_is_a_sentence():
    text = "The following terms apply.\n12. Confidential Information\nshall mean any information disclosed.\n"
    kinds = [b.kind for b in split_blocks(text)]
    assert "heading" not in kinds


def test_cross_reference_wrapped_to_a_line_start_is_not_a_heading():
    # A sentence that breaks off at "set forth in" / "and" / ",": its next line is the rest of the
    # sentence, not an ARTICLE or EXHIBIT heading (cuad-dev: "... SET FORTH IN" + "ARTICLE 6 OR
    # SECTION 14.2.", "... set forth on" + "EXHIBIT I."). Taken as a heading, it cut the sentence
    # and every later section was filed under it ("EXHIBIT I > 5. Payments").
    for before, line in [
        (
            "THIS SECTION 15.11 IS NOT MEANT TO LIMIT THE OBLIGATION TO PAY THE AMOUNTS SET FORTH IN",
            "ARTICLE 6 OR SECTION 14.2.",
        ),
        ("About shall deliver the impressions, in the amounts also set forth on", "EXHIBIT I."),
        ("Article 6 (Indemnification), Article 7 (Limitation of Liability), and", "Article 9 (General)."),
        ("THE LIMITS DO NOT APPLY TO A BREACH OF SECTION 9,", "SECTION 10 OR ARTICLE 12."),
    ]:
        text = f"4.5 Impressions. {before}\n{line}\n\n5. PAYMENTS AND REPORTS\n\nAbout shall pay the fees.\n"
        blocks = split_blocks(text)
        assert [b.kind for b in blocks] == ["paragraph", "heading", "paragraph"], line
        assert text[blocks[0].start : blocks[0].end].endswith(line)
        chunks = chunks_of(text, max_chars=150)
        assert chunks[0].text.endswith(line)
        assert chunks[-1].section == "5. PAYMENTS AND REPORTS"
    # a heading after a title line or a finished sentence still opens a section
    text = "MASTER AGREEMENT\nARTICLE 1 DEFINITIONS\n\nTerms have these meanings.\n"
    blocks = split_blocks(text)
    assert [b.kind for b in blocks] == ["heading", "heading", "paragraph"]
    assert blocks[1].heading.label == "ARTICLE 1 DEFINITIONS"


# --- chunking ---------------------------------------------------------------------------

PROSE = [
    "The Supplier shall deliver the Products to the Buyer's facility in accordance with the Purchase Order.",
    "Title and risk of loss shall pass to the Buyer upon delivery.",
    "The Buyer may inspect the Products within ten (10) business days after delivery.",
    "Any Products that do not conform to the Specifications may be rejected by written notice.",
    "The Supplier shall, at its option, repair or replace rejected Products at its own cost.",
    "Payment shall be made within thirty (30) days of the date of a correct invoice.",
    "Late payments shall bear interest at the rate of one percent (1%) per month.",
    "Each party shall keep the other's Confidential Information in strict confidence.",
]


def wall_of_text(n: int = 60) -> str:
    return " ".join(PROSE[i % len(PROSE)] + f" Clause ref {i}." for i in range(n))


def test_heading_less_wall_of_text():
    text = wall_of_text()
    assert "\n" not in text
    chunks = chunks_of(text, max_chars=600)
    assert len(chunks) > 5
    for c in chunks:
        assert END.search(c.text), "chunks end at sentence ends"
        assert c.section == ""
        assert c.page_start == c.page_end == 1


def test_never_ends_mid_sentence_and_starts_at_a_sentence():
    text = wall_of_text(40)
    starts = {s for s, _ in sentence_spans(text)}
    ends = {e for _, e in sentence_spans(text)}
    for c in chunks_of(text, max_chars=500):
        assert c.char_start in starts
        assert c.char_end in ends


def test_overlap_is_whole_sentences_and_within_10_to_20_percent():
    text = wall_of_text(80)
    chunks = chunks_of(text, max_chars=1000, overlap=0.15)
    ends = {e for _, e in sentence_spans(text)}
    starts = {s for s, _ in sentence_spans(text)}
    ratios = []
    for a, b in zip(chunks, chunks[1:]):
        shared = a.char_end - b.char_start
        assert shared > 0, "neighbours inside one section overlap"
        assert b.char_start in starts  # overlap starts at a sentence start ...
        assert a.char_end in ends  # ... and the previous chunk ends at a sentence end
        assert b.text.startswith(text[b.char_start : a.char_end])
        ratios.append(shared / len(b.text))
    mean = sum(ratios) / len(ratios)
    assert 0.10 <= mean <= 0.20, mean


def test_headings_start_chunks_without_overlap():
    body = " ".join(PROSE * 3)
    text = f"# One\n\n{body}\n\n# Two\n\n{body}\n\n# Three\n\n{body}\n"
    chunks = chunks_of(text, max_chars=700)
    for title in ("# Two", "# Three"):
        at = text.index(title)
        holder = next(c for c in chunks if c.char_start <= at < c.char_end)
        # a heading opens its chunk, unless only a short section tail comes before it
        assert at == holder.char_start or at - holder.char_start < 0.4 * 700
        if at == holder.char_start:
            assert chunks[holder.ordinal - 1].char_end <= holder.char_start, "no overlap before a heading"
            assert holder.section == title[2:]


def test_numbered_clauses_give_section_paths_and_paragraphs():
    text = (
        "ARTICLE V\nINDEMNIFICATION\n\n"
        "5.1 General. Each party shall indemnify the other party against third-party claims.\n\n"
        "5.2 Procedure. The indemnified party shall give prompt written notice of any claim. "
        "The indemnifying party shall control the defence.\n\n"
        "ARTICLE VI\nTERM\n\n"
        "6.1 Term. This Agreement starts on the Effective Date and lasts five (5) years.\n"
    )
    chunks = chunks_of(text, max_chars=150)
    sections = {c.section for c in chunks}
    assert "ARTICLE V INDEMNIFICATION > 5.2 Procedure" in sections
    six = next(c for c in chunks if "6.1 Term" in c.text)
    assert six.section.startswith("ARTICLE VI TERM")
    assert six.text.startswith("ARTICLE VI"), "a new article starts a new chunk"
    paragraphs = [c.paragraph for c in chunks]
    assert paragraphs == sorted(paragraphs) and paragraphs[0] >= 1


def test_table_rows_are_kept_whole():
    rows = "\n".join(
        f"| {i} | Product {i} | ${i * 10:,}.00 | Delivered to site {i} on schedule |" for i in range(60)
    )
    text = (
        "Pricing follows.\n\n| No | Product | Price | Notes |\n| --- | --- | --- | --- |\n"
        + rows
        + "\n\nEnd of schedule."
    )
    chunks = chunks_of(text, max_chars=400)
    table_chunks = [c for c in chunks if "|" in c.text]
    assert len(table_chunks) > 3
    for c in table_chunks:
        for line in c.text.split("\n"):
            if line.startswith("|"):
                assert line.endswith("|"), "a row is never cut"
    header = next(c for c in chunks if "| No |" in c.text)
    assert "| --- |" in header.text, "the header row stays with its separator"


def test_clause_spanning_a_page_break_stays_whole():
    page1 = "1. Term. " + " ".join(PROSE[:4]) + "\nThe Licensee shall pay the annual fee of two hundred"
    page2 = "thousand dollars ($200,000) on each anniversary of the Effective Date.\n" + " ".join(PROSE[4:])
    text, pages = join_pages([page1, page2])
    chunks = chunk_document(text, pages, max_chars=1000)
    check_invariants(text, chunks, 1000)
    clause = "The Licensee shall pay the annual fee of two hundred\fthousand dollars ($200,000) on each anniversary"
    holder = [c for c in chunks if clause in c.text]
    assert holder, "the clause is whole in one chunk"
    assert holder[0].page_start == 1 and holder[0].page_end == 2


def test_running_page_number_inside_a_sentence_does_not_break_it():
    pages = []
    for n in range(1, 5):
        pages.append(
            f"{PROSE[n]} The Distributor shall purchase the minimum quantities set out in\n\nPage {n} of 4"
        )
    pages = [p + ("" if i == 3 else "") for i, p in enumerate(pages)]
    pages = [pages[0]] + ["Schedule B for each Contract Year. " + p for p in pages[1:]]
    text, spans = join_pages(pages)
    chunks = chunk_document(text, spans, max_chars=2000)
    check_invariants(text, chunks, 2000)
    assert any("set out in\n\nPage 1 of 4\fSchedule B" in c.text for c in chunks)


def test_chunk_ids_are_deterministic_and_content_based():
    text = wall_of_text(30)
    first = chunks_of(text, max_chars=500)
    second = chunks_of(text, max_chars=500)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in second]
    assert all(re.fullmatch(r"[0-9a-f]{24}", c.chunk_id) for c in first)
    changed = chunks_of(text.replace("Clause ref 29.", "Clause ref 99."), max_chars=500)
    assert first[0].chunk_id == changed[0].chunk_id
    assert first[-1].chunk_id != changed[-1].chunk_id


def test_repeated_text_gets_distinct_ids():
    block = "# Notice\n\nAll notices shall be in writing and delivered by hand."
    text = "\n\n".join([block] * 3)
    chunks = chunks_of(text, max_chars=80)
    assert len(chunks) == 3
    assert len({c.text for c in chunks}) == 1
    assert len({c.chunk_id for c in chunks}) == 3


def test_dense_text_respects_the_wordpiece_budget():
    numbers = " ".join(f"{i:,}.{i % 97:02d}" for i in range(100000, 100400)) + "."
    text = "Schedule of amounts: " + numbers
    chunks = chunks_of(text, max_chars=1000, max_tokens=128)
    for c in chunks:
        assert estimate_wordpieces(c.text) + 2 <= 128


def test_estimate_wordpieces_counts_pieces_like_bert():
    assert estimate_wordpieces("the party") == 2
    assert estimate_wordpieces("Indemnification") == 3  # 15 letters -> 3 pieces of 6
    assert estimate_wordpieces("$1,100,000.") == 9  # $ 1 , 10 0 , 00 0 .
    assert estimate_wordpieces("[*****]") == 7


def test_markdown_and_empty_input():
    assert chunk_document("", [PageSpan(1, 0, 0)]) == []
    assert chunk_document("   \n\n  ", spans_from_text("   \n\n  ")) == []
    text = "# Title\n\nOne short paragraph."
    (only,) = chunks_of(text)
    assert only.text == text and only.section == "Title"


# --- pages ------------------------------------------------------------------------------


def test_page_of_bisects_and_gives_break_to_previous_page():
    text, pages = join_pages(["abc", "de", "", "fgh"])
    assert text == "abc\fde\f\ffgh"
    assert [(p.number, p.char_start, p.char_end) for p in pages] == [
        (1, 0, 3),
        (2, 4, 6),
        (3, 7, 7),
        (4, 8, 11),
    ]
    assert page_of(0, pages) == 1
    assert page_of(3, pages) == 1  # the "\f" closing page 1
    assert page_of(4, pages) == 2
    assert page_of(7, pages) == 3
    assert page_of(8, pages) == 4
    assert page_of(99, pages) == 4
    assert page_of(0, []) == 1


def test_join_pages_removes_stray_form_feeds():
    text, pages = join_pages(["a\fb", "c"])
    assert len(pages) == 2 and text == "a\nb\fc"


def test_estimated_pages_break_at_paragraphs():
    paragraphs = [f"Paragraph {i}. " + "word " * 100 for i in range(30)]
    text = "\n\n".join(paragraphs)
    pieces = estimate_pages(text, page_chars=3000)
    assert "".join(pieces) == text
    assert len(pieces) > 3
    for piece in pieces[:-1]:
        assert piece.endswith("\n\n")
        assert 3000 <= len(piece) <= 6100


@pytest.mark.parametrize("seed", range(12))
def test_invariants_on_mixed_generated_documents(seed):
    """Random mixtures of headings, prose, lists, tables, page furniture and page breaks."""
    import random

    rng = random.Random(seed)
    pages = []
    for p in range(rng.randint(1, 6)):
        parts = []
        for _ in range(rng.randint(1, 8)):
            pick = rng.random()
            if pick < 0.15:
                parts.append(
                    rng.choice(["# Terms", "ARTICLE IV\nPAYMENT", "12. INDEMNIFICATION", "Section 3.2 Fees"])
                )
            elif pick < 0.3:
                parts.append(
                    "\n".join(f"| {i} | {rng.choice(PROSE)[:40]} |" for i in range(rng.randint(1, 30)))
                )
            elif pick < 0.4:
                parts.append(
                    "\n".join(f"({chr(97 + i)}) {rng.choice(PROSE)[:-1]};" for i in range(rng.randint(2, 9)))
                )
            elif pick < 0.5:
                parts.append(
                    " ".join(rng.choice(PROSE)[:-1] + "," for _ in range(rng.randint(5, 40))) + " end."
                )
            else:
                words = " ".join(rng.choice(PROSE) for _ in range(rng.randint(1, 12)))
                parts.append("\n".join(words[i : i + 90] for i in range(0, len(words), 90)))
        parts.append(f"Page {p + 1} of 9")
        pages.append("\n\n".join(parts))
    text, spans = join_pages(pages)
    for max_chars in (300, 1000, DEFAULT_MAX_CHARS):
        chunks = chunk_document(text, spans, max_chars=max_chars)
        check_invariants(text, chunks, max_chars)
        for c in chunks:
            assert estimate_wordpieces(c.text) <= DEFAULT_MAX_TOKENS - 2
            assert spans[c.page_start - 1].char_start <= c.char_start
            assert c.char_end <= spans[c.page_end - 1].char_end
