"""Provenance tags and context assembly."""

import pytest

from extraction.agent.context import (
    WHOLE_DOC_MAX_CHARS,
    clause_context,
    headings,
    section_context,
    segment_blocks,
    turn_note,
    whole_document_context,
)
from extraction.agent.provenance import ProvenanceTag, parse_blocks, parse_tag, render_block, render_tag
from extraction.docview import ScoredChunk
from ingest.chunker import ChunkSpec
from ingest.pages import page_of, pages_of_span


def build(sections, page_len=900, size=600, overlap=100):
    """A document of (heading, body) sections, pages of page_len chars split by \\f, overlapping chunks."""
    text = ""
    marks = []
    for head, body in sections:
        marks.append((len(text), head))
        text += f"{head}\n{body}\n\n"
    # insert page breaks every page_len chars (at a space)
    out, pos = [], 0
    while pos < len(text):
        end = min(len(text), pos + page_len)
        if end < len(text):
            end = text.rfind(" ", pos + 1, end) + 1 or end
        out.append(text[pos:end])
        pos = end
    doc = "\f".join(out)
    table, p = [], 0
    for n, t in enumerate(out, 1):
        table.append((n, p, p + len(t)))
        p += len(t) + 1
    # chunks over the final text, section = last heading at or before start
    heads = [(doc.find(h + "\n"), h) for _, h in marks]
    chunks, s, i = [], 0, 0
    while s < len(doc):
        e = min(len(doc), s + size)
        sec = [h for off, h in heads if off <= s]
        chunks.append(
            ChunkSpec(
                f"k{i}",
                i,
                doc[s:e],
                s,
                e,
                page_of(s, table),
                page_of(max(s, e - 1), table),
                i,
                sec[-1] if sec else "",
            )
        )
        if e == len(doc):
            break
        s, i = e - overlap, i + 1
    return doc, table, chunks


def test_tag_round_trip_single_and_multi_page():
    for tag in (
        ProvenanceTag("msa.pdf", ("c_ab12",), 41, 41, 118, "8.2 Limitation of Liability", 90211),
        ProvenanceTag("msa.pdf", ("c1", "c2"), 41, 42, 0, "", 0),
    ):
        line = render_tag(tag)
        assert parse_tag(line) == tag
    assert (
        render_tag(ProvenanceTag("f.pdf", ("c1",), 3, 4, 7, "Fees", 10))
        == "=== §Fees [source:f.pdf | chunk:c1 | p.3-4 | ¶7 | §Fees | @10] ==="
    )


def test_tag_cleans_awkward_fields():
    tag = ProvenanceTag("a|b].pdf", ("c1",), 1, 1, 2, "Sec [A] | B\nC === D", 5)
    parsed = parse_tag(render_tag(tag))
    assert parsed.source == "a/b).pdf" and parsed.section == "Sec (A) / B C == D"
    assert parse_tag("=== not a tag ===") is None


def test_blocks_round_trip_text_exactly():
    blocks = [
        (ProvenanceTag("f", ("a",), 1, 1, 0, "One", 0), "first text\nwith lines\n"),
        (ProvenanceTag("f", ("b",), 1, 2, 1, "Two", 20), "second\f page text"),
        (ProvenanceTag("f", ("c",), 2, 2, 2, "", 40), ""),
    ]
    joined = "\n\n".join(render_block(t, x) for t, x in blocks)
    assert parse_blocks(joined) == blocks


def test_pages_of_span():
    table = [(1, 0, 10), (2, 11, 20), (3, 21, 30)]
    assert page_of(0, table) == 1 and page_of(10, table) == 1 and page_of(11, table) == 2
    assert page_of(99, table) == 3
    assert pages_of_span(5, 15, table) == (1, 2) and pages_of_span(11, 20, table) == (2, 2)


SECTIONS = [
    ("Definitions", "Words mean things. " * 40),
    ("Background", "The parties met. " * 40),
    ("Fees", "Customer pays $247.83 monthly. " * 40),
    ("Summary", "In short, a services deal. " * 40),
    ("Term", "Three years from signing. " * 40),
    ("Conclusion", "Signed by both. " * 40),
]


def test_segments_show_overlap_once_and_keep_exact_text():
    doc, table, chunks = build(SECTIONS)
    blocks = segment_blocks(chunks, source="msa.pdf", pages=table)
    assert "".join(b.text for b in blocks) == doc
    for b in blocks:
        assert doc[b.char_start : b.char_end] == b.text
        assert b.tag.offset == b.char_start and b.tag.chunk_ids == (b.chunk_id,)
        assert (b.tag.page_start, b.tag.page_end) == pages_of_span(b.char_start, b.char_end, table)


def test_clause_context_reading_order_merge_and_tags():
    doc, table, chunks = build(SECTIONS)
    ranked = [
        ScoredChunk(chunks[5], 0.9),
        ScoredChunk(chunks[2], 0.8),
        ScoredChunk(chunks[6], 0.7),
        ScoredChunk(chunks[3], 0.6),
        ScoredChunk(chunks[0], 0.5),
        ScoredChunk(chunks[9], 0.1),
    ]
    pack = clause_context(ranked, source="msa.pdf", pages=table, k=5)
    assert pack.mode == "retrieval"
    assert pack.chunk_ids == ["k0", "k2", "k3", "k5", "k6"]  # top 5, reading order
    starts = [b.char_start for b in pack.blocks]
    assert starts == sorted(starts)
    # k2/k3 and k5/k6 overlap: the overlap appears once
    k3 = next(b for b in pack.blocks if b.chunk_id == "k3")
    assert k3.char_start == chunks[2].char_end
    for tag, text in parse_blocks(pack.text):
        assert doc[tag.offset : tag.offset + len(text)] == text
    assert pack.text.count("=== §") == 5


def test_short_document_goes_in_whole():
    doc, table, chunks = build(SECTIONS[:2])
    assert len(doc) < WHOLE_DOC_MAX_CHARS
    pack = whole_document_context(doc, chunks, source="s.pdf", pages=table)
    assert pack.mode == "whole" and "".join(b.text for b in pack.blocks) == doc


def test_long_document_never_goes_in_whole_sections_by_priority():
    doc, table, chunks = build([(h, b * 3) for h, b in SECTIONS])
    assert len(doc) > WHOLE_DOC_MAX_CHARS
    assert len(headings(chunks)) == 6
    pack = whole_document_context(doc, chunks, source="s.pdf", pages=table, budget_chars=5000)
    assert pack.mode == "sections" and pack.chars <= 5000
    got = {b.tag.section for b in pack.blocks}
    assert "Summary" in got and "Definitions" not in got  # priority beats document order
    starts = [b.char_start for b in pack.blocks]
    assert starts == sorted(starts)


def test_section_priority_order():
    doc, table, chunks = build([(h, b * 3) for h, b in SECTIONS])
    pack = section_context(chunks, source="s.pdf", pages=table, budget_chars=3000)
    assert {b.tag.section for b in pack.blocks} == {"Summary"}


def test_sections_start_with_the_opening_that_no_heading_covers():
    preamble = (
        "EXCLUSIVE DISTRIBUTOR AGREEMENT\nThis Agreement is made between Acme Inc. and Borealis Ltd. "
        "as of April 15, 1994.\n\n"
    )
    doc, table, chunks = build([(h, b * 3) for h, b in SECTIONS])
    shifted = [ChunkSpec("k-open", 0, preamble, 0, len(preamble), 1, 1, 0, "")] + [
        ChunkSpec(
            c.chunk_id,
            c.ordinal + 1,
            c.text,
            c.char_start + len(preamble),
            c.char_end + len(preamble),
            c.page_start,
            c.page_end,
            c.paragraph + 1,
            c.section,
        )
        for c in chunks
    ]
    pack = section_context(shifted, source="s.pdf", budget_chars=3000)
    assert pack.blocks[0].chunk_id == "k-open" and "EXCLUSIVE DISTRIBUTOR AGREEMENT" in pack.text
    assert "Summary" in {b.tag.section for b in pack.blocks} and pack.chars <= 3000


def test_the_budget_cuts_the_sections_chosen_last_not_those_read_last():
    # Definitions come first in the document, Summary (the highest priority) last; the budget holds
    # the opening, all of Summary and part of Definitions
    chunks, pos = [], 0
    for section, size in (
        [("", 1000)] + [("Definitions", 2000)] * 5 + [("Other terms", 2000)] + [("Summary", 2000)] * 2
    ):
        text = (f"[{section or 'opening'} {len(chunks)}] " + "word " * 400)[:size]
        chunks.append(
            ChunkSpec(f"c{len(chunks)}", len(chunks), text, pos, pos + size, 1, 1, len(chunks), section)
        )
        pos += size
    pack = section_context(chunks, source="s.pdf", budget_chars=12000)
    shown = {}
    for b in pack.blocks:
        shown[b.tag.section] = shown.get(b.tag.section, 0) + len(b.text)
    assert shown["Summary"] == 4000 and shown[""] == 1000
    assert shown["Definitions"] == 7000 and "Other terms" not in shown
    assert sum(shown.values()) == 12000


def test_long_document_without_headings_uses_retrieval():
    doc, table, chunks = build([("", "Plain text with no headings at all. " * 600)])
    chunks = [
        ChunkSpec(
            c.chunk_id, c.ordinal, c.text, c.char_start, c.char_end, c.page_start, c.page_end, c.paragraph, ""
        )
        for c in chunks
    ]
    pack = whole_document_context(doc, chunks, source="s.pdf", pages=table, retrieved=chunks[10:13])
    assert pack.mode == "retrieval" and pack.chunk_ids == ["k0", "k10", "k11", "k12"]  # the opening first
    head = whole_document_context(doc, chunks, source="s.pdf", pages=table, budget_chars=2000)
    assert head.mode == "opening" and head.chars == 2000 and head.blocks[0].char_start == 0


def test_turn_note():
    note = turn_note(50_000, 150_000, ["k1", "k2", "k1"])
    assert note == (
        "[turn note] tokens used: 50,000 (25% of 200,000); available: 150,000. "
        "Chunks read so far (2): k1, k2."
    )
    assert "none yet" in turn_note(0, 1000, [])


def test_turn_note_names_the_latest_chunks_read_however_many_a_long_session_read():
    # The note goes, uncached, with every request of a document's session: a 200-page contract's
    # 41 clause questions read hundreds of chunks, and it listed every id, thousands of tokens a turn.
    read = [f"{n:024x}" for n in range(600)]
    note = turn_note(50_000, 150_000, read)
    assert len(note) < 1_500
    assert "Chunks read so far (600, the latest 40): " in note
    assert note.endswith(", ".join(read[-40:]) + ".") and read[559] not in note


@pytest.mark.parametrize("k", [1, 3, 5])
def test_k_limits_blocks(k):
    doc, table, chunks = build(SECTIONS)
    assert len(clause_context(chunks[::2], source="s", pages=table, k=k).blocks) == k


# --------------------------------------------------------------------------- prompts


def test_system_prompt_cached_prefix_then_case_facts():
    from extraction import catalog
    from extraction.agent.case_facts import CaseFacts
    from extraction.agent.prompts import build_system
    from extraction.agent.skill_loader import list_skills

    f1 = CaseFacts("doc_1", "MSA", policy_cap="$247.83")
    f2 = f1.record_extraction("payment-1").with_decision("customer id is cust_4711")
    s1 = build_system(f1, skills=list_skills(), turn_note=turn_note(10, 90, []))
    s2 = build_system(f2, skills=list_skills())
    assert s1[0]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in b for b in s1[1:])
    assert s1[0]["text"] == s2[0]["text"]  # invariant prefix: cache hits across turns
    for t in catalog.CATALOG:
        assert f"- {t.name} [{t.kind}]: {t.description}" in s1[0]["text"]
    assert "- cap-on-liability: " in s1[0]["text"]
    assert "CASE_FACTS v1" in s2[1]["text"] and "$247.83" in s2[1]["text"] and "cust_4711" in s2[1]["text"]
    assert s1[2]["text"].startswith("[turn note]") and len(s2) == 2


def test_clause_question_carries_tagged_context_and_rules():
    from extraction import catalog
    from extraction.agent.prompts import clause_question, rejected_results

    doc, table, chunks = build(SECTIONS)
    pack = clause_context(chunks[:3], source="msa.pdf", pages=table)
    msg = clause_question(catalog.get("Payment"), "payment-1", pack, skill="payment")
    text = msg["content"][0]["text"]
    assert msg["role"] == "user" and text.startswith("clause_id: payment-1\n")
    assert pack.text in text and 'Load the skill "payment"' in text
    assert "Quote verbatim, never paraphrase" in text and "call report_not_found" in text
    fb = rejected_results({"toolu_1": "Citation verification failed: ..."})
    assert fb["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "is_error": True,
        "content": "Citation verification failed: ...",
    }


def test_prompt_and_tools_go_through_the_real_sdk():
    import json

    import anthropic
    import httpx2 as httpx  # the transport package anthropic 2.x uses

    from extraction import catalog
    from extraction.agent.case_facts import CaseFacts
    from extraction.agent.prompts import build_system, clause_question
    from extraction.agent.skill_loader import list_skills
    from extraction.agent.tool_schemas import all_tools
    from tests.anthropic_contract import messages_request_errors

    seen = {}

    def handler(request):
        seen["body"] = json.loads(request.content)
        assert messages_request_errors(seen["body"]) == []  # a request the API takes
        return httpx.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "report_not_found",
                        "input": {"clause_id": "payment-1", "clause_type": "Payment"},
                    }
                ],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        )

    client = anthropic.Anthropic(
        api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    doc, table, chunks = build(SECTIONS)
    skills = list_skills()
    resp = client.messages.create(
        model="claude-test",
        max_tokens=512,
        system=build_system(CaseFacts("doc_1", policy_cap="$247.83"), skills=skills),
        tools=all_tools([n for n, _ in skills]),
        messages=[
            clause_question(
                catalog.get("Payment"), "payment-1", clause_context(chunks, source="msa.pdf", pages=table)
            )
        ],
    )
    body = seen["body"]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "$247.83" in body["system"][1]["text"]
    ext = next(t for t in body["tools"] if t["name"] == "extract_clause")
    assert ext["input_schema"]["properties"]["citations"]["minItems"] == 1
    assert [t["name"] for t in body["tools"]][-2:] == ["extract_clause", "report_not_found"]
    assert resp.content[0].name == "report_not_found" and resp.content[0].input["clause_id"] == "payment-1"
