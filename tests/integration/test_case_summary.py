"""Case summaries: made from the clauses as reviewers left them (offline) or by Claude (the real
``anthropic`` client over the mock transport), every value checked, every summary kept."""

from __future__ import annotations

import pytest
from django.urls import reverse

from reviewer.decisions import record_decision
from reviewer.models import CaseSummary, Review
from reviewer.summaries import SummaryError, make_summary
from tests.factories import make_reviewable
from tests.mock_anthropic import MockAnthropic, message, text_block

pytestmark = pytest.mark.django_db


def _decide(extraction, user, decision, **extra):
    """A decision taken on the clause as it stands now (after any earlier one)."""
    extraction.refresh_from_db()
    seen = (
        Review.objects.filter(extraction=extraction).order_by("-id").values_list("id", flat=True).first() or 0
    )
    record_decision(
        extraction_id=extraction.pk,
        user=user,
        decision=decision,
        reason=extra.pop("reason", "checked"),
        seen_review_id=seen,
        seen_version=extraction.version,
        **extra,
    )


def test_offline_summary_quotes_the_clauses_as_reviewed_and_links_each_to_its_clause(
    client, engagement, make_member
):
    contract = make_reviewable(engagement)
    auditor = make_member(engagement, "auditor")
    _decide(contract.extractions["Governing Law"], auditor, "reject")
    _decide(
        contract.extractions["Termination For Convenience"],
        auditor,
        "correct",
        corrected_text="Customer may terminate for convenience on forty-five (45) days' prior written notice.",
    )
    client.force_login(auditor)

    response = client.post(reverse("document-summary", args=[contract.document.pk]), follow=True)

    html = response.content.decode()
    assert "Summary made (every value found in the document)" in html
    summary = CaseSummary.objects.get(document=contract.document)
    assert summary.engine == "offline" and summary.created_by == auditor
    topics = [p["topic"] for p in summary.points]
    assert topics == ["Termination", "Money", "Liability"]  # Governing Law rejected, Insurance unverified
    assert "a unit fee of $247.83 per processed record" in html
    assert "forty-five (45) days&#x27; prior written notice." in html  # the reviewer's correction
    assert "State of Delaware" not in html
    payment = contract.extractions["Payment"]
    assert reverse("clause", args=[contract.document.pk, payment.pk]) in html
    assert "p. 2" in html


def test_a_correction_stands_when_accepted_and_a_correction_to_not_found_leaves_the_clause_out(
    engagement, make_member
):
    from reviewer.summaries import standing_clauses

    contract = make_reviewable(engagement)
    first, second = make_member(engagement, "auditor"), make_member(engagement, "auditor", "second")
    law, absent = contract.extractions["Governing Law"], contract.extractions["Non-Compete"]
    _decide(law, first, "correct", corrected_text="not_found")
    _decide(law, second, "accept")  # confirms that the document has no governing-law clause
    _decide(
        absent, first, "correct", corrected_text="Provider shall not compete with Customer in the Territory."
    )
    _decide(absent, second, "accept")

    standing = {s.clause_type: s.text for s in standing_clauses(contract.document)}

    assert "Governing Law" not in standing
    assert standing["Non-Compete"] == "Provider shall not compete with Customer in the Territory."


def test_a_later_runs_repeat_of_a_rejected_clause_stays_out_of_the_summary(engagement, make_member):
    # The clause list shows the rejected item for both copies; the summary must judge them alike.
    from extraction.models import Extraction, ExtractionRun
    from reviewer.summaries import standing_clauses

    contract = make_reviewable(engagement)
    auditor = make_member(engagement, "auditor")
    law = contract.extractions["Governing Law"]
    _decide(law, auditor, "reject")
    rerun = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    again = Extraction.objects.create(
        run=rerun,
        document=law.document,
        clause_type=law.clause_type,
        status="found",
        engine="offline",
        clause_text=law.clause_text,
        dedupe_key=law.dedupe_key,
    )
    standing = {s.clause_type: s for s in standing_clauses(contract.document)}
    assert "Governing Law" not in standing
    payment = contract.extractions["Payment"]
    Extraction.objects.create(
        run=rerun,
        document=payment.document,
        clause_type=payment.clause_type,
        status="found",
        engine="offline",
        clause_text=payment.clause_text,
        dedupe_key=payment.dedupe_key,
    )
    _decide(payment, auditor, "correct", corrected_text="a unit fee of $247.83 per record")
    standing = {s.clause_type: s for s in standing_clauses(contract.document)}
    assert standing["Payment"].text == "a unit fee of $247.83 per record"  # the correction, not the repeat
    assert standing["Payment"].extraction_id == payment.pk and again.pk not in {
        s.extraction_id for s in standing.values()
    }


def test_a_value_the_document_lacks_is_flagged_and_every_summary_is_kept(client, engagement, make_member):
    contract = make_reviewable(engagement)
    auditor = make_member(engagement, "auditor")
    first = make_summary(contract.document, auditor)
    assert first.unverified_count == 0
    _decide(contract.extractions["Payment"], auditor, "correct", corrected_text="a unit fee of about $250")
    client.force_login(auditor)

    html = client.post(reverse("document-summary", args=[contract.document.pk]), follow=True).content.decode()

    assert "Summary made (1 value not found in the document: check them)" in html
    assert "1 value in this summary was not found in the document" in html
    assert '<span class="chip bad">$250</span>' in html
    kept = list(CaseSummary.objects.filter(document=contract.document).order_by("id"))
    assert [s.unverified_count for s in kept] == [0, 1]
    earlier = client.get(reverse("document-summary", args=[contract.document.pk]), {"id": first.pk})
    assert "An earlier summary" in earlier.content.decode() and "$247.83" in earlier.content.decode()
    for wrong in (kept[-1].pk + 1000, "latest", "\u00b2"):  # "²" passes str.isdigit but not int()
        assert (
            client.get(reverse("document-summary", args=[contract.document.pk]), {"id": wrong}).status_code
            == 404
        )


def test_managers_read_summaries_but_cannot_make_them(client, engagement, make_member):
    contract = make_reviewable(engagement)
    make_summary(contract.document, make_member(engagement, "auditor"))
    client.force_login(make_member(engagement, "manager"))
    url = reverse("document-summary", args=[contract.document.pk])
    page = client.get(url).content.decode()
    assert "$247.83" in page and "Summarise again" not in page
    assert client.post(url).status_code == 403
    assert CaseSummary.objects.count() == 1


def test_no_clauses_yet_is_said_in_words_and_saves_nothing(client, engagement, make_member):
    from tests.factories import make_document

    document, _, _ = make_document(engagement)
    client.force_login(make_member(engagement, "auditor"))
    html = client.post(reverse("document-summary", args=[document.pk]), follow=True).content.decode()
    assert "No summary made: No clauses have been extracted from this document yet" in html
    assert not CaseSummary.objects.exists()


def test_claude_summary_reads_sections_of_a_long_document_and_its_values_are_checked(engagement, make_member):
    contract = make_reviewable(engagement)
    assert len(contract.document.text) > 12_000  # so the whole text never enters the prompt
    api = MockAnthropic(
        lambda body: message(
            [
                text_block(
                    "Summary:\n- Provider is paid a unit fee of $247.83 per processed record.\n"
                    "- Liability is capped at about $250,000.\n- Customer may terminate on forty-five (45) days' notice."
                )
            ]
        )
    )

    made = make_summary(
        contract.document, make_member(engagement, "auditor"), engine="anthropic", client=api.client()
    )

    assert made.engine == "anthropic" and made.context_mode == "sections" and not made.truncated
    assert [p["unverified"] for p in made.points] == [[], ["$250,000"], []]
    assert made.unverified_count == 1 and made.usage["input_tokens"] > 0
    request = api.requests[0]
    assert "copy every amount" in request["system"].lower()
    prompt = request["messages"][0]["content"][0]["text"]
    assert "[source:" in prompt and len(prompt) < len(contract.document.text)


def test_claude_summary_of_a_long_document_without_headings_reads_what_retrieval_finds(
    client, engagement, make_member
):
    contract = make_reviewable(engagement)
    contract.document.chunks.update(section="")  # no headings: nothing to read by sections
    law = "governed by the laws of the State of Delaware"
    assert contract.document.text.index(law) > 12_000  # past what the document's opening would show
    api = MockAnthropic(lambda body: message([text_block("Summary:\n- Delaware law governs the agreement.")]))

    auditor = make_member(engagement, "auditor")
    made = make_summary(contract.document, auditor, engine="anthropic", client=api.client())

    assert made.context_mode == "retrieval"
    client.force_login(auditor)
    page = client.get(reverse("document-summary", args=[contract.document.pk])).content.decode()
    assert "Claude read its opening and the passages found for the summary&#x27;s topics" in page
    prompt = api.requests[0]["messages"][0]["content"][0]["text"]
    assert law in prompt and "a unit fee of $247.83" in prompt and "shall not exceed $247,830.00" in prompt
    assert "MASTER SERVICES AGREEMENT No. MSA-2024-0117 — page 1" in prompt  # the opening comes first
    assert prompt.count("[source:") <= 6 and len(prompt) < 14_000


@pytest.mark.parametrize(
    "reply, said",
    [
        (message([], "refusal"), "Claude declined to summarise this document."),
        (
            MockAnthropic.invalid_request("prompt is too long: 250000 tokens > 200000 maximum"),
            "Claude answered HTTP 400: prompt is too long",
        ),
    ],
)
def test_claude_refusing_or_failing_is_said_in_words_and_saves_nothing(engagement, make_member, reply, said):
    contract = make_reviewable(engagement)
    api = MockAnthropic()
    api.script.append(reply)
    with pytest.raises(SummaryError, match=said.replace("(", r"\(").replace(")", r"\)")):
        make_summary(
            contract.document, make_member(engagement, "auditor"), engine="anthropic", client=api.client()
        )
    assert not CaseSummary.objects.exists()


def test_claude_cut_short_at_max_tokens_keeps_the_finished_points(engagement, make_member):
    contract = make_reviewable(engagement)
    api = MockAnthropic()
    api.script.append(
        message(
            [text_block("- Fee $247.83 per processed record.\n- Liability capped at $247,8")], "max_tokens"
        )
    )
    made = make_summary(
        contract.document, make_member(engagement, "auditor"), engine="anthropic", client=api.client()
    )
    assert made.truncated and [p["text"] for p in made.points] == ["Fee $247.83 per processed record."]


def test_an_unreviewed_rerun_does_not_drop_what_reviewers_kept(engagement, make_member):
    from extraction.models import Extraction, ExtractionRun
    from reviewer.summaries import standing_clauses

    contract = make_reviewable(engagement)
    auditor = make_member(engagement, "auditor")
    payment, law = contract.extractions["Payment"], contract.extractions["Governing Law"]
    _decide(payment, auditor, "correct", corrected_text="a unit fee of $247.83 per record")
    _decide(law, auditor, "accept")
    rerun = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    worded = Extraction.objects.create(
        run=rerun,
        document=payment.document,
        clause_type=payment.clause_type,
        status="found",
        engine="offline",
        clause_text="A fee of $250 per record.",
        dedupe_key="rerun-payment",
    )
    Extraction.objects.create(
        run=rerun,
        document=law.document,
        clause_type=law.clause_type,
        status="not_found",
        engine="offline",
        clause_text="not_found",
        dedupe_key="rerun-law",
    )

    standing = {s.clause_type: s for s in standing_clauses(contract.document)}
    assert standing["Payment"].text == "a unit fee of $247.83 per record"
    assert standing["Governing Law"].extraction_id == law.pk

    # once a reviewer has judged the rerun's answer, that judgement is what stands
    _decide(worded, auditor, "accept")
    standing = {s.clause_type: s for s in standing_clauses(contract.document)}
    assert standing["Payment"].text == "A fee of $250 per record."


def test_only_the_newest_kept_answer_stands_when_a_later_run_is_unreviewed(engagement, make_member):
    from extraction.models import Extraction, ExtractionRun
    from reviewer.summaries import standing_clauses

    contract = make_reviewable(engagement)
    auditor = make_member(engagement, "auditor")
    payment = contract.extractions["Payment"]
    _decide(payment, auditor, "accept")  # run 1: accepted as extracted
    second = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    reworded = Extraction.objects.create(
        run=second,
        document=payment.document,
        clause_type=payment.clause_type,
        status="found",
        engine="offline",
        clause_text="A fee of $250 per record.",
        dedupe_key="run2-payment",
    )
    _decide(
        reworded, auditor, "correct", corrected_text="a unit fee of $247.83 per record"
    )  # run 2: corrected
    third = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    Extraction.objects.create(
        run=third,
        document=payment.document,
        clause_type=payment.clause_type,
        status="found",
        engine="offline",
        clause_text="Fees of $250.",
        dedupe_key="run3-payment",
    )

    texts = [s.text for s in standing_clauses(contract.document) if s.clause_type == "Payment"]
    assert texts == ["a unit fee of $247.83 per record"]
