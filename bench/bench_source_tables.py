"""The source viewer on a spreadsheet page: time to render a sheet of ``--rows`` rows as a table.

An XLSX sheet converts to one page holding one Markdown table, so a customer list of ten thousand rows is
one page the reviewer opens. ``reviewer.source.highlight`` renders it as an HTML table (one cited span in
it, as when a clause is clicked); timed ``--repeat`` times, p50/p95.

Baseline, same run: the same page with every "|" replaced by ";" (no table: escaped text with the one
mark), the work the viewer did before tables were drawn. ``slowdown_vs_plain_text`` is the table's p50 and
p95 over the baseline's (> 1: slower).

Usage: ``python -m bench.bench_source_tables [--rows 10000] [--repeat 20]``  (prints one JSON object)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import percentiles, ratio  # noqa: E402


def sheet(rows: int) -> str:
    lines = [
        f"| cust_{i:05d} | Customer {i} Holdings, Inc. | Chicago, IL | net {30 + i % 3 * 15} | ${i * 3.17:,.2f} |"
        for i in range(rows)
    ]
    return (
        "## Customers\n| ID | Name | City | Terms | Balance |\n| --- | --- | --- | --- | --- |\n"
        + "\n".join(lines)
    )


def timed(text: str, cited: str, repeat: int) -> dict:
    from reviewer.source import PageText, Span, highlight

    page = PageText(1, 0, len(text), text)
    start = text.index(cited)
    spans = [Span(1, start, start + len(cited))]
    samples, html = [], ""
    for _ in range(repeat):
        began = time.perf_counter()
        html = highlight(page, spans)
        samples.append((time.perf_counter() - began) * 1000)
    return {**percentiles(samples), "html_chars": len(html), "tables": html.count("<table>")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    text = sheet(args.rows)
    cited = "cust_00047 | Customer 47 Holdings"  # a quote across two cells
    table = timed(text, cited, args.repeat)
    plain = timed(text.replace("|", ";"), cited.replace("|", ";"), args.repeat)
    print(
        json.dumps(
            {
                "bench": "source_tables",
                "rows": args.rows,
                "page_chars": len(text),
                "table": table,
                "baseline_plain_text": plain,
                "slowdown_vs_plain_text": {
                    "p50": ratio(table["p50_ms"], plain["p50_ms"]),
                    "p95": ratio(table["p95_ms"], plain["p95_ms"]),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
