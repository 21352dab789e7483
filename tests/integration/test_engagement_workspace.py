"""The engagement workspace: the grid (contracts × clause types) and its export, one clause type compared
across contracts with its group accept, and search across the engagement; each scoped to its members."""

from __future__ import annotations

import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from openpyxl import load_workbook

from engagements.models import Engagement
from extraction.models import UNSURE_BELOW, Extraction, ExtractionRun
from reviewer.decisions import record_decision
from reviewer.models import Review
from tests.factories import ensure_clause_types, make_document, make_reviewable

pytestmark = pytest.mark.django_db

DELAWARE = (
    "governed by the laws of the State of Delaware"  # the planted Governing Law quote (tests.factories)
)
NEW_YORK = "governed by the laws of the State of New York"


def _answer(run, document, clause_type, status, text="", key=None):
    return Extraction.objects.create(
        run=run,
        document=document,
        clause_type=clause_type,
        status=status,
        engine="offline",
        clause_text=text,
        dedupe_key=key or f"{status}-{clause_type.pk}",
    )


@pytest.fixture
def workspace(engagement, make_member):
    """Three contracts of one engagement, hand-counted:

    * "Alpha MSA" (tests.factories.make_reviewable): 5 found (Payment, Cap On Liability, Termination For
      Convenience, Governing Law = Delaware, Other), Non-Compete not found, Insurance unverified;
      its Payment accepted.
    * "beta lease" (Lease): Governing Law found, the same words as Alpha's; Payment not found.
    * "Gamma NDA" (NDA): Governing Law found (New York), and a later run's "not found" for it (the found
      answer is the one its cell shows); Insurance not found, rejected.
    """
    auditor = make_member(engagement, "auditor", "ann")
    manager = make_member(engagement, "manager", "max")
    types = ensure_clause_types()
    alpha = make_reviewable(engagement, title="Alpha MSA", seed=1)
    beta, _, _ = make_document(engagement, title="beta lease", seed=2, doc_type="Lease")
    gamma, _, _ = make_document(engagement, title="Gamma NDA", seed=3, doc_type="NDA")
    run = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    later = ExtractionRun.objects.create(engagement=engagement, engine="offline", status="done")
    gl = types["Governing Law"]
    answers = {
        "beta GL": _answer(run, beta, gl, "found", DELAWARE),
        "beta Payment": _answer(run, beta, types["Payment"], "not_found"),
        "gamma GL": _answer(run, gamma, gl, "found", NEW_YORK),
        "gamma GL later": _answer(later, gamma, gl, "not_found"),
        "gamma Insurance": _answer(run, gamma, types["Insurance"], "not_found"),
    }
    record_decision(
        extraction_id=alpha.extractions["Payment"].pk,
        user=auditor,
        decision="accept",
        seen_review_id=0,
        seen_version=1,
    )
    record_decision(
        extraction_id=answers["gamma Insurance"].pk,
        user=auditor,
        decision="reject",
        reason="It is in schedule 4.",
        seen_review_id=0,
        seen_version=1,
    )
    return {
        "auditor": auditor,
        "manager": manager,
        "types": types,
        "alpha": alpha,
        "beta": beta,
        "gamma": gamma,
        "answers": answers,
    }


@pytest.fixture
def other(make_member):
    """Engagement B with a contract, and a member of it alone."""
    b = Engagement.objects.create(name="Other client audit", client="Other")
    contract = make_reviewable(b, title="B's secret MSA", seed=9)
    return {"engagement": b, "contract": contract, "member": make_member(b, "auditor", "bea")}


def _grid(client, engagement, **params):
    response = client.get(reverse("engagement-grid", args=[engagement.pk]), params)
    assert response.status_code == 200
    return response


def _cells(response) -> dict[tuple[str, str], object]:
    names = [ct.name for ct, _ in response.context["columns"]]
    return {
        (row.document.title, names[i]): cell
        for row in response.context["rows"]
        for i, cell in enumerate(row.cells)
        if cell is not None
    }


# --------------------------------------------------------------------------- the grid


def test_grid_counts_equal_the_hand_counted_fixture(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    response = _grid(client, engagement)
    rows = {r.document.title: r for r in response.context["rows"]}
    assert [r.document.title for r in response.context["rows"]] == ["Alpha MSA", "beta lease", "Gamma NDA"]
    assert (rows["Alpha MSA"].found, rows["Alpha MSA"].reviewed) == (5, 1)
    assert (rows["Alpha MSA"].not_found, rows["Alpha MSA"].unverified) == (1, 1)
    assert (rows["beta lease"].found, rows["beta lease"].reviewed, rows["beta lease"].not_found) == (1, 0, 1)
    assert (rows["Gamma NDA"].found, rows["Gamma NDA"].reviewed, rows["Gamma NDA"].not_found) == (1, 1, 1)
    totals = {ct.name: n for ct, n in response.context["columns"]}
    assert totals["Governing Law"] == 3 and totals["Payment"] == 1 and totals["Insurance"] == 0
    assert totals["Non-Compete"] == 0 and totals["Cap On Liability"] == 1
    cells = _cells(response)
    assert cells[("Gamma NDA", "Governing Law")].status == "found"  # found before a later "not found"
    assert cells[("Gamma NDA", "Governing Law")].answers == 2
    assert cells[("Alpha MSA", "Payment")].review == "accept"
    assert cells[("Alpha MSA", "Payment")].value == "$247.83"  # the short value of a clause
    assert cells[("Gamma NDA", "Insurance")].review == "reject"
    html = response.content.decode()
    link = reverse(
        "clause", args=[workspace["alpha"].document.pk, workspace["alpha"].extractions["Payment"].pk]
    )
    assert f'href="{link}"' in html  # a cell opens its clause on its page


def test_grid_filters_sort_columns_and_pages_are_kept_in_the_url(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    types = workspace["types"]
    titles = lambda r: [row.document.title for row in r.context["rows"]]  # noqa: E731
    assert titles(_grid(client, engagement, sort="-title")) == ["Gamma NDA", "beta lease", "Alpha MSA"]
    assert titles(_grid(client, engagement, dt="Lease")) == ["beta lease"]
    payment = types["Payment"].pk
    assert titles(_grid(client, engagement, type=payment, status="not_found")) == ["beta lease"]
    assert titles(_grid(client, engagement, review="accept")) == ["Alpha MSA"]
    assert titles(_grid(client, engagement, review="reject", by=workspace["auditor"].pk)) == ["Gamma NDA"]
    assert titles(_grid(client, engagement, by=workspace["manager"].pk)) == []
    assert titles(_grid(client, engagement, sort="-found"))[0] == "Alpha MSA"
    assert titles(_grid(client, engagement, sort="reviewed"))[0] == "beta lease"
    gl = types["Governing Law"].pk
    response = _grid(client, engagement, col=[gl, payment], per=25, status="found")
    assert [ct.pk for ct, _ in response.context["columns"]] == sorted(
        [gl, payment], key=lambda pk: [t.pk for t in response.context["types"]].index(pk)
    )
    cells = _cells(response)
    assert cells[("beta lease", "Payment")].dim and not cells[("beta lease", "Governing Law")].dim
    # sort links and the export link carry the filters and the columns
    html = response.content.decode()
    assert f"col={gl}" in response.context["sort_links"]["title"]["url"]
    assert "status=found" in response.context["export_query"] and "per=25" in html
    one_per_page = _grid(client, engagement, per=25)
    assert one_per_page.context["page"].paginator.num_pages == 1


def test_the_grid_filters_the_answers_the_engine_is_less_sure_of(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    answers = workspace["answers"]
    Extraction.objects.filter(pk=answers["beta GL"].pk).update(confidence=UNSURE_BELOW - 0.1)
    Extraction.objects.filter(pk=answers["gamma GL"].pk).update(confidence=0.95)
    gl = workspace["types"]["Governing Law"].pk
    response = _grid(client, engagement, type=gl, sure="less")
    assert [row.document.title for row in response.context["rows"]] == ["beta lease"]
    assert "sure=less" in response.context["export_query"]
    assert 'value="less" selected' in response.content.decode()
    everything = _grid(client, engagement, type=gl)
    assert len(everything.context["rows"]) == 3  # an answer without a confidence is never "less sure"


def test_grid_queries_are_bounded_whatever_the_page_holds(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    with CaptureQueriesContext(connection) as three:
        _grid(client, engagement)
    for n in range(4):
        make_reviewable(engagement, title=f"More {n}", seed=20 + n)
    with CaptureQueriesContext(connection) as seven:
        response = _grid(client, engagement)
    assert len(response.context["rows"]) == 7
    assert len(seven.captured_queries) == len(three.captured_queries)


def test_grid_export_is_what_the_screen_shows_with_citations(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    gl = workspace["types"]["Governing Law"].pk
    response = client.get(
        reverse("engagement-grid-export", args=[engagement.pk]), {"col": [gl], "sort": "-title"}
    )
    assert response.status_code == 200
    book = load_workbook(io.BytesIO(b"".join(response.streaming_content)), read_only=True)
    assert book.sheetnames == ["grid", "clauses"]
    grid_rows = list(book["grid"].values)
    assert grid_rows[0][-1] == "Governing Law"
    assert [r[1] for r in grid_rows[1:]] == ["Gamma NDA", "beta lease", "Alpha MSA"]
    assert grid_rows[3][-1].startswith("found · not reviewed") and "p. 5" in grid_rows[3][-1]
    clauses = list(book["clauses"].values)
    header = clauses[0]
    shown = [dict(zip(header, r, strict=True)) for r in clauses[1:]]
    assert [r["document"] for r in shown] == ["Gamma NDA", "beta lease", "Alpha MSA"]
    assert shown[2]["quote"] == DELAWARE and shown[2]["page"] == 5  # with its citation
    assert {r["type"] for r in shown} == {"Governing Law"}


# --------------------------------------------------------------------------- one type compared


def _comparison(client, engagement, clause_type):
    response = client.get(reverse("engagement-compare-type", args=[engagement.pk, clause_type.pk]))
    assert response.status_code == 200
    return response


def test_comparison_groups_wordings_unusual_first_with_a_word_diff(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    response = _comparison(client, engagement, workspace["types"]["Governing Law"])
    c = response.context["comparison"]
    assert [g.size for g in c.groups] == [1, 2]  # New York alone first, then the two Delaware
    assert [e.document.title for e in c.groups[0].wordings[0].wording.items] == ["Gamma NDA"]
    assert c.usual_text == DELAWARE
    html = response.content.decode()
    assert "<del>Delaware</del> <ins>New York</ins>" in html
    assert c.groups[1].wordings[0].usual and len(c.groups[1].wordings[0].to_accept) == 2
    assert html.count('name="pick"') == 3  # New York's one and Delaware's two
    redirect = client.get(
        reverse("engagement-compare", args=[engagement.pk]), {"type": workspace["types"]["Governing Law"].pk}
    )
    assert redirect.status_code == 302


def test_a_comparison_without_a_shared_wording_names_none_the_most_common(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    gl = workspace["types"]["Governing Law"]
    shared = _comparison(client, engagement, gl).content.decode()
    assert "Most common wording" in shared and "Unusual wording" in shared
    url = reverse("engagement-compare-type", args=[engagement.pk, gl.pk])
    response = client.get(url, {"dt": "NDA"})  # Gamma's New York alone
    html = response.content.decode()
    assert not response.context["comparison"].shared
    assert "Most common wording" not in html and "Reference wording" in html
    assert "No two contracts word it alike" in html


def test_accepting_a_group_writes_one_review_per_clause(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    gl = workspace["types"]["Governing Law"]
    wording = _comparison(client, engagement, gl).context["comparison"].groups[1].wordings[0]
    before = Review.objects.count()
    response = client.post(reverse("compare-accept", args=[engagement.pk, gl.pk]), {"pick": wording.picks})
    assert response.status_code == 302
    assert Review.objects.count() == before + 2
    ids = {workspace["alpha"].extractions["Governing Law"].pk, workspace["answers"]["beta GL"].pk}
    reviews = list(Review.objects.filter(extraction_id__in=ids))
    assert {r.extraction_id for r in reviews} == ids and len(reviews) == 2
    assert all(
        r.decision == "accept" and r.reviewer == workspace["auditor"] and r.extraction_version == 1
        for r in reviews
    )
    after = _comparison(client, engagement, gl).context["comparison"]
    assert after.groups[1].wordings[0].to_accept == []
    # the same form posted again is stale: nothing more is recorded
    again = client.post(
        reverse("compare-accept", args=[engagement.pk, gl.pk]), {"pick": wording.picks}, follow=True
    )
    assert Review.objects.count() == before + 2
    assert "Nothing in this group was recorded" in again.content.decode()


def test_a_group_of_different_wordings_is_refused_whole(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    gl = workspace["types"]["Governing Law"]
    c = _comparison(client, engagement, gl).context["comparison"]
    picks = c.groups[0].wordings[0].picks + c.groups[1].wordings[0].picks
    before = Review.objects.count()
    client.post(reverse("compare-accept", args=[engagement.pk, gl.pk]), {"pick": picks})
    assert Review.objects.count() == before


def test_a_manager_cannot_accept_a_group(client, engagement, workspace):
    client.force_login(workspace["auditor"])
    gl = workspace["types"]["Governing Law"]
    wording = _comparison(client, engagement, gl).context["comparison"].groups[1].wordings[0]
    client.force_login(workspace["manager"])
    page = _comparison(client, engagement, gl).content.decode()
    assert 'name="pick"' not in page  # no accept button for a role that does not decide
    before = Review.objects.count()
    response = client.post(reverse("compare-accept", args=[engagement.pk, gl.pk]), {"pick": wording.picks})
    assert response.status_code == 403
    assert Review.objects.count() == before


# --------------------------------------------------------------------------- search


@pytest.fixture
def no_model(monkeypatch):
    """The query's vector without loading the embedding model (the fixtures' chunks have no vectors: the
    full-text side finds them)."""
    monkeypatch.setattr("ingest.search.embed_query", lambda text: [1.0] + [0.0] * 383)


def test_search_groups_hits_by_contract_with_page_and_marked_snippet(
    client, engagement, workspace, other, no_model
):
    client.force_login(workspace["auditor"])
    url = reverse("engagement-search", args=[engagement.pk])
    response = client.get(url, {"q": "Delaware governing law"})
    assert response.status_code == 200
    results = response.context["results"]
    titles = [r.title for r in results]
    assert "Alpha MSA" in titles and "B's secret MSA" not in titles
    alpha = next(r for r in results if r.title == "Alpha MSA")
    hit = next(h for h in alpha.hits if "Delaware" in h.snippet)
    assert hit.page == 5 and "<mark>Delaware</mark>" in hit.snippet
    html = response.content.decode()
    assert reverse("document-page", args=[workspace["alpha"].document.pk, 5]) in html
    only_leases = client.get(url, {"q": "Delaware governing law", "dt": "Lease"}).context["results"]
    assert {r.title for r in only_leases} <= {"beta lease"}


def test_search_lists_each_contracts_best_passage_first(client, engagement, workspace, other, no_model):
    client.force_login(workspace["auditor"])
    url = reverse("engagement-search", args=[engagement.pk])
    results = client.get(url, {"q": "governing law Delaware"}).context["results"]
    alpha = next(r for r in results if r.title == "Alpha MSA")
    assert len(alpha.hits) > 1 and "Delaware" in alpha.hits[0].snippet, [
        (h.page, h.score) for h in alpha.hits
    ]
    assert [h.score for h in alpha.hits] == sorted((h.score for h in alpha.hits), reverse=True)
    assert alpha.hits[0].page > min(h.page for h in alpha.hits)  # the best passage is not the first page's


def test_a_search_for_an_exact_value_lists_the_passages_that_hold_it_as_written(
    client, engagement, workspace, no_model
):
    client.force_login(workspace["auditor"])
    url = reverse("engagement-search", args=[engagement.pk])
    response = client.get(url, {"q": "terminate $247.83"})
    results, others = response.context["results"], response.context["others"]
    held = [h for r in results for h in r.hits]
    assert held and all("<mark>$247.83</mark>" in h.snippet for h in held), held
    assert others, "the passages found by the words alone are kept, apart"
    assert not any("$247.83" in h.snippet for r in others for h in r.hits)
    html = response.content.decode()
    summary = html[html.index("grid-summary") :][:300]
    assert "passages in 3 contracts hold “$247.83”</p>" in summary and "without “$247.83”" in html
    # the cap's "$247,830.00" is another value: a search for it does not list the fee's passage
    cap = client.get(url, {"q": "$247,830.00"}).context["results"]
    assert {h.page for r in cap for h in r.hits} == {3}


def test_a_value_no_passage_holds_says_so_and_shows_the_closest(client, engagement, workspace, no_model):
    client.force_login(workspace["auditor"])
    response = client.get(
        reverse("engagement-search", args=[engagement.pk]), {"q": "termination fee $999.99"}
    )
    assert response.context["results"] == [] and response.context["others"]
    html = response.content.decode()
    assert "No passage holds “$999.99”</p>" in html
    assert '<details class="other-hits" open>' in html


def _lease_over_two_pages(engagement):
    """A ready contract whose one chunk packs two short sections over a page break, as the chunker packs
    them: the chunk's first page and heading are section 15's, "termination fee" is on page 2, in 16."""
    from ingest.models import Chunk, Document, Page

    first = "15. Assignment\n\nTenant shall not assign this Lease without the consent of Landlord.\n\n"
    text = (
        first + "\f16. Termination Option\n\nTenant may end this Lease early by paying a termination fee.\n"
    )
    doc = Document.objects.create(
        engagement=engagement,
        original_name="lease.pdf",
        sha256="e" * 64,
        size_bytes=len(text),
        title="Lease",
        kind="pdf",
        status="ready",
        text=text,
        page_count=2,
    )
    Page.objects.create(document=doc, number=1, char_start=0, char_end=len(first))
    Page.objects.create(document=doc, number=2, char_start=len(first) + 1, char_end=len(text))
    Chunk.objects.create(
        document=doc,
        chunk_id="lease-0",
        ordinal=0,
        text=text,
        char_start=0,
        char_end=len(text),
        page_start=1,
        page_end=2,
        paragraph=0,
        section="15. Assignment",
    )
    return doc


def _lease_hit(client, engagement):
    results = client.get(reverse("engagement-search", args=[engagement.pk]), {"q": "termination fee"})
    (lease,) = [r for r in results.context["results"] if r.title == "Lease"]
    (hit,) = lease.hits
    return hit, results.content.decode()


def test_a_hit_names_the_page_and_heading_of_the_words_it_shows(client, engagement, workspace, no_model):
    doc = _lease_over_two_pages(engagement)
    client.force_login(workspace["auditor"])
    hit, html = _lease_hit(client, engagement)
    assert (hit.page, hit.section) == (2, "16. Termination Option"), hit
    assert reverse("document-page", args=[doc.pk, 2]) in html


def test_with_the_cache_away_a_hit_still_names_its_heading(
    client, engagement, workspace, no_model, monkeypatch
):
    import redis
    from django.core.cache import cache

    def away(*args, **kwargs):
        raise redis.ConnectionError("Redis is down")

    for name in ("get", "set", "get_many", "set_many"):
        monkeypatch.setattr(cache, name, away)
    _lease_over_two_pages(engagement)
    client.force_login(workspace["auditor"])
    hit, _ = _lease_hit(client, engagement)
    assert (hit.page, hit.section) == (2, "16. Termination Option"), hit


# --------------------------------------------------------------------------- isolation


def test_a_member_of_one_engagement_gets_404_for_another_engagements_workspace(
    client, engagement, workspace, other, no_model
):
    client.force_login(other["member"])
    gl = workspace["types"]["Governing Law"]
    for url in [
        reverse("engagement-grid", args=[engagement.pk]),
        reverse("engagement-grid-export", args=[engagement.pk]),
        reverse("engagement-compare", args=[engagement.pk]),
        reverse("engagement-compare-type", args=[engagement.pk, gl.pk]),
        reverse("engagement-search", args=[engagement.pk]) + "?q=Delaware",
    ]:
        assert client.get(url).status_code == 404, url
    ex = workspace["answers"]["beta GL"]
    accept = reverse("compare-accept", args=[engagement.pk, gl.pk])
    assert client.post(accept, {"pick": [f"{ex.pk}:0:1"]}).status_code == 404
    # and A's clauses posted to B's own page are not B's: 404, nothing recorded
    own = reverse("compare-accept", args=[other["engagement"].pk, gl.pk])
    assert client.post(own, {"pick": [f"{ex.pk}:0:1"]}).status_code == 404
    assert not Review.objects.filter(extraction_id=ex.pk).exists()
    # B's member's own grid shows B's contract alone
    rows = _grid(client, other["engagement"]).context["rows"]
    assert [r.document.title for r in rows] == ["B's secret MSA"]
