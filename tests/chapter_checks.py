"""Checks every chapter's integration test makes on its tiny-scale result."""
from __future__ import annotations

from repro import registry
from repro.chapter import NOT_REPRODUCED


def failed_expected_findings(doc: dict) -> list[str]:
    """Expected findings that did not hold, each with its measured values and condition."""
    return [f"{f['id']}: " + ", ".join(f"{m['label']['en']} {m['value']:+.1f}" for m in f["measured"])
            + f" (holds if {f['condition']['en']})"
            for f in doc["findings"] if f["expected"] and f["status"] == NOT_REPRODUCED]


def check_pieces_build(name: str, doc: dict) -> None:
    """Every table and chart of the page builds from the result, with rows and series that fit."""
    chapter = registry.get(name)
    for build in chapter.tables.values():
        table = build(doc["summary"])
        assert table.rows and all(len(row) == len(table.columns) for row in table.rows)
    for build in chapter.charts.values():
        chart = build(doc["summary"])
        assert chart.series and all(len(s.values) == len(chart.categories) for s in chart.series)
