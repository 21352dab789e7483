"""Reviewer pages through the Django test client on the real embedded PostgreSQL."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from reviewer.decisions import record_decision
from reviewer.models import Review
from tests.factories import make_reviewable
from tests.markup import elements

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def auditor(engagement, make_member, client):
    user = make_member(engagement, "auditor")
    client.force_login(user)
    return user


def _decide(client, ex, decision, seen_review=0, seen_version=1, headers=HX, **fields):
    data = {"decision": decision, "seen_review": seen_review, "seen_version": seen_version, **fields}
    return client.post(reverse("decide", args=[ex.document_id, ex.pk]), data, **headers)


def test_clause_fragment_highlights_the_exact_quote_on_its_page(client, auditor, contract):
    ex = contract.extractions["Governing Law"]
    cit = contract.citations["Governing Law"][0]
    response = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html  # a fragment, not the page
    mark = re.search(r'<mark data-citation-id="(\d+)"[^>]*>(.*?)</mark>', html, re.S)
    assert mark and int(mark.group(1)) == cit.pk
    assert mark.group(2) == cit.quote
    assert f'data-page="{cit.page}"' in html
    assert "HX-Request" in response["Vary"]


def test_same_url_without_htmx_is_the_whole_page_with_the_clause_list(client, auditor, contract):
    ex = contract.extractions["Governing Law"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk])).content.decode()
    assert "<html" in html and 'id="clause-list"' in html
    for other in contract.extractions.values():
        assert f'data-extraction-id="{other.pk}"' in html
    assert (
        re.search(rf'data-extraction-id="{ex.pk}"\s[^>]*aria-current="true"', html, re.S)
        or re.search(rf'aria-current="true"[^>]*data-extraction-id="{ex.pk}"', html, re.S)
        or 'aria-current="true"' in html.split(f'data-extraction-id="{ex.pk}"')[1].split(">")[0]
    )


def test_contract_html_is_escaped_inside_and_outside_the_mark(client, auditor, contract):
    ex = contract.extractions["Other"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "<script>alert" not in html and "<b>Bold" not in html
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in html
    assert "&lt;b&gt;Bold &amp; &quot;quoted&quot;&lt;/b&gt;" in html


def test_responses_carry_a_strict_content_security_policy(client, auditor, contract):
    response = client.get(reverse("document", args=[contract.document.pk]))
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "<script>" not in response.content.decode().replace("<script src=", "")


def test_pages_with_contract_text_are_kept_by_no_cache(client, auditor, contract):
    # the browser's Back button after signing out on a shared computer showed the last contract from its cache
    ex = contract.extractions["Other"]
    for url in [
        reverse("document", args=[contract.document.pk]),
        reverse("clause", args=[ex.document_id, ex.pk]),
    ]:
        cache_control = client.get(url)["Cache-Control"]
        assert "no-store" in cache_control and "private" in cache_control, url


def test_citation_and_page_urls(client, auditor, contract):
    ex = contract.extractions["Cap On Liability"]
    first, second = contract.citations["Cap On Liability"]
    html = client.get(reverse("citation", args=[ex.document_id, ex.pk, second.pk]), **HX).content.decode()
    assert f'data-citation-id="{second.pk}"' in html and f'data-page="{second.page}"' in html
    assert "citation 2 of 2" in html
    assert reverse("citation", args=[ex.document_id, ex.pk, first.pk]) in html  # previous citation link
    page = client.get(reverse("clause-page", args=[ex.document_id, ex.pk, 6]), **HX).content.decode()
    assert 'data-page="6"' in page and "<mark" not in page
    assert client.get(reverse("citation", args=[ex.document_id, ex.pk, 999999])).status_code == 404
    assert client.get(reverse("document-page", args=[ex.document_id, 99])).status_code == 404
    goto = client.get(reverse("document-page", args=[ex.document_id, 1]) + "?n=3")
    assert goto.status_code == 302 and goto["Location"] == reverse("document-page", args=[ex.document_id, 3])


def test_decisions_are_appended_and_the_state_is_derived(client, auditor, contract):
    ex = contract.extractions["Payment"]
    r1 = _decide(client, ex, "accept")
    assert r1.status_code == 200 and "accepted" in r1.content.decode()
    first = Review.objects.get(extraction=ex)
    r2 = _decide(
        client,
        ex,
        "correct",
        seen_review=first.pk,
        corrected_text="a unit fee of $247.83 per record",
        reason="typo in the source",
    )
    assert r2.status_code == 200
    ex.refresh_from_db()
    assert ex.version == 2
    second = Review.objects.filter(extraction=ex).latest("id")
    r3 = _decide(client, ex, "reject", seen_review=second.pk, seen_version=2, reason="duplicate of 4.1")
    assert r3.status_code == 200
    reviews = list(
        Review.objects.filter(extraction=ex).order_by("id").values_list("decision", "extraction_version")
    )
    assert reviews == [("accept", 1), ("correct", 1), ("reject", 2)]
    html = r3.content.decode()
    assert html.count('class="history-item"') == 3 and "duplicate of 4.1" in html
    assert (
        f'id="clause-item-{ex.pk}" class="clause-item" data-status="{ex.status}" data-review="reject" '
        'hx-swap-oob="true"'
    ) in html  # the list item (and the list's filter) follow the decision
    assert "review-reject" in html


def test_stale_decision_is_refused_with_a_clear_message(client, auditor, contract, make_member, engagement):
    ex = contract.extractions["Governing Law"]
    other = make_member(engagement, "auditor", username="bob")
    Review.objects.create(
        extraction=ex, reviewer=other, decision="reject", reason="wrong law", extraction_version=1
    )
    response = _decide(client, ex, "accept", seen_review=0)
    assert response.status_code == 409
    html = response.content.decode()
    assert "Not saved: bob recorded “rejected”" in html
    assert Review.objects.filter(extraction=ex).count() == 1
    latest = Review.objects.get(extraction=ex)
    assert f'name="seen_review" value="{latest.pk}"' in html  # deciding again is possible


def test_invalid_decisions_are_explained(client, auditor, contract):
    ex = contract.extractions["Governing Law"]
    assert "Give a reason for rejecting" in _decide(client, ex, "reject").content.decode()
    r = _decide(client, ex, "correct", corrected_text=ex.clause_text)
    assert r.status_code == 422 and "same as the current text" in r.content.decode()
    assert not Review.objects.exists()


def test_without_javascript_a_decision_redirects_back_to_the_clause(client, auditor, contract):
    ex = contract.extractions["Governing Law"]
    cit = contract.citations["Governing Law"][0]
    response = _decide(client, ex, "accept", headers={}, citation=cit.pk)
    assert response.status_code == 302
    assert response["Location"] == reverse("citation", args=[ex.document_id, ex.pk, cit.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Recorded: accept." in page


def test_managers_read_but_cannot_decide_and_auditors_cannot_upload(
    client, engagement, make_member, contract
):
    manager = make_member(engagement, "manager")
    client.force_login(manager)
    ex = contract.extractions["Governing Law"]
    page = client.get(reverse("clause", args=[ex.document_id, ex.pk]))
    assert page.status_code == 200 and 'id="decision-form"' not in page.content.decode()
    assert _decide(client, ex, "accept").status_code == 403
    assert client.get(reverse("engagement-upload", args=[engagement.pk])).status_code == 403
    auditor = make_member(engagement, "auditor")
    client.force_login(auditor)
    assert client.get(reverse("engagement-upload", args=[engagement.pk])).status_code == 403
    assert client.get(reverse("engagement-members", args=[engagement.pk])).status_code == 403
    assert not Review.objects.exists()


def test_clause_fragment_query_count_is_bounded(client, auditor, contract, django_assert_max_num_queries):
    ex = contract.extractions["Cap On Liability"]
    for _i in range(5):  # a longer history must not add queries
        last = Review.objects.filter(extraction=ex).order_by("-id").first()
        _decide(client, ex, "accept", seen_review=last.pk if last else 0)
    url = reverse("clause", args=[ex.document_id, ex.pk])
    with django_assert_max_num_queries(3):  # session, user, clause (+ citations, history, page texts as JSON)
        assert client.get(url, **HX).status_code == 200
    second = contract.citations["Cap On Liability"][1]
    with django_assert_max_num_queries(3):
        html = client.get(reverse("citation", args=[ex.document_id, ex.pk, second.pk]), **HX).content.decode()
    assert f'data-citation-id="{second.pk}"' in html
    with django_assert_max_num_queries(4):  # + the page text for a page picked by number
        assert client.get(reverse("clause-page", args=[ex.document_id, ex.pk, 4]), **HX).status_code == 200
    last = Review.objects.filter(extraction=ex).order_by("-id").first()
    with django_assert_max_num_queries(
        13
    ):  # the clause and its repeats locked, latest, write, then the refreshed
        # fragment and list item
        assert _decide(client, ex, "accept", seen_review=last.pk, citation=second.pk).status_code == 200


def test_document_page_query_count_does_not_grow_with_clauses(
    client, auditor, contract, engagement, django_assert_max_num_queries
):
    url = reverse("document", args=[contract.document.pk])
    with django_assert_max_num_queries(10):
        assert client.get(url).status_code == 200


def test_exports_in_three_formats(client, auditor, contract):
    ex = contract.extractions["Governing Law"]
    _decide(client, ex, "accept", reason="checked")
    doc = contract.document
    data = json.loads(client.get(reverse("document-export", args=[doc.pk, "json"])).getvalue())
    rec = next(r for r in data["clauses"] if r["extraction_id"] == ex.pk)
    cit = contract.citations["Governing Law"][0]
    assert rec["type"] == "Governing Law" and rec["status"] == "found" and rec["engine"] == "offline"
    assert rec["document_type"] == doc.doc_type == "MSA"
    assert rec["citations"] == [
        {
            "citation_id": cit.pk,
            "ordinal": 0,
            "chunk_id": cit.chunk.chunk_id,
            "page": cit.page,
            "span": [cit.start, cit.end],
            "quote": cit.quote,
        }
    ]
    assert rec["current_decision"] == "accepted" and rec["reviewer"] == auditor.username and rec["decided_at"]
    assert rec["run_id"] == ex.run_id  # a later run's repeat of the clause is told apart by its run
    csv_text = client.get(reverse("document-export", args=[doc.pk, "csv"])).getvalue().decode("utf-8-sig")
    assert csv_text.splitlines()[0].startswith(
        "document_id,document,document_type,extraction_id,run_id,clause,type,status,engine"
    )
    assert cit.quote in csv_text
    xlsx = client.get(reverse("engagement-export", args=[doc.engagement_id, "xlsx"]))
    assert xlsx["Content-Type"].startswith("application/vnd.openxmlformats")
    from io import BytesIO

    from openpyxl import load_workbook

    rows = list(load_workbook(BytesIO(xlsx.getvalue())).active.iter_rows(values_only=True))
    header = rows[0]
    assert "quote" in header and "current_decision" in header
    n_citations = sum(len(v) for v in contract.citations.values())
    n_uncited = len(contract.extractions) - len(contract.citations)
    assert len(rows) - 1 == n_citations + n_uncited


def test_an_engagement_export_streams_every_clause_of_every_document_with_its_own_citations(
    client, auditor, contract, engagement, monkeypatch
):
    # read a few extractions at a time (as a thousand-contract engagement is): no clause lost or doubled
    # at a batch's edge, and each keeps its own citations and decisions
    import csv
    from io import BytesIO, StringIO

    from openpyxl import load_workbook

    import reviewer.exports as exports
    from extraction.models import Citation, Extraction

    second = make_reviewable(engagement, title="Supply Agreement", seed=2)
    _decide(client, second.extractions["Payment"], "reject", reason="wrong page")
    monkeypatch.setattr(exports, "BATCH", 2)
    url = lambda fmt: reverse("engagement-export", args=[engagement.pk, fmt])  # noqa: E731
    expected = {
        ex.pk: sorted(Citation.objects.filter(extraction=ex).values_list("pk", flat=True))
        for ex in Extraction.objects.filter(document__engagement=engagement)
    }
    assert len(expected) == len(contract.extractions) + len(second.extractions)

    response = client.get(url("json"))
    assert (
        response.streaming
        and response["Content-Disposition"] == 'attachment; filename="acme-audit-2026-clauses.json"'
    )
    data = json.loads(response.getvalue())
    assert data["engagement"] == {"id": engagement.pk, "name": engagement.name}
    assert {
        r["extraction_id"]: sorted(c["citation_id"] for c in r["citations"]) for r in data["clauses"]
    } == expected
    assert len(data["clauses"]) == len(expected)
    rejected = next(r for r in data["clauses"] if r["extraction_id"] == second.extractions["Payment"].pk)
    assert rejected["current_decision"] == "rejected" and rejected["reason"] == "wrong page"

    response = client.get(url("csv"))
    assert response.streaming
    rows = list(csv.DictReader(StringIO(response.getvalue().decode("utf-8-sig"))))
    assert {int(r["extraction_id"]) for r in rows} == set(expected)
    assert len(rows) == sum(max(1, len(c)) for c in expected.values())  # one row a citation

    response = client.get(url("xlsx"))
    body = response.getvalue()
    assert int(response["Content-Length"]) == len(body)  # sent from a finished file: its size is known
    assert response["Content-Disposition"] == 'attachment; filename="acme-audit-2026-clauses.xlsx"'
    sheet = list(load_workbook(BytesIO(body)).active.iter_rows(values_only=True))
    assert len(sheet) - 1 == len(rows)


def test_exports_carry_every_decision_with_its_reviewer_and_time(
    client, auditor, contract, engagement, make_member
):
    ex = contract.extractions["Payment"]
    _decide(client, ex, "reject", reason="wrong page")
    first = Review.objects.get(extraction=ex)
    client.force_login(make_member(engagement, "auditor", username="bob"))
    _decide(client, ex, "correct", seen_review=first.pk, corrected_text="a unit fee of $247.83 per record")
    second = Review.objects.filter(extraction=ex).latest("id")
    _decide(client, ex, "accept", seen_review=second.pk, seen_version=2)
    trail = [
        (r.decision, r.reviewer.username, r.created_at.isoformat())
        for r in Review.objects.filter(extraction=ex).order_by("id")
    ]
    assert [d for d, _, _ in trail] == ["reject", "correct", "accept"]

    data = json.loads(client.get(reverse("document-export", args=[ex.document_id, "json"])).getvalue())
    rec = next(r for r in data["clauses"] if r["extraction_id"] == ex.pk)
    assert [(d["decision"], d["reviewer"], d["decided_at"]) for d in rec["decisions"]] == [
        ("rejected", auditor.username, trail[0][2]),
        ("corrected", "bob", trail[1][2]),
        ("accepted", "bob", trail[2][2]),
    ]
    assert rec["decisions"][0]["reason"] == "wrong page"
    assert rec["decisions"][1]["corrected_text"] == "a unit fee of $247.83 per record"

    import csv
    from io import BytesIO, StringIO

    from openpyxl import load_workbook

    rows = list(
        csv.DictReader(
            StringIO(
                client.get(reverse("document-export", args=[ex.document_id, "csv"]))
                .getvalue()
                .decode("utf-8-sig")
            )
        )
    )
    history = next(r["history"] for r in rows if r["extraction_id"] == str(ex.pk)).splitlines()
    sheet = list(
        load_workbook(
            BytesIO(client.get(reverse("document-export", args=[ex.document_id, "xlsx"])).getvalue())
        ).active.iter_rows(values_only=True)
    )
    col = sheet[0].index("history")
    assert (
        next(r[col] for r in sheet[1:] if r[0 + sheet[0].index("extraction_id")] == ex.pk).splitlines()
        == history
    )
    assert len(history) == 3
    for line, (_, who, at) in zip(history, trail):
        assert line.startswith(f"{at} {who}: ")
    assert "rejected" in history[0] and "“wrong page”" in history[0]
    assert "corrected" in history[1] and "$247.83 per record" in history[1] and "accepted" in history[2]


def test_exports_say_why_a_clause_was_flagged_unverified(client, auditor, contract):
    import csv
    from io import BytesIO, StringIO

    from openpyxl import load_workbook

    ex = contract.extractions["Insurance"]
    reasons = [
        "attempt 1: quote not found in chunk text: 'insurance of $5,000,000'",
        'attempt 2: value "$5,000,000" is not in the cited text verbatim',
    ]
    ex.verification_errors = reasons
    ex.save(update_fields=["verification_errors"])
    url = lambda fmt: reverse("document-export", args=[ex.document_id, fmt])  # noqa: E731

    records = json.loads(client.get(url("json")).getvalue())["clauses"]
    assert next(r for r in records if r["extraction_id"] == ex.pk)["verification_errors"] == reasons
    assert next(r for r in records if r["status"] == "found")["verification_errors"] == []
    rows = list(csv.DictReader(StringIO(client.get(url("csv")).getvalue().decode("utf-8-sig"))))
    assert (
        next(r for r in rows if r["extraction_id"] == str(ex.pk))["verification_errors"].splitlines()
        == reasons
    )
    sheet = list(
        load_workbook(BytesIO(client.get(url("xlsx")).getvalue())).active.iter_rows(values_only=True)
    )
    row = next(r for r in sheet[1:] if r[sheet[0].index("extraction_id")] == ex.pk)
    assert row[sheet[0].index("verification_errors")].splitlines() == reasons


def _stall_notice(html: str, document) -> str:
    """The "has not moved" notice in the documents table's row of ``document`` ("" when it has none)."""
    start = html.index(f'data-document-id="{document.pk}"')
    found = re.search(
        r'class="[^"]*stall-notice[^"]*" role="note">([^<]*)<', html[start : html.index("</tr>", start)]
    )
    return found.group(1) if found else ""


def test_documents_table_says_when_a_document_in_the_pipeline_has_not_moved(
    client, auditor, contract, engagement
):
    from datetime import timedelta

    from django.utils import timezone

    from ingest.models import Document
    from tests.factories import make_document

    url = reverse("engagement-documents", args=[engagement.pk])
    stuck, _, _ = make_document(engagement, title="Stuck embedding", seed=3, status="embedding", progress=34)
    waiting, _, _ = make_document(engagement, title="Waiting its turn", seed=4, status="queued")
    moving, _, _ = make_document(engagement, title="Moving along", seed=5, status="converting", progress=5)
    Document.objects.filter(pk=stuck.pk).update(updated_at=timezone.now() - timedelta(minutes=25))
    Document.objects.filter(pk=waiting.pk).update(updated_at=timezone.now() - timedelta(hours=2))
    Document.objects.filter(pk=contract.document.pk).update(
        updated_at=timezone.now() - timedelta(days=3)
    )  # ready

    html = client.get(url, **HX).content.decode()

    notices = {d.pk: _stall_notice(html, d) for d in (stuck, waiting, moving, contract.document)}
    assert notices[stuck.pk].startswith("No progress for 25 min.") and "marked failed" in notices[stuck.pk]
    assert notices[waiting.pk].startswith("Waiting for a worker for 2 h:")
    assert notices[moving.pk] == notices[contract.document.pk] == ""


def test_documents_table_says_when_an_extraction_has_not_moved(client, auditor, engagement):
    from datetime import timedelta

    from django.utils import timezone

    from extraction.models import ClauseTask, ExtractionRun
    from tests.factories import ensure_clause_types

    types = list(ensure_clause_types().values())
    stuck, waiting, moving = (
        make_reviewable(engagement, title=t, seed=i).document
        for i, t in enumerate(("Stuck", "Waiting", "Moving"))
    )
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="running")
    long_ago = timezone.now() - timedelta(minutes=40)
    for document, statuses in (
        (stuck, ["done", "running", "pending"]),
        (waiting, ["pending", "pending", "pending"]),
        (moving, ["done", "running", "pending"]),
    ):
        ClauseTask.objects.bulk_create(
            [
                ClauseTask(run=run, document=document, clause_type=t, status=status)
                for t, status in zip(types, statuses)
            ]
        )
        if document is not moving:  # Moving finished a clause type just now
            ClauseTask.objects.filter(document=document).update(updated_at=long_ago)
    html = client.get(reverse("engagement-documents", args=[engagement.pk]), **HX).content.decode()

    assert _stall_notice(html, stuck).startswith("No clause finished for 40 min.")
    assert _stall_notice(html, waiting).startswith("Waiting for a worker for 40 min:")
    assert _stall_notice(html, moving) == ""


def test_documents_table_polls_only_while_a_document_is_in_the_pipeline(
    client, auditor, contract, engagement
):
    from tests.factories import make_document

    url = reverse("engagement-documents", args=[engagement.pk])
    html = client.get(url, **HX).content.decode()
    assert 'hx-trigger="every 2s"' not in html and "5 found" in html and "1 not found" in html
    make_document(engagement, title="Still converting", seed=3, status="converting", progress=35)
    html = client.get(url, **HX).content.decode()
    assert 'hx-trigger="every 2s"' in html and 'value="35"' in html


def test_failed_documents_show_their_error_in_words(client, auditor, engagement):
    from tests.factories import make_document

    make_document(engagement, title="Scan", seed=4, status="needs_ocr")
    make_document(
        engagement,
        title="Broken",
        seed=5,
        status="failed",
        error="The PDF is encrypted; upload an unlocked copy.",
    )
    html = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    assert "needs OCR" in html and "no text layer" in html
    assert "The PDF is encrypted; upload an unlocked copy." in html


def test_each_member_gets_their_own_role_on_a_shared_engagement(client, engagement, make_member, contract):
    make_member(engagement, "admin")
    make_member(engagement, "manager")
    auditor = make_member(engagement, "auditor")
    make_member(engagement, "manager")
    client.force_login(auditor)
    html = client.get(reverse("document", args=[contract.document.pk])).content.decode()
    assert "chip role-auditor" in html and 'id="find-form"' in html
    ex = contract.extractions["Governing Law"]
    assert (
        'id="decision-form"'
        in client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    )
    assert "Upload contracts" not in client.get(reverse("engagement", args=[engagement.pk])).content.decode()


def test_estimated_pages_are_marked(client, auditor, contract):
    from ingest.models import Document

    Document.objects.filter(pk=contract.document.pk).update(pages_estimated=True)
    ex = contract.extractions["Governing Law"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "estimated page" in html
    table = client.get(reverse("engagement", args=[contract.document.engagement_id])).content.decode()
    assert "est.</abbr>" in table


def test_not_found_clause_has_no_source_but_can_be_read_page_by_page(client, auditor, contract):
    ex = contract.extractions["Non-Compete"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert "absent" in html and "<mark" not in html and 'data-page="' not in html
    assert reverse("clause-page", args=[ex.document_id, ex.pk, 1]) in html
    unverified = contract.extractions["Insurance"]
    html = client.get(reverse("clause", args=[ex.document_id, unverified.pk]), **HX).content.decode()
    assert "no verified citation" in html and "quote not found in chunk text" in html


def _rerun(contract, changed: dict[str, str] | None = None):
    """A second run over the same document: every answer again, those in ``changed`` with another text."""
    from extraction.models import Extraction, ExtractionRun

    changed = changed or {}
    first = next(iter(contract.extractions.values()))
    run = ExtractionRun.objects.create(engagement=first.run.engagement, engine="offline", status="done")
    again = {}
    for name, ex in contract.extractions.items():
        again[name] = Extraction.objects.create(
            run=run,
            document=ex.document,
            clause_type=ex.clause_type,
            status=ex.status,
            engine=ex.engine,
            clause_text=changed.get(name, ex.clause_text),
            dedupe_key=ex.dedupe_key,
        )
    return again


def _listed(html: str) -> set[int]:
    return {int(i) for i in re.findall(r'id="clause-item-(\d+)"', html)}


def test_a_rerun_with_the_same_answers_lists_each_clause_once(client, auditor, contract, engagement):
    payment = contract.extractions["Payment"]
    assert _decide(client, payment, "accept").status_code == 200
    again = _rerun(
        contract, {"Governing Law": "This Agreement is governed by the laws of the State of New York."}
    )

    html = client.get(reverse("document", args=[contract.document.pk])).content.decode()
    listed = _listed(html)
    assert payment.pk in listed and again["Payment"].pk not in listed  # the decided one stands for both
    for name in ("Termination For Convenience", "Non-Compete", "Insurance"):
        assert again[name].pk in listed and contract.extractions[name].pk not in listed  # else the newest
    assert {
        contract.extractions["Governing Law"].pk,
        again["Governing Law"].pk,
    } <= listed  # a new answer is listed
    assert len(listed) == len(contract.extractions) + 1
    item = re.search(rf'id="clause-item-{payment.pk}".*?</li>', html, re.S).group(0)
    assert "2 runs" in item

    table = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    found = sum(ex.status == "found" for ex in contract.extractions.values()) + 1
    assert f"{found} found" in table and "1 not found" in table and "1 reviewed" in table

    # a third run whose answers differ only in spacing and capitals, its Payment decided too (as could be
    # recorded before a decision on a repeat the list does not show was refused): still one each
    third = _rerun(
        contract,
        {
            name: "  " + ex.clause_text.upper().replace(" ", "\n ") + " "
            for name, ex in contract.extractions.items()
            if ex.clause_text
        },
    )
    Review.objects.create(
        extraction=third["Payment"], reviewer=auditor, decision="accept", extraction_version=1
    )
    table = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    assert f"{found} found" in table and "1 not found" in table and "1 reviewed" in table


def test_a_repeat_differing_only_by_no_break_spaces_is_counted_once_as_it_is_listed_once(
    client, auditor, contract, engagement
):
    # an HTML or DOCX contract keeps its no-break spaces: one engine copies them, another writes plain spaces
    nbsp = {
        name: ex.clause_text.replace(" ", "\u00a0", 2)
        for name, ex in contract.extractions.items()
        if ex.status == "found"
    }
    _rerun(contract, nbsp)
    html = client.get(reverse("document", args=[contract.document.pk])).content.decode()
    assert len(_listed(html)) == len(contract.extractions)  # the list folds each repeat into its clause
    table = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    assert f"{len(nbsp)} found" in table  # and the documents table counts what the list shows


@pytest.mark.parametrize(
    "first, again",
    [
        (
            "Payment to Müller Straße GmbH within 30 days.",
            "PAYMENT TO MÜLLER STRASSE GMBH WITHIN 30 DAYS.",
        ),  # ß, SS
        ("Profits of the ﬁrm are shared.", "Profits of the firm are shared."),  # a ligature, the letters
    ],
    ids=["sharp s", "ligature"],
)
def test_the_documents_table_counts_the_answers_the_clause_list_shows(
    client, auditor, contract, engagement, first, again
):
    # whether two wordings are one answer or two, the table's count and the list's items say the same
    from extraction.models import Extraction

    Extraction.objects.filter(pk=contract.extractions["Payment"].pk).update(clause_text=first)
    _rerun(contract, {"Payment": again})
    html = client.get(reverse("document", args=[contract.document.pk])).content.decode()
    shown = len(_listed(html)) - (len(contract.extractions) - 1)  # the Payment items
    found = sum(ex.status == "found" for ex in contract.extractions.values()) - 1 + shown
    table = client.get(reverse("engagement", args=[engagement.pk])).content.decode()
    assert f"{found} found" in table, (shown, re.findall(r"\d+ found", table))


def test_a_decision_on_a_repeat_another_reviewer_decided_is_refused_not_hidden(
    client, auditor, contract, engagement, make_member
):
    first = contract.extractions["Payment"]
    stale = client.get(
        reverse("document", args=[first.document_id])
    ).content.decode()  # lists the first run's item
    assert first.pk in _listed(stale)
    later = _rerun(contract)["Payment"]  # a later run finds the same clause: the list now shows its item
    bob = make_member(engagement, "auditor", username="bob")
    record_decision(extraction_id=later.pk, user=bob, decision="accept", seen_review_id=0, seen_version=1)

    response = _decide(client, first, "reject", reason="wrong page")  # from the page opened before
    assert response.status_code == 409
    html = response.content.decode()
    assert "Not saved: bob recorded “accepted” on this clause" in html and "another extraction run" in html
    assert not Review.objects.filter(extraction=first).exists()
    assert (
        f'data-current-extraction="{later.pk}"' in html
    )  # the panel shows the decided item, to decide again
    assert (
        f'id="clause-item-{later.pk}"' in html and f'id="clause-item-{first.pk}"' not in html
    )  # list refreshed
    bob_review = Review.objects.get(extraction=later)
    again = _decide(client, later, "reject", seen_review=bob_review.pk, reason="wrong page")
    assert again.status_code == 200 and Review.objects.filter(extraction=later).count() == 2

    # and the other way round: a later run's repeat of a decided clause, opened by its address, is not decided apart
    term = contract.extractions["Governing Law"]
    assert _decide(client, term, "accept").status_code == 200
    repeat = _rerun(contract)["Governing Law"]
    assert _decide(client, repeat, "reject", reason="no").status_code == 409
    assert not Review.objects.filter(extraction=repeat).exists()


@pytest.mark.parametrize("engine, model", [("offline", "offline-bm25"), ("anthropic", "claude-sonnet-4-5")])
def test_the_review_page_shows_which_engine_produced_each_clause(client, auditor, engagement, engine, model):
    contract = make_reviewable(engagement, engine=engine)
    ex = contract.extractions["Governing Law"]
    page = client.get(reverse("document", args=[ex.document_id])).content.decode()
    assert page.count(f'<span class="chip engine">{engine}</span>') == len(contract.extractions)
    panel = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert f'<span class="chip engine" title="{model}">{engine}</span>' in panel


def test_a_decision_posted_after_the_session_expired_comes_back_to_the_clause(
    client, engagement, make_member, contract
):
    from urllib.parse import quote

    user = make_member(engagement, "auditor")
    ex = contract.extractions["Governing Law"]
    clause_url, decide_url = (
        reverse("clause", args=[ex.document_id, ex.pk]),
        reverse("decide", args=[ex.document_id, ex.pk]),
    )
    login = reverse("login")
    # without JavaScript: POST -> sign in -> the sign-in sends a GET to decide/ -> back to the clause, not a 405
    posted = _decide(client, ex, "accept", headers={})
    assert posted.status_code == 302 and posted["Location"] == f"{login}?next={quote(decide_url)}"
    form = client.get(posted["Location"]).content.decode()
    assert f'action="{login}"' in form  # a login form swapped into another page still posts to the login
    signed_in = client.post(
        login, {"username": user.username, "password": "pw-for-tests-1", "next": decide_url}
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == decide_url
    back = client.get(decide_url)
    assert back.status_code == 302 and back["Location"] == clause_url
    assert not Review.objects.exists()
    # the other POST-only pages of a document send a GET back to the document
    doc_url = reverse("document", args=[ex.document_id])
    for name in ("find", "document-type"):
        answer = client.get(reverse(name, args=[ex.document_id]))
        assert answer.status_code == 302 and answer["Location"] == doc_url


def test_an_htmx_request_without_a_session_sends_the_whole_tab_to_sign_in(client, contract):
    from urllib.parse import quote

    ex = contract.extractions["Governing Law"]
    clause_url = reverse("clause", args=[ex.document_id, ex.pk])
    response = _decide(
        client, ex, "accept", headers={**HX, "HTTP_HX_CURRENT_URL": "http://testserver" + clause_url}
    )
    assert (
        response.status_code == 401
    )  # not a 302 that the XHR follows and swaps the login page into the panel
    assert response["HX-Redirect"] == f"{reverse('login')}?next={quote(clause_url)}"
    assert not Review.objects.exists()


def test_accepting_with_an_edited_text_is_refused_and_the_edit_kept(client, auditor, contract):
    ex = contract.extractions["Governing Law"]
    edited = ex.clause_text + " (as amended in 2025)"
    for decision in ("accept", "reject"):
        response = _decide(client, ex, decision, corrected_text=edited, reason="checked")
        html = response.content.decode()
        assert response.status_code == 422
        assert "You edited the text: save it as a correction, or discard the edit" in html
        assert re.search(r'<details id="correct-box" class="correct-box" open>', html)  # the edit is in view
        assert "(as amended in 2025)</textarea>" in html and ">checked</textarea>" in html
        discard = reverse("clause", args=[ex.document_id, ex.pk])
        assert (
            'id="discard-edit"' in html and f'href="{discard}"' in html
        )  # one step back to the clause as it is
    assert not Review.objects.exists()
    assert _decide(client, ex, "accept", corrected_text=ex.clause_text).status_code == 200  # untouched: fine


def test_an_unchanged_multiline_correction_posted_with_crlf_is_not_a_new_version(client, auditor, contract):
    ex = contract.extractions["Payment"]
    assert (
        _decide(client, ex, "correct", corrected_text="4.2 Fees.\nA unit fee of $247.83.").status_code == 200
    )
    first = Review.objects.get(extraction=ex)
    assert first.corrected_text == "4.2 Fees.\nA unit fee of $247.83."
    again = _decide(
        client,
        ex,
        "correct",
        seen_review=first.pk,
        seen_version=2,
        corrected_text="4.2 Fees.\r\nA unit fee of $247.83.\r\n",
    )  # as a browser posts the same box
    assert again.status_code == 422 and "same as the current text" in again.content.decode()
    assert (
        _decide(
            client,
            ex,
            "accept",
            seen_review=first.pk,
            seen_version=2,
            corrected_text="4.2 Fees.\r\nA unit fee of $247.83.",
        ).status_code
        == 200
    )
    ex.refresh_from_db()
    assert ex.version == 2 and Review.objects.filter(extraction=ex).count() == 2


def test_a_not_found_clause_a_reviewer_corrected_shows_its_text_in_the_list(client, auditor, contract):
    ex = contract.extractions["Non-Compete"]
    planted = "9.1 Non-Compete. Provider shall not offer competing services for 12 months."
    response = _decide(client, ex, "correct", corrected_text=planted, reason="it is on page 3")
    assert response.status_code == 200
    item = re.search(rf'id="clause-item-{ex.pk}".*?</li>', response.content.decode(), re.S).group(
        0
    )  # the oob item
    assert "9.1 Non-Compete. Provider shall not" in item and "Not found in this document" not in item
    page = client.get(reverse("document", args=[ex.document_id])).content.decode()
    item = re.search(rf'id="clause-item-{ex.pk}".*?</li>', page, re.S).group(0)
    assert "9.1 Non-Compete. Provider shall not" in item and "Not found in this document" not in item


def test_a_decision_comes_back_to_the_citation_or_page_being_read(client, auditor, contract):
    ex = contract.extractions["Cap On Liability"]
    second = contract.citations["Cap On Liability"][1]
    refused = _decide(client, ex, "", citation=second.pk)  # an invalid form still knows what was shown
    assert refused.status_code == 422 and "citation 2 of 2" in refused.content.decode()
    assert f'<mark data-citation-id="{second.pk}"' in refused.content.decode()
    on_page = _decide(client, ex, "reject", page=6)  # no reason: refused, still on page 6
    assert on_page.status_code == 422
    html = on_page.content.decode()
    assert 'data-page="6"' in html and "<mark" not in html and 'name="page" value="6"' in html
    saved = _decide(client, ex, "accept", page=6)
    assert saved.status_code == 200 and 'data-page="6"' in saved.content.decode()
    last = Review.objects.get(extraction=ex)
    plain = _decide(client, ex, "accept", seen_review=last.pk, headers={}, page=6)
    assert plain.status_code == 302 and plain["Location"] == reverse(
        "clause-page", args=[ex.document_id, ex.pk, 6]
    )
    for junk in ("abc", "0", "99"):  # a page that is no page is no server error
        assert _decide(client, ex, "", page=junk).status_code == 422


def test_not_in_this_contract_marks_a_found_clause_absent_and_the_figures_count_it(
    client, auditor, contract, engagement
):
    # the only way to say "the engine found a clause this contract does not have" was a correction typed
    # exactly "not_found"; a reject says nothing about presence, so the silent-source figure never saw it
    from dashboards.figures import reviewer_counts

    ex = contract.extractions["Governing Law"]
    page = client.get(reverse("clause", args=[ex.document_id, ex.pk]), **HX).content.decode()
    assert (
        'name="decision" value="absent"' in page
        and 'Not in this contract <kbd aria-hidden="true">n</kbd>' in page
    )
    edited = _decide(client, ex, "absent", corrected_text=ex.clause_text + " (edited)")
    assert (
        edited.status_code == 422 and "You edited the text" in edited.content.decode()
    )  # the edit is not lost
    response = _decide(client, ex, "absent", corrected_text=ex.clause_text)  # the text box as it stands
    assert response.status_code == 200
    review = Review.objects.get(extraction=ex)
    assert (review.decision, review.corrected_text) == ("correct", "not_found")
    html = response.content.decode()
    assert "Not found: marked not in this contract by review." in html and 'value="absent"' not in html
    item = re.search(rf'id="clause-item-{ex.pk}".*?</li>', html, re.S).group(0)  # the list's item, swapped in
    assert "Marked not in this contract" in item and "not_found" not in item
    assert "marked not in this contract</div>" in html  # the history says it in words too
    counts = reviewer_counts([engagement.id])
    assert counts["absent_pairs"] == 1
    assert (counts["silent"]["n"], counts["silent"]["silent"]) == (1, 0)  # the engine's "found" was invented
    # an answer that already says not found has no such button, and the decision is refused in words
    missing = contract.extractions["Non-Compete"]
    assert (
        'value="absent"'
        not in client.get(reverse("clause", args=[missing.document_id, missing.pk]), **HX).content.decode()
    )
    refused = _decide(client, missing, "absent")
    assert (
        refused.status_code == 422
        and "already says this clause is not in the contract" in refused.content.decode()
    )
    assert not Review.objects.filter(extraction=missing).exists()


@pytest.mark.parametrize("preloaded", [True, False], ids=["with-the-clause", "page-query"])
def test_a_span_across_a_page_break_shows_both_pages_and_the_page_after_them(
    client, auditor, contract, preloaded, monkeypatch
):
    # a clause running from the foot of page 3 onto page 4: pages 2 (its end) and 5 (its start) frame it;
    # page 5 was never loaded, so the reader lost what follows the clause
    from extraction.models import Citation
    from reviewer import rows

    ex = contract.extractions["Governing Law"]
    page3, page4 = contract.pages[2], contract.pages[3]
    start, end = page3.char_end - 40, page4.char_start + 40
    text = contract.document.text
    cit = Citation.objects.create(
        extraction=ex,
        chunk=contract.chunks[0],
        ordinal=9,
        page=3,
        start=start,
        end=end,
        quote=text[start:end],
        model_page=3,
    )
    if not preloaded:  # the workspace's own page query, as when the clause was not loaded with its pages
        monkeypatch.setattr(rows, "page_rows", lambda extraction, citation_id: None)
    html = client.get(reverse("citation", args=[ex.document_id, ex.pk, cit.pk]), **HX).content.decode()
    assert re.findall(r'data-page="(\d+)"', html)[:2] == ["3", "4"]
    assert 'aria-label="End of page 2"' in html and 'aria-label="Start of page 5"' in html


@pytest.mark.parametrize("role", ["auditor", "manager"])
def test_the_review_page_headings_go_down_one_level_at_a_time(
    client, engagement, make_member, contract, role
):
    """A screen reader lists the headings to move around: the clause types sit under a "Clauses" heading
    (not under "Find a clause", nor straight under the document's title where the find box is not shown)."""
    client.force_login(make_member(engagement, role))
    ex = contract.extractions["Payment"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk])).content.decode()
    headings = [
        (int(level), re.sub(r"<[^>]+>|\s+", " ", text).strip())
        for level, text in re.findall(r"<h([1-6])\b[^>]*>(.*?)</h\1>", html, re.S)
    ]
    assert headings[0][0] == 1
    assert all(b[0] <= a[0] + 1 for a, b in zip(headings, headings[1:])), headings
    first_group = next(i for i, (level, text) in enumerate(headings) if text.startswith("Payment"))
    assert [h for h in headings[:first_group] if h[0] == 2][-1] == (2, "Clauses")


def test_the_boxes_that_scroll_take_the_keyboard_focus_and_say_what_they_hold(client, auditor, contract):
    """The clause text, the decision history and a summary's quotes scroll when long; Safari does not make a
    scroller focusable by itself, so without a tab stop a keyboard user could not read the end of them."""
    from reviewer.summaries import make_summary

    ex = contract.extractions["Cap On Liability"]
    record_decision(extraction_id=ex.pk, user=auditor, decision="accept", seen_review_id=0, seen_version=1)
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk])).content.decode()
    make_summary(contract.document, auditor)
    summary = client.get(reverse("document-summary", args=[contract.document.pk])).content.decode()
    boxes = (
        elements(html, cls="clause-text")
        + elements(html, cls="history-list")
        + elements(summary, cls="clause-text")
    )
    assert len(boxes) >= 3
    for box in boxes:
        assert box.get("tabindex") == "0" and box.get("aria-label"), box
    assert elements(html, cls="clause-text")[0]["aria-label"] == "Clause text"


def test_the_document_text_and_the_neighbouring_pages_carry_names_a_screen_reader_reads(
    client, auditor, contract
):
    """A name on an element with no role (a plain div) is not read out; a named region is a landmark, so only
    the document text is one: the few lines of the pages either side are named groups in it."""
    ex = contract.extractions["Cap On Liability"]
    html = client.get(reverse("clause", args=[ex.document_id, ex.pk])).content.decode()
    assert elements(html, cls="context")  # the foot of the page before, the head of the page after
    for tag in ("div", "span", "p"):
        assert [attrs for attrs in elements(html, tag) if "aria-label" in attrs and "role" not in attrs] == []
    (viewer,) = elements(html, cls="viewer")
    assert (viewer.get("role"), viewer.get("aria-label")) == ("region", "Document text")
    assert [(c.get("role"), c.get("aria-label")) for c in elements(html, cls="context")] == [
        ("group", "End of page 2"),
        ("group", "Start of page 4"),
    ]
