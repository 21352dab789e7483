"""Labels of the dashboard charts and tables (pure, no database)."""

from __future__ import annotations

import pytest

from dashboards import charts
from extraction.evaluation import stratify as st


@pytest.mark.parametrize(
    "passes, n, label",
    [
        (8995, 10000, "89%"),
        (8950, 10000, "89%"),
        (9496, 10000, "94%"),
        (9000, 10000, "90%"),
        (29, 100, "29%"),
        (999, 1000, "99%"),
        (1, 1, "100%"),
        (0, 3, "0%"),
    ],
)
def test_a_rate_under_a_target_never_reads_as_reaching_it(passes, n, label):
    stratum = st.Stratum("d", "c", "front", n=n, passes=passes, target=0.90)
    assert charts.pct(stratum.rate) == label
    if stratum.below_target:
        assert int(charts.pct(stratum.rate).rstrip("%")) < 90


def test_heatmap_cell_of_a_stratum_just_under_target():
    stratum = st.Stratum("Distributor", "Cap On Liability", "back", n=1000, passes=899, target=0.90)
    pair = type(
        "Pair",
        (),
        {
            "doc_type": "Distributor",
            "clause_type": "Cap On Liability",
            "section": "back",
            "reviews": stratum,
            "benchmark": None,
        },
    )()
    cell = next(c for c in charts.heatmap([pair])["cells"] if c.get("n"))
    assert cell["text"] == "89%" and "below" in cell["cls"]
    assert "pass (89%, 95% CI 88%–92%)" in cell["title"]  # interval bounds stay rounded to the nearest
