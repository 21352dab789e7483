"""Geometry of the server-rendered SVG charts (pure: numbers in, coordinates and labels out).

Templates draw what these functions lay out; colours come from CSS classes (no inline styles: CSP).
Every chart has a data table under it in the page, so the SVG is a picture of the table, not the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from extraction.evaluation.stratify import SECTION_LABELS, SECTIONS, Stratum

SOURCES = (("reviews", "Reviewer decisions"), ("benchmark", "Benchmark vs gold"))
THIN_N = 5  # fewer rows than this: the cell is drawn hatched (a rate from very few rows)


def pct(value: float | None) -> str:
    """A rate as a whole percent rounded down (0.8995 -> "89%"), so a rate under a target never reads as
    reaching it ("90%" beside "under target 90%"); None -> "–"."""
    return "–" if value is None else f"{math.floor(value * 100 + 1e-9)}%"


def bound_pct(value: float | None) -> str:
    """An interval bound as the nearest whole percent (0.2065 -> "21%"); None -> "–"."""
    return "–" if value is None else f"{value * 100:.0f}%"


def heat_class(rate: float | None) -> str:
    if rate is None:
        return "heat-na"
    if rate >= 0.95:
        return "heat-4"
    if rate >= 0.90:
        return "heat-3"
    if rate >= 0.75:
        return "heat-2"
    if rate >= 0.50:
        return "heat-1"
    return "heat-0"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stratum_title(s: Stratum, source_label: str) -> str:
    return (
        f"{s.doc_type or 'unclassified'} · {s.clause_type} · {s.section_label} · {source_label}: "
        f"{s.passes}/{s.n} pass ({pct(s.rate)}, 95% CI {bound_pct(s.low)}–{bound_pct(s.high)})"
    )


@dataclass
class Layout:
    label_w: int = 330
    cell_w: int = 72
    cell_h: int = 26
    group_gap: int = 14
    header_h: int = 44


DEFAULT_LAYOUT = Layout()


def heatmap(pairs, max_rows: int = 25, layout: Layout = DEFAULT_LAYOUT) -> dict:
    """pairs: StratumPair rows, worst first -> rows of (doc type, clause type), columns source × section."""
    order: list[tuple[str, str]] = []
    cells_by_row: dict[tuple[str, str], dict[tuple[str, str], Stratum]] = {}
    for pair in pairs:
        row_key = (pair.doc_type, pair.clause_type)
        if row_key not in cells_by_row:
            if len(order) >= max_rows:
                continue
            order.append(row_key)
            cells_by_row[row_key] = {}
        for source, _ in SOURCES:
            stratum = getattr(pair, source)
            if stratum is not None:
                cells_by_row[row_key][(source, pair.section)] = stratum

    columns: list[dict[str, Any]] = []
    x = layout.label_w
    groups = []
    for source, source_label in SOURCES:
        start = x
        for section in SECTIONS:
            columns.append(
                {
                    "source": source,
                    "source_label": source_label,
                    "section": section,
                    "label": SECTION_LABELS[section],
                    "x": x,
                    "cx": x + layout.cell_w // 2,
                }
            )
            x += layout.cell_w
        groups.append({"label": source_label, "x": start, "cx": (start + x) // 2, "w": x - start})
        x += layout.group_gap
    width = x - layout.group_gap + 2

    rows, cells = [], []
    for index, (doc_type, clause_type) in enumerate(order):
        y = layout.header_h + index * layout.cell_h
        full = f"{doc_type or 'unclassified'} · {clause_type}"
        rows.append({"y": y, "ty": y + layout.cell_h // 2 + 4, "label": _clip(full, 48), "title": full})
        for column in columns:
            stratum = cells_by_row[(doc_type, clause_type)].get((column["source"], column["section"]))
            cell = {
                "x": column["x"] + 1,
                "y": y + 1,
                "w": layout.cell_w - 2,
                "h": layout.cell_h - 2,
                "tx": column["cx"],
                "ty": y + layout.cell_h // 2 + 4,
            }
            if stratum is None or not stratum.n:
                cell.update(
                    cls="heat-na",
                    text="",
                    title=f"{full} · {column['label']} · {column['source_label']}: no data",
                )
            else:
                classes = [heat_class(stratum.rate)]
                if stratum.n < THIN_N:
                    classes.append("thin")
                if stratum.below_target:
                    classes.append("below")
                cell.update(
                    cls=" ".join(classes),
                    text=pct(stratum.rate),
                    n=stratum.n,
                    title=stratum_title(stratum, column["source_label"]),
                )
            cells.append(cell)
    height = layout.header_h + len(order) * layout.cell_h + 4
    return {
        "width": width,
        "height": height,
        "rows": rows,
        "cells": cells,
        "columns": columns,
        "groups": groups,
        "label_w": layout.label_w,
        "shown": len(order),
        "total": len({(p.doc_type, p.clause_type) for p in pairs}),
    }


def line_chart(
    categories: list[str],
    series: list[dict],
    targets: Sequence[tuple[float, str]] = (),
    width: int = 640,
    height: int = 220,
) -> dict:
    """categories: x labels in order; series: [{"name", "cls", "values": [float|None per category],
    "titles": [str per category]}]; values are rates in 0..1."""
    left, right, top, bottom = 44, 74, 14, 34  # the right margin holds the target labels
    plot_w, plot_h = width - left - right, height - top - bottom
    count = len(categories)

    def x_at(i):
        return left + (plot_w / 2 if count == 1 else i * plot_w / (count - 1))

    def y_at(v):
        return top + (1 - v) * plot_h

    step = max(1, -(-count // 8))  # at most ~8 x labels
    x_labels = []
    for i, c in enumerate(categories):
        if i % step == 0 or i == count - 1:
            # The first and last labels hang inwards so they are never cut at the edges.
            anchor = "middle" if count == 1 else "start" if i == 0 else "end" if i == count - 1 else "middle"
            x_labels.append({"x": round(x_at(i), 1), "label": c, "anchor": anchor})
    y_ticks = [{"y": round(y_at(v), 1), "label": pct(v)} for v in (0, 0.25, 0.5, 0.75, 1.0)]
    drawn = []
    for s in series:
        segments: list[list[tuple[float, float]]] = []
        current: list[tuple[float, float]] = []
        points = []
        for i, value in enumerate(s["values"]):
            if value is None:
                if current:
                    segments.append(current)
                current = []
                continue
            point = (round(x_at(i), 1), round(y_at(value), 1))
            current.append(point)
            titles = s.get("titles") or []
            points.append(
                {
                    "x": point[0],
                    "y": point[1],
                    "title": titles[i] if i < len(titles) else f"{s['name']} {categories[i]}: {pct(value)}",
                }
            )
        if current:
            segments.append(current)
        drawn.append(
            {
                "name": s["name"],
                "cls": s["cls"],
                "points": points,
                "polylines": [" ".join(f"{x},{y}" for x, y in seg) for seg in segments if len(seg) > 1],
            }
        )
    return {
        "width": width,
        "height": height,
        "left": left,
        "right": width - right,
        "top": top,
        "bottom": top + plot_h,
        "x_labels": x_labels,
        "y_ticks": y_ticks,
        "series": drawn,
        # Labels of nearby target lines alternate below / above their line so they never overlap.
        "targets": [
            {"y": round(y_at(v), 1), "ty": round(y_at(v) + (9 if i % 2 == 0 else -1), 1), "label": label}
            for i, (v, label) in enumerate(sorted(targets))
        ],
        "label_y": top + plot_h + 22,
    }
