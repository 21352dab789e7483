"""The agent's disclosure tools over plain data: every passage provenance-tagged, errors in words."""

from __future__ import annotations

import pytest

from extraction.agent.provenance import parse_blocks
from extraction.agent.tools import ToolBox
from extraction.docview import DocumentView
from ingest.chunker import ChunkSpec
from ingest.pages import spans_from_text

TEXT = (
    "1. Fees. Customer pays $247.83 per pallet.\f2. Law. Governed by the laws of Delaware.\n\n"
    "3. Account. Customer account cust_4711 is billed monthly."
)


def _doc() -> DocumentView:
    pages = tuple(spans_from_text(TEXT))
    chunks, start = [], 0
    for i, part in enumerate(
        [
            "1. Fees. Customer pays $247.83 per pallet.",
            "2. Law. Governed by the laws of Delaware.",
            "3. Account. Customer account cust_4711 is billed monthly.",
        ]
    ):
        s = TEXT.index(part, start)
        page = 1 if s < TEXT.index("\f") else 2
        chunks.append(
            ChunkSpec(f"c{i}", i, part, s, s + len(part), page, page, i, part.split(".")[1].strip())
        )
        start = s + len(part)
    return DocumentView(1, "supply.pdf", TEXT, pages, tuple(chunks))


def test_read_chunk_with_neighbours_is_tagged_and_recorded():
    box = ToolBox(_doc())
    text, err = box.run("read_chunk", {"chunk_id": "c1", "neighbours": 1})
    assert not err
    blocks = parse_blocks(text.split("\n\n", 1)[1])
    assert [t.chunk_ids for t, _ in blocks] == [("c0",), ("c1",), ("c2",)]
    assert [t.page_start for t, _ in blocks] == [1, 2, 2]
    assert box.chunks_read == ["c0", "c1", "c2"]
    box.run("read_chunk", {"chunk_id": "c0"})
    assert box.chunks_read == ["c1", "c2", "c0"]  # read again: the latest read, the last the turn note drops


def test_regex_finds_exact_values_with_their_chunk_and_page():
    box = ToolBox(_doc())
    text, err = box.run("regex_document", {"pattern": r"\$[\d.,]+|cust_\d+"})
    assert not err and "2 matches" in text
    blocks = parse_blocks(text.split("\n\n", 1)[1])
    assert [(t.chunk_ids, t.page_start) for t, _ in blocks] == [(("c0",), 1), (("c2",), 2)]
    assert "$247.83" in blocks[0][1] and "cust_4711" in blocks[1][1]


def test_bad_calls_come_back_as_errors_not_exceptions():
    box = ToolBox(_doc())
    assert box.run("regex_document", {"pattern": "("})[1]
    assert box.run("read_chunk", {"chunk_id": "nope"}) == (
        'chunk "nope" does not exist in this document',
        True,
    )
    assert box.run("search_document", {"query": "fees"})[1]  # no search backend given
    assert box.run("load_skill", {"name": "no-such-skill"})[1]
    assert box.run("read_history", {"name": "history/compacted-001.md"})[1]
    assert box.run("delete_everything", {})[1]


@pytest.mark.parametrize(
    "pattern",
    [
        r"x{2000000}",
        r"(?:\d{1000}){1000}",
        r"(?:ab|cd){3000}[ef]{5}",
        r"(?x)(?:a{100}) {1000}",
        r"(?:a{100})(?#note){1000}",
        "(?x)(?:a{100}) # a comment\n{1000}",
    ],
)
def test_a_pattern_that_would_unroll_into_gigabytes_is_refused_before_it_is_compiled(pattern):
    # regex compiles "x{n}" as n copies of "x": a 13-character "x{1000000000}" from the model took
    # gigabytes and got the worker killed. These smaller counts show it in well under a gigabyte.
    text, err = ToolBox(_doc()).run("regex_document", {"pattern": pattern})
    assert err and "repeats too much" in text and "{0,n}" in text


@pytest.mark.parametrize(
    "pattern, matches",
    [
        (r"\$\d{1,3}(?:,\d{3})*(?:\.\d{2})?", 1),
        (r"Customer.{0,5000}monthly", 1),
        (r"Law\p{P}{1,3}", 1),
        (r"cust_\d{4}", 1),
        (r"[{]\d{3}}|\{?Law", 3),
        (r"\N{EM DASH}{0,2}Delaware", 1),
        (r"(?x) cust_ \d{4}  # the account id", 1),
    ],
)
def test_ordinary_counted_patterns_still_run(pattern, matches):
    text, err = ToolBox(_doc()).run("regex_document", {"pattern": pattern})
    assert not err and text.startswith(f"regex_document(/{pattern}/i): {matches} matches")


def test_search_document_uses_the_injected_backend_and_load_skill_reads_a_guide():
    doc = _doc()
    box = ToolBox(doc, search=lambda q, k: [doc.chunks[1]], files={"history/compacted-001.md": "# old turns"})
    text, err = box.run("search_document", {"query": "governing law", "k": 3})
    assert not err and "chunk:c1" in text
    text, err = box.run("load_skill", {"name": "payment"})
    assert not err and text.startswith("# skill: payment")
    text, err = box.run("read_history", {"name": "history/compacted-001.md"})
    assert not err and text.startswith("# old turns")


def test_read_history_pages_a_long_file_within_the_tools_limit():
    box = ToolBox(_doc(), files={"history/compacted-001.md": "x" * 50_000})
    text, err = box.run("read_history", {"name": "history/compacted-001.md", "limit": 1_000_000})
    assert not err
    assert text.split("\n")[0] == "x" * 20_000 and text.endswith("[... 30000 more chars; next offset 20000]")
