"""Reading a corpus folder for ``manage.py evaluate``: a malformed line is named before any work starts."""

from __future__ import annotations

import json

import pytest

from extraction.evaluation.corpus import load_corpus

DOC = {"doc": "c1", "pdf": "pdf/c1.pdf"}


def corpus(tmp_path, gold_lines, doc_lines=None):
    (tmp_path / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in doc_lines or [DOC]))
    (tmp_path / "gold.jsonl").write_text(
        "".join(g if isinstance(g, str) else json.dumps(g) + "\n" for g in gold_lines)
    )
    return tmp_path


def test_an_absent_pair_may_leave_out_its_spans(tmp_path):
    c = load_corpus(corpus(tmp_path, [{"doc": "c1", "clause_type": "Governing Law", "present": False}]))
    assert c.gold[0]["spans"] == []


def test_a_present_pair_without_spans_is_refused_it_could_never_be_a_hit(tmp_path):
    folder = corpus(tmp_path, [{"doc": "c1", "clause_type": "Parties", "present": True}])
    with pytest.raises(ValueError, match=r"c1 / Parties is present but has no spans"):
        load_corpus(folder)


def test_a_line_that_is_not_json_is_named_with_its_file_and_line(tmp_path):
    folder = corpus(tmp_path, [{"doc": "c1", "clause_type": "Parties", "present": False}, "{not json\n"])
    with pytest.raises(ValueError, match=r"gold\.jsonl line 2 is not JSON"):
        load_corpus(folder)


def test_a_gold_line_without_a_needed_key_is_named(tmp_path):
    folder = corpus(tmp_path, [{"doc": "c1", "clause_type": "Parties"}])  # no "present"
    with pytest.raises(ValueError, match=r"gold\.jsonl line 1 lacks \"present\""):
        load_corpus(folder)
    with pytest.raises(ValueError, match=r"documents\.jsonl line 1 lacks \"pdf\""):
        load_corpus(corpus(tmp_path, [], doc_lines=[{"doc": "c1"}]))


@pytest.mark.parametrize("k", [3, 8])  # the engine's own default is 5
def test_claude_is_shown_the_k_chunks_that_evaluate_retrieves_and_scores(k):
    from extraction.agent.context import WHOLE_DOC_MAX_CHARS
    from extraction.agent.engine import clause_pack
    from extraction.docview import ScoredChunk
    from extraction.evaluation.runner import engine_for
    from ingest.chunker import ChunkSpec

    engine = engine_for("anthropic", k=k)
    chunks = [
        ScoredChunk(
            ChunkSpec(
                chunk_id=f"c{i}",
                ordinal=i,
                text=f"Clause {i} text.",
                page_start=1,
                page_end=1,
                char_start=i * 100,
                char_end=i * 100 + 15,
                section="",
                paragraph=i,
            ),
            1.0,
            0.5,
        )
        for i in range(10)
    ]
    view = type(
        "View", (), {"text": "x" * WHOLE_DOC_MAX_CHARS, "chunks": [], "source": "c.pdf", "pages": None}
    )()
    pack = clause_pack(view, chunks[:k], engine.k)
    assert sum(f"Clause {i} text." in pack.text for i in range(10)) == k  # as many as recall@k is measured on


def test_a_gold_line_naming_a_document_documents_jsonl_lacks_is_named_not_dropped(tmp_path):
    folder = corpus(
        tmp_path,
        [
            {"doc": "c1", "clause_type": "Parties", "present": False},
            {"doc": "c2", "clause_type": "Parties", "present": False},
        ],
    )  # a typo, or a lost line
    with pytest.raises(
        ValueError, match=r'gold\.jsonl line 2 names "c2", which documents\.jsonl does not list'
    ):
        load_corpus(folder)
    # a document that --limit leaves out is listed: its lines are left out without a word
    both = corpus(
        tmp_path,
        [
            {"doc": "c1", "clause_type": "Parties", "present": False},
            {"doc": "c2", "clause_type": "Parties", "present": False},
        ],
        doc_lines=[DOC, {"doc": "c2", "pdf": "pdf/c2.pdf"}],
    )
    assert [g["doc"] for g in load_corpus(both, limit=1).gold] == ["c1"]


def test_a_pair_given_twice_is_named_before_any_work(tmp_path):
    # the run holds one task per (document, clause type): a second line failed after the whole ingest
    folder = corpus(
        tmp_path,
        [
            {"doc": "c1", "clause_type": "Parties", "present": False},
            {"doc": "c1", "clause_type": "Governing Law", "present": False},
            {"doc": "c1", "clause_type": "Parties", "present": False},
        ],
    )
    with pytest.raises(ValueError, match=r"gold\.jsonl line 3 repeats c1 / Parties \(line 1\)"):
        load_corpus(folder)


def test_a_document_listed_twice_is_named_before_any_work(tmp_path):
    folder = corpus(
        tmp_path,
        [{"doc": "c1", "clause_type": "Parties", "present": False}],
        doc_lines=[DOC, {"doc": "c2", "pdf": "pdf/c2.pdf"}, {"doc": "c1", "pdf": "pdf/other.pdf"}],
    )
    with pytest.raises(ValueError, match=r'documents\.jsonl line 3 repeats "c1" \(line 1\)'):
        load_corpus(folder)


@pytest.mark.parametrize(
    "spans, said",
    [
        (["Delaware law governs."], "a span is not an object"),  # texts without their parts
        ("Delaware law governs.", '"spans" is not a list'),
        (
            [{"text": "Delaware law governs.", "parts": {"text": "Delaware law governs."}}],
            'a span\'s "parts" is not a list',
        ),
        (
            [
                {
                    "text": "Delaware law governs.",
                    "parts": [{"text": "Delaware law governs.", "pages": ["3", "3"]}],
                }
            ],
            r'a part\'s "pages" is \["3", "3"\], not \[first, last\] or null',
        ),
        ([{"text": 3}], "a span is not an object"),
    ],
)
def test_spans_not_in_the_gold_shape_are_named_before_any_work(tmp_path, spans, said):
    # they were read only by the metrics, after the whole run: an AttributeError or TypeError traceback then
    folder = corpus(
        tmp_path,
        [
            {"doc": "c1", "clause_type": "Parties", "present": False},
            {"doc": "c1", "clause_type": "Governing Law", "present": True, "spans": spans},
        ],
    )
    with pytest.raises(ValueError, match=r"gold\.jsonl line 2: " + said):
        load_corpus(folder)


def test_spans_in_the_gold_shape_are_read(tmp_path):
    spans = [
        {
            "text": "Delaware law governs.",
            "parts": [{"text": "Delaware law governs.", "pages": [3, 3]}, {"text": "law", "pages": None}],
        }
    ]
    folder = corpus(
        tmp_path,
        [
            {"doc": "c1", "clause_type": "Governing Law", "present": True, "spans": spans},
            {"doc": "c1", "clause_type": "Parties", "present": False, "spans": None},
        ],
    )
    assert [g["spans"] for g in load_corpus(folder).gold] == [spans, []]


def test_a_pdf_replaced_under_the_same_name_is_read_again(tmp_path):
    # page texts were cached by path for the life of the process: a benchmark set refreshed with other PDFs
    # under the same names (the worker lives on) had its citations' pages checked against the old ones
    from fpdf import FPDF

    from extraction.evaluation.runner import pdf_page_texts

    def write(path, *pages):
        pdf = FPDF()
        pdf.set_font("Helvetica", size=11)
        for text in pages:
            pdf.add_page()
            pdf.multi_cell(0, 6, text)
        pdf.output(str(path))

    path = tmp_path / "contract.pdf"
    write(path, "The Supplier shall deliver the goods.")
    assert "supplier shall deliver" in pdf_page_texts(path)[1]
    write(path, "This Agreement is governed by the laws of Delaware.", "Signed by both parties.")
    assert sorted(pdf_page_texts(path)) == [1, 2] and "laws of delaware" in pdf_page_texts(path)[1]
    assert pdf_page_texts(tmp_path / "gone.pdf") == {}


@pytest.mark.parametrize(
    "gold_lines, said",
    [
        (
            [{"doc": "c1", "clause_type": "Parties", "present": False}] * 2,
            r"gold\.jsonl line 2 repeats c1 / Parties",
        ),
        (
            [{"doc": "c1", "clause_type": "Parties", "present": True, "spans": ["Acme Inc."]}],
            r"gold\.jsonl line 1: a span is not an object",
        ),
        (
            [{"doc": "c1", "clause_type": "Parties", "present": True}],
            "c1 / Parties is present but has no spans",
        ),
    ],
)
def test_the_benchmark_import_refuses_what_evaluate_would_refuse_naming_the_line(tmp_path, gold_lines, said):
    # the import took such a set (a repeated pair overwrote the first) and each of its runs failed later
    from dashboards.corpus import CorpusError, summarise

    with pytest.raises(CorpusError, match=said):
        summarise(corpus(tmp_path, gold_lines))


def test_the_benchmark_import_counts_the_pairs_evaluate_reads(tmp_path):
    from dashboards.corpus import summarise

    folder = corpus(
        tmp_path,
        [
            {"doc": "c1", "clause_type": "Parties", "present": False},
            {
                "doc": "c1",
                "clause_type": "Governing Law",
                "present": True,
                "spans": [{"text": "Delaware law governs.", "parts": []}],
            },
        ],
        doc_lines=[{**DOC, "contract_type": "License"}],
    )
    summary = summarise(folder)
    assert (summary.document_count, summary.pair_count, summary.absent_count) == (1, 2, 1)
    assert summary.contract_types == ["License"] and summary.problems == [
        "1 PDF(s) listed in documents.jsonl are missing"
    ]
