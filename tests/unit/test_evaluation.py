"""The evaluation maths behind metrics.json (pure; no database)."""

from __future__ import annotations

from extraction.evaluation.metrics import (
    PairRecord,
    calibrate_threshold,
    citation_is_valid,
    contains,
    is_hit,
    latency_stats,
    metrics,
    norm_text,
    page_judgements,
    parts_retrieved,
    summarise,
    with_threshold,
)

LAW = "This Agreement shall be governed by the laws of the State of New York."
SPANS = [{"text": LAW, "parts": [{"text": LAW, "pages": [7, 7]}]}]


def rec(**kw) -> PairRecord:
    base = dict(doc="d1", clause_type="Governing Law", present=True, gold_spans=SPANS, retrieved=[])
    base.update(kw)
    return PairRecord(**base)


def test_normalisation_ignores_case_and_punctuation_but_not_words():
    assert norm_text("Governed by the LAWS of New-York.") == "governed by the laws of new york"
    assert contains(norm_text("... shall be GOVERNED by the laws of the State of New York; and"), LAW[15:])
    assert not contains(norm_text("the laws of the State of New Jersey"), "laws of the State of New York")
    assert not contains("governed by thelaws", "the laws")  # whole words only


def test_recall_counts_parts_inside_one_retrieved_chunk_and_merged_runs_separately():
    two_parts = [
        {
            "text": "A B",
            "parts": [
                {"text": "alpha beta gamma", "pages": [1, 1]},
                {"text": "delta epsilon", "pages": [2, 2]},
            ],
        }
    ]
    r = rec(
        gold_spans=two_parts,
        retrieved=["x ALPHA, beta gamma y", "zeta"],
        retrieved_runs=["x alpha beta gamma y delta epsilon"],
    )
    assert parts_retrieved(r) == (1, 2)
    assert parts_retrieved(r, merged=True) == (2, 2)
    m = metrics([r])
    assert m["recall_at_k"] == 0.5 and m["recall_at_k_merged"] == 1.0 and m["pair_recall_at_k"] == 1.0


def test_hit_needs_found_and_jaccard_at_least_half():
    assert is_hit(rec(status="found", clause_text=LAW))
    assert is_hit(rec(status="found", clause_text="governed by the laws of the State of New York"))
    assert not is_hit(rec(status="found", clause_text="The Supplier shall deliver the goods to New York."))
    assert not is_hit(rec(status="unverified", clause_text=LAW))
    assert not is_hit(rec(status="found", clause_text=LAW, present=False, gold_spans=[]))


def test_page_accuracy_judges_only_citations_that_match_a_located_gold_part():
    r = rec(
        status="found",
        clause_text=LAW,
        citations=[
            {
                "page": 7,
                "quote": "governed by the laws of the State of New York",
            },  # inside the part, right page
            {"page": 9, "quote": "Notices shall be sent by courier"},  # matches no gold part: not judged
        ],
    )
    assert page_judgements(r) == [True]
    wrong = rec(status="found", clause_text=LAW, citations=[{"page": 8, "quote": LAW}])
    assert page_judgements(wrong) == [False]
    crossing = rec(status="found", clause_text=LAW, citations=[{"page": 6, "quote": "Section 12. " + LAW}])
    assert page_judgements(crossing) == [True]  # the quote starts on the page before the part
    unlocated = rec(
        status="found",
        clause_text=LAW,
        gold_spans=[{"text": LAW, "parts": [{"text": LAW, "pages": None}]}],
        citations=[{"page": 1, "quote": LAW}],
    )
    assert page_judgements(unlocated) == []


def test_citation_validity_checks_text_chunk_and_page():
    text = "Page one text.\fGoverning law is Delaware."
    start = text.index("Governing")
    cit = {"start": start, "end": len(text), "quote": text[start:], "page": 2}
    assert citation_is_valid(cit, text, (15, len(text)), 2)
    assert not citation_is_valid({**cit, "quote": "Governing law is Ohio."}, text, (15, len(text)), 2)
    assert not citation_is_valid(cit, text, (0, 14), 2)  # not in its chunk
    assert not citation_is_valid(cit, text, (15, len(text)), 1)  # wrong page
    assert not citation_is_valid({**cit, "end": 999}, text, (15, len(text)), 2)


def test_a_false_not_found_whose_closest_sentence_is_the_clause_is_counted():
    rows = [
        rec(status="not_found", closest="This Agreement shall be governed by the laws of New York."),
        rec(status="not_found", closest="Notices are given in writing."),
        rec(status="not_found"),  # the engine kept none
        rec(status="found", clause_text=LAW),
        rec(present=False, gold_spans=[], status="not_found", closest=LAW),  # absent: not a false not_found
    ]
    assert metrics(rows)["false_not_found_closest_hit_rate"] == round(1 / 3, 4)
    assert metrics(rows[3:])["false_not_found_closest_hit_rate"] is None


def test_silent_source_and_false_not_found_rates():
    rows = [
        rec(present=False, gold_spans=[], status="not_found"),
        rec(present=False, gold_spans=[], status="found", clause_text="invented"),
        rec(status="not_found"),
        rec(status="found", clause_text=LAW),
    ]
    m = metrics(rows)
    assert m["silent_source_rate"] == 0.5 and m["false_not_found_rate"] == 0.5 and m["hit_rate"] == 0.5
    assert (m["pairs"], m["present"], m["absent"]) == (4, 2, 2)


def test_a_pair_that_got_no_answer_is_neither_silent_nor_invented_nor_a_false_not_found():
    rows = [
        rec(present=False, gold_spans=[], status="not_found"),
        rec(present=False, gold_spans=[], status="found", clause_text="invented"),
        rec(present=False, gold_spans=[], status="failed"),  # its document never converted: no answer
        rec(status="not_found"),
        rec(status="found", clause_text=LAW),
        rec(status="failed"),
    ]
    m = metrics(rows)
    assert m["silent_source_rate"] == 0.5 and m["false_not_found_rate"] == 0.5  # as the dashboards count them
    assert m["failed"] == 2 and m["absent"] == 3 and m["present"] == 3
    assert metrics([rec(present=False, gold_spans=[], status="failed")])["silent_source_rate"] is None


def test_summary_breaks_down_by_clause_type_and_times():
    rows = [
        rec(
            latency_ms={"retrieval": 10, "extraction": 100},
            status="found",
            clause_text=LAW,
            citation_valid=[True],
        ),
        rec(
            clause_type="Parties",
            latency_ms={"retrieval": 30, "extraction": 300},
            citation_valid=[True, False],
        ),
    ]
    s = summarise(rows)
    assert set(s["per_clause_type"]) == {"Governing Law", "Parties"}
    assert s["overall"]["citation_validity"] == round(2 / 3, 4)
    assert s["timings_ms"]["retrieval"]["p50"] == 10 and s["timings_ms"]["extraction"]["max"] == 300
    # the timings too are broken down by clause type (issue 4, item 11: "timings, and the same by clause type")
    assert s["per_clause_type"]["Parties"]["timings_ms"]["extraction"]["mean"] == 300.0
    assert s["per_clause_type"]["Governing Law"]["timings_ms"]["retrieval"]["n"] == 1
    assert latency_stats([]) == {"n": 0, "mean": None, "p50": None, "p95": None, "max": None}


def test_a_pair_with_no_answer_has_no_timing_and_does_not_count_as_zero_ms():
    answered = rec(latency_ms={"retrieval": 40, "extraction": 200})
    no_answer = rec(
        status="failed", latency_ms={"retrieval": None, "extraction": None}
    )  # its PDF never converted
    s = summarise([answered, no_answer])
    assert s["timings_ms"]["retrieval"] == {"n": 1, "mean": 40.0, "p50": 40.0, "p95": 40.0, "max": 40.0}
    assert s["timings_ms"]["extraction"]["n"] == 1 and s["timings_ms"]["extraction"]["mean"] == 200.0
    assert summarise([no_answer])["timings_ms"]["extraction"]["n"] == 0


def test_threshold_calibration_trades_hits_for_silence():
    rows = [
        rec(status="found", clause_text=LAW, score=0.8),  # a hit, confident
        rec(status="found", clause_text="wrong clause text here", score=0.5),  # a miss
        rec(present=False, gold_spans=[], status="found", clause_text="x", score=0.45),
        rec(present=False, gold_spans=[], status="found", clause_text="y", score=0.2),
    ]
    assert with_threshold(rows[0], 0.9) == "not_found" and with_threshold(rows[0], 0.5) == "found"
    result = calibrate_threshold(rows, [0.1, 0.3, 0.5, 0.7, 0.9])
    assert result["threshold"] == 0.5  # keeps the hit, silences both absent pairs
    assert result["best"]["hit_rate"] == 0.5 and result["best"]["silent_source_rate"] == 1.0
    with_a_failed_pair = calibrate_threshold(
        rows + [rec(present=False, gold_spans=[], status="failed")], [0.5]
    )
    assert with_a_failed_pair["best"]["silent_source_rate"] == 1.0  # a pair with no answer is not scored


def test_a_repeated_text_cited_on_the_page_where_its_copy_is_counts_as_right():
    name = "FEDERATED INVESTMENT MANAGEMENT COMPANY of Pittsburgh"
    spans = [{"text": name, "parts": [{"text": name, "pages": [1, 1]}]}]
    r = rec(
        clause_type="Parties",
        gold_spans=spans,
        status="found",
        clause_text=name,
        citations=[{"page": 2, "quote": name}],
        pdf_pages={
            1: norm_text("Agreement between " + name),
            2: norm_text("signed by " + name + " as adviser"),
        },
    )
    assert page_judgements(r) == [True]
    assert page_judgements(r, any_occurrence=False) == [False]
    r.pdf_pages = {1: norm_text(name), 2: "nothing here"}
    assert page_judgements(r) == [False]
