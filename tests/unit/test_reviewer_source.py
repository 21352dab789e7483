"""The source viewer's highlighting: exact spans, always escaped, clipped to the page."""

import re

from django.utils.html import escape

from reviewer.source import PageText, Span, head, highlight, pages_of_span, tail

TEXT = 'Page one ends here.\fThe <b>cap</b> is "$247.83" & final.\fLast page.'


def page(number):
    starts = [0, 20, 57]
    ends = [19, 56, len(TEXT)]
    s, e = starts[number - 1], ends[number - 1]
    return PageText(number, s, e, TEXT[s:e])


def test_pages_are_slices_between_form_feeds():
    assert [page(n).text for n in (1, 2, 3)] == [
        "Page one ends here.",
        'The <b>cap</b> is "$247.83" & final.',
        "Last page.",
    ]


def test_the_mark_holds_exactly_the_cited_span_and_everything_is_escaped():
    start = TEXT.index("<b>cap</b>")
    html = highlight(page(2), [Span(7, start, start + len("<b>cap</b>"))])
    assert html == (
        'The <mark data-citation-id="7" id="cite-7" tabindex="-1">&lt;b&gt;cap&lt;/b&gt;</mark>'
        " is &quot;$247.83&quot; &amp; final."
    )


def test_a_closest_sentence_is_marked_apart_from_citations_and_escaped():
    start = TEXT.index('"$247.83"')
    html = highlight(page(2), [Span(0, start, start + 9, passage="closest")])
    assert html == (
        'The &lt;b&gt;cap&lt;/b&gt; is <mark class="closest" data-closest id="closest-passage" tabindex="-1">'
        "&quot;$247.83&quot;</mark> &amp; final."
    )
    assert "data-citation-id" not in html


def test_no_span_means_escaped_text_only():
    assert highlight(page(2)) == "The &lt;b&gt;cap&lt;/b&gt; is &quot;$247.83&quot; &amp; final."


def test_spans_are_clipped_to_the_page_and_overlaps_never_duplicate_text():
    span = Span(1, TEXT.index("ends"), TEXT.index("cap"))  # crosses the page break
    assert highlight(page(1), [span]).endswith(
        '<mark data-citation-id="1" id="cite-1" tabindex="-1">ends here.</mark>'
    )
    assert highlight(page(2), [span]).startswith('<mark data-citation-id="1">The &lt;b&gt;</mark>')
    a, b = TEXT.index("is"), TEXT.index("final")
    html = highlight(page(2), [Span(1, a, b), Span(2, a + 3, b + 3)])
    plain = (
        html.replace('<mark data-citation-id="1" id="cite-1" tabindex="-1">', "")
        .replace('<mark data-citation-id="2" id="cite-2" tabindex="-1">', "")
        .replace("</mark>", "")
    )
    assert plain == highlight(page(2))


def test_a_span_across_a_page_break_has_its_id_once_on_the_pages_shown_together():
    # both pages are shown in one viewer: a second id="cite-1" would make the page's ids ambiguous
    # (a link to #cite-1, a screen reader's reference) and fail HTML validation
    span = Span(1, TEXT.index("ends"), TEXT.index("Last") + 4)  # pages 1, 2 and 3
    html = "".join(highlight(page(n), [span]) for n in (1, 2, 3))
    assert html.count('id="cite-1"') == 1
    assert html.count('<mark data-citation-id="1"') == 3  # every half is still highlighted
    assert html.index('id="cite-1"') < html.index("ends here")  # the id is on where the quote starts


def test_pages_of_a_span():
    pages = [page(1), page(2), page(3)]
    assert pages_of_span(TEXT.index("cap"), TEXT.index("cap") + 3, pages) == [2]
    assert pages_of_span(TEXT.index("ends"), TEXT.index("Last") + 2, pages) == [1, 2, 3]


def test_context_cuts_at_word_boundaries():
    words = " ".join(f"w{i}" for i in range(200))
    assert tail(words, 50).startswith("… w") and words.endswith(tail(words, 50)[2:])
    assert head(words, 50).endswith(" …") and words.startswith(head(words, 50)[:-2])
    assert head("short") == "short" and tail("short") == "short"


MD = "Intro & terms.\n\n# 11. Governing <Law>\n\nThis Agreement is governed by New York law.\n## 11.2 Escalation"


def _strip_tags(html: str) -> str:
    import re

    return re.sub(r"<[^>]+>", "", html)


def test_markdown_heading_lines_are_shown_as_headings_with_their_marker_kept():
    html = highlight(PageText(1, 0, len(MD), MD))
    assert '<strong class="md-h"><span class="md-mark"># </span>11. Governing &lt;Law&gt;</strong>' in html
    assert '<strong class="md-h"><span class="md-mark">## </span>11.2 Escalation</strong>' in html
    assert _strip_tags(html) == escape(MD)  # every character kept, once


def test_a_mark_across_a_heading_line_nests_and_keeps_every_character_once():
    start, end = MD.index("terms"), MD.index("This Agreement") + 4
    html = highlight(PageText(1, 0, len(MD), MD), [Span(3, start, end)])
    mark = html[html.index("<mark") : html.index("</mark>") + len("</mark>")]
    assert mark.count("<strong") == mark.count("</strong>") == 1  # the heading's tags open and close inside
    assert _strip_tags(mark) == "terms.\n\n# 11. Governing &lt;Law&gt;\n\nThis"
    assert _strip_tags(html) == escape(MD)


FEES = (
    "## Fee Schedule\n| Code | Item | Fee (USD) |\n| --- | :--- | ---: |\n| FS-001 | <b>Standard</b> unit | $247.83 |\n"
    "| FS-002 | Rush \\| same day | $312.40 |\n\nNotes follow."
)


def test_a_markdown_table_is_shown_as_a_table_with_every_word_of_its_cells():
    html = highlight(PageText(1, 0, len(FEES), FEES))
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    assert [re.findall(r'<t([hd])(?: scope="col")?>(.*?)</t[hd]>', row) for row in rows] == [
        [("h", "Code"), ("h", "Item"), ("h", "Fee (USD)")],  # the header row; the rule under it is not shown
        [("d", "FS-001"), ("d", "&lt;b&gt;Standard&lt;/b&gt; unit"), ("d", "$247.83")],  # escaped, as ever
        [("d", "FS-002"), ("d", "Rush | same day"), ("d", "$312.40")],  # a "|" inside a cell is the reader's
    ]
    assert html.startswith('<strong class="md-h">') and html.endswith("</table></div>\nNotes follow.")
    assert "---" not in html and html.count('<th scope="col">') == 3  # a screen reader names each column


def test_a_span_across_table_cells_is_marked_in_each_with_its_id_once():
    start, end = FEES.index("$247.83"), FEES.index("Rush") + len("Rush")
    html = highlight(PageText(1, 0, len(FEES), FEES), [Span(9, start, end)])
    marked = re.findall(r"<mark ([^>]*)>(.*?)</mark>", html)
    assert [text for _, text in marked] == ["$247.83", "FS-002", "Rush"]
    assert [attrs.count('id="cite-9"') for attrs, _ in marked] == [1, 0, 0]


def test_rows_continued_from_the_page_before_are_a_table_and_one_row_of_bars_is_text():
    rows = "| FS-003 | Onboarding | $18,500.00 |\n| FS-004 | Report | $1,275.00 |\nEnd."
    html = highlight(PageText(2, 100, 100 + len(rows), rows))
    assert "<th>" not in html and html.count("<tr>") == 2 and "<td>$18,500.00</td>" in html
    one = "Options: | A | B |"
    assert highlight(PageText(1, 0, len(one), one)) == "Options: | A | B |"
    alone = "| just one line |"
    assert highlight(PageText(1, 0, len(alone), alone)) == alone
