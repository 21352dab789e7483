"""Compaction policy: tool pairs intact, history readable, case facts untouched."""

from extraction import catalog
from extraction.agent import compaction
from extraction.agent.case_facts import CaseFacts, parse_case_facts
from extraction.agent.compaction import (
    SUMMARY_MARKER,
    CompactionPolicy,
    compact,
    estimate_messages_tokens,
    read_archive,
    safe_cut_points,
    should_compact,
)
from extraction.agent.prompts import build_system

POLICY = CompactionPolicy(window_tokens=6_000, trigger=0.8, target=0.5, keep_last=4)


def turn(i):
    """One agent turn: assistant calls a tool, user returns its result."""
    tid = f"toolu_{i:03d}"
    body = (
        f"=== §8 Fees [source:msa.pdf | chunk:c_{i:03d} | p.{i} | ¶{i} | §8 Fees | @{i * 1000}] ===\n"
        f"Turn {i}: the fee for account cust_4711 is $247.83 per month. " + "Filler text. " * 40
    )
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Looking at part {i}."},
                {"type": "tool_use", "id": tid, "name": "read_chunk", "input": {"chunk_id": f"c_{i:03d}"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": body}]},
    ]


def assert_pairs_intact(messages):
    """Every tool_result answers a tool_use in the message right before it, and vice versa."""
    for j, m in enumerate(messages):
        blocks = m["content"] if isinstance(m["content"], list) else []
        for b in blocks:
            if b.get("type") == "tool_result":
                prev = messages[j - 1]
                assert j > 0 and prev["role"] == "assistant"
                assert b["tool_use_id"] in {x.get("id") for x in prev["content"] if isinstance(x, dict)}
            if b.get("type") == "tool_use":
                nxt = messages[j + 1] if j + 1 < len(messages) else None
                if nxt is not None:
                    assert b["id"] in {x.get("tool_use_id") for x in nxt["content"] if isinstance(x, dict)}
    assert messages[0]["role"] == "user"
    for a, b in zip(messages, messages[1:]):
        assert a["role"] != b["role"], "roles must alternate"


def test_fifty_turns_keep_case_facts_and_readable_history():
    facts = CaseFacts("doc_42", "MSA", policy_cap="$247.83").with_decision("customer id is cust_4711")
    messages = [{"role": "user", "content": "Find the Payment clause. clause_id: payment-1"}]
    archives: dict[str, str] = {}
    compactions = 0
    for i in range(1, 51):
        messages += turn(i)
        facts = facts.record_extraction(f"payment-{i}")
        system = build_system(facts, types=catalog.CATALOG, skills=[])
        sys_tokens = compaction.estimate_tokens(system[1]["text"])  # the cached prefix is counted apart
        due = should_compact(messages, system_tokens=sys_tokens, policy=POLICY)  # as the Agent does each turn
        result = compact(messages, system_tokens=sys_tokens, policy=POLICY) if due else None
        if result is not None:
            compactions += 1
            archives[result.archive_name] = result.archive_text
            messages = result.messages
            assert result.tokens_after < result.tokens_before
        assert_pairs_intact(messages)
        assert estimate_messages_tokens(messages) + sys_tokens <= POLICY.window_tokens
        # CASE_FACTS live in the system prompt, rebuilt each turn, verbatim
        facts_text = system[1]["text"]
        assert "$247.83" in facts_text and "cust_4711" in facts_text
        parsed = parse_case_facts(facts_text)
        assert parsed["policy_cap"] == "$247.83" and parsed["decisions"] == ["customer id is cust_4711"]
        assert parsed["extracted_count"] == i
    assert compactions >= 3
    assert len(archives) == compactions
    # the compacted history is readable: every turn is in some archive or still in the messages
    everything = "\n".join(archives.values()) + repr(messages)
    for i in range(1, 51):
        assert f"Turn {i}: the fee for account cust_4711 is $247.83 per month." in everything
    first = archives["history/compacted-001.md"]
    assert "Find the Payment clause. clause_id: payment-1" in first
    assert "[tool_use id=toolu_001 name=read_chunk]" in first and "[tool_result for toolu_001]" in first
    # the latest summary points at its file and at the earlier ones, and keeps values verbatim
    summary = messages[0]["content"][0]["text"]
    assert summary.startswith(SUMMARY_MARKER)
    assert f"history/compacted-{compactions:03d}.md" in summary
    assert "history/compacted-001.md" in summary
    assert "$247.83" in summary and "cust_4711" in summary


def test_never_splits_tool_use_from_result():
    messages = [{"role": "user", "content": "q"}]
    for i in range(1, 6):
        messages += turn(i)
    cuts = safe_cut_points(messages)
    # a cut right after an assistant tool_use (index of its tool_result) is never allowed
    assert all(messages[i]["role"] == "assistant" for i in cuts)
    assert 2 not in cuts and 1 in cuts


def test_parallel_tool_uses_stay_with_their_results():
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "search_document", "input": {"query": "x"}},
                {"type": "tool_use", "id": "b", "name": "search_document", "input": {"query": "y"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "A" * 5000},
                {"type": "tool_result", "tool_use_id": "b", "content": "B" * 5000},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": "next question"},
    ]
    assert safe_cut_points(messages) == [1, 3, 4]
    r = compact(messages, policy=CompactionPolicy(window_tokens=4_000, keep_last=2))
    assert r is not None and r.compacted_messages == 3
    assert_pairs_intact(r.messages)
    assert "A" * 100 in r.archive_text and "B" * 100 in r.archive_text


def test_under_threshold_nothing_happens():
    messages = [{"role": "user", "content": "short"}] + turn(1)
    assert not should_compact(messages, policy=CompactionPolicy())


def test_pluggable_token_counter_and_summarizer():
    messages = [{"role": "user", "content": "q"}]
    for i in range(1, 8):
        messages += turn(i)
    calls = []

    def counter(msgs):
        calls.append(len(msgs))
        return 10_000 if len(msgs) > 6 else 100

    policy = CompactionPolicy(window_tokens=10_000, keep_last=4)
    assert should_compact(messages, policy=policy, count_tokens=counter)
    r = compact(
        messages,
        policy=policy,
        count_tokens=counter,
        summarize=lambda old: f"LLM summary of {len(old)} messages",
    )
    assert r is not None and calls
    assert "LLM summary of" in r.summary and r.tokens_before == 10_000


def test_read_archive_pages():
    text = "x" * 250
    page = read_archive(text, 0, 100)
    assert page.startswith("x" * 100) and "next offset 100" in page
    assert read_archive(text, 200, 100).endswith("[end of file]")


def test_estimate_is_chars_over_3_5():
    assert compaction.estimate_tokens("a" * 35) == 10
    assert compaction.estimate_tokens("") == 0


def _question(n: int, chunk_id: str) -> dict:
    """A user message asking clause question ``n`` with one provenance-tagged block of context."""
    text = (
        f"clause_id: 7:type-{n}\nQuestion: find the Type {n} clause in this document.\n"
        "Context (the passages most likely to contain it, in reading order):\n\n"
        f"=== §{n} Fees [source:msa.pdf | chunk:{chunk_id} | p.{n} | ¶{n} | §{n} Fees | @{n * 1731}] ===\n"
        f"{n}. Fees. Customer shall pay $247.83 per pallet from March 3, 2021 under account cust_4711, "
        f"within thirty (30) days; section {n}.{n} applies.\n"
    )
    return {"type": "text", "text": text}


def _answered(messages: list, n: int, chunk_id: str) -> list:
    tid = f"toolu_q{n:03d}"
    call = {"chunk_id": chunk_id, "page": n, "quote": "Customer shall pay $247.83 per pallet"}
    return messages + [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": tid,
                    "name": "extract_clause",
                    "input": {"clause_id": f"7:type-{n}", "clause_text": call["quote"], "citations": [call]},
                }
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "Recorded."}]},
    ]


def test_the_summary_heading_every_request_stays_short_and_lists_only_real_exact_values():
    # each new question starts with the earlier ones compacted; the summary is sent with every request after
    everything = CompactionPolicy(keep_last=0, target=0.0)
    messages: list = [{"role": "user", "content": []}]
    names = []
    for n in range(1, 13):
        chunk_id = f"{n:02d}f3a9c0d4e5b6a7980c1d2e3f"[:24]  # chunk ids are 24 hex digits, often digits first
        messages[-1]["content"] = list(messages[-1]["content"]) + [_question(n, chunk_id)]
        messages = _answered(messages, n, chunk_id)
        result = compact(messages, policy=everything)
        assert result is not None
        names.append(result.archive_name)
        messages = result.messages
    assert names == [f"history/compacted-{n:03d}.md" for n in range(1, 13)]  # every file its own name

    head = result.summary.split("\nDigest:")[0]
    assert "Earlier history files: history/compacted-001.md to history/compacted-011.md (11 files)" in head
    assert "compacted-005" not in head
    values = next(line for line in head.splitlines() if line.startswith("Exact values seen")).split(": ", 1)[
        1
    ]
    assert values.split(" | ") == [
        "$247.83",
        "March 3, 2021",
        "cust_4711",
    ]  # no chunk-id piece, no bare number
    assert compaction.estimate_tokens(head) < 120


def test_a_compaction_inside_a_question_keeps_the_question_live():
    question = {
        "type": "text",
        "text": "clause_id: 7:payment\nQuestion: find the Payment clause. " + "x" * 400,
    }
    messages = [{"role": "user", "content": [question]}]
    for i in range(1, 9):
        messages += turn(i)
    result = compact(
        messages,
        policy=POLICY,
        pinned=lambda block: block.get("text", "").startswith("clause_id: 7:payment\nQuestion:"),
    )
    assert result is not None and result.compacted_messages > 1
    head = result.messages[0]["content"]
    assert head[0]["text"].startswith(SUMMARY_MARKER) and head[1] == question  # the question, whole
    assert question["text"] in result.archive_text  # and in the history file
    assert_pairs_intact(result.messages)
    # without the pin, the question goes with the turns it heads
    unpinned = compact(messages, policy=POLICY)
    assert question["text"] not in repr(unpinned.messages)
