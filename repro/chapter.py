"""What a chapter module declares, and the pieces its page is built from.

A chapter module defines ``CHAPTER = Chapter(...)``: how to run the experiment
at each scale, the published findings as checks over the run's summary, the
original publication's numbers (typed by hand, with citation), and the tables,
charts and inline numbers its page shows.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .lab import Lab, Server
from .measure import Progress
from .text import Number, Text

SCALES = ("tiny", "default", "full")

REPRODUCED, NOT_REPRODUCED, NOT_APPLICABLE = "reproduced", "not reproduced", "not applicable"


@dataclass
class Outcome:
    """A finding evaluated on one result: whether it held, on which values, against what."""

    holds: bool | None  # None: cannot be judged here (say why in `reason`)
    measured: list[tuple[Text, Number]]  # what was compared, with its value
    condition: Text  # the thresholds, in words
    reason: Text | None = None

    @property
    def status(self) -> str:
        return NOT_APPLICABLE if self.holds is None else REPRODUCED if self.holds else NOT_REPRODUCED


@dataclass
class Finding:
    """A published finding as a named check over a run's summary."""

    id: str
    claim: Text
    check: Callable[[dict[str, Any]], Outcome]
    expected: bool = True  # `make test` fails if an expected finding does not hold


@dataclass
class Table:
    caption: Text
    columns: list[Text]
    rows: list[list[Text | Number | str | None]]


@dataclass
class Series:
    label: Text
    values: list[float | None]


@dataclass
class Chart:
    """A grouped bar chart, lines over numeric categories, or stacked bars (shares that
    add up per category), drawn at build time."""

    title: Text
    categories: list[Text]
    series: list[Series]
    y_label: Text
    x_label: Text | None = None
    kind: str = "bar"  # "bar", "line" or "stacked"


@dataclass
class RunContext:
    """What a chapter's run gets: its scale parameters, a lab, progress, the target."""

    scale: str
    params: dict[str, Any]
    lab: Lab
    progress: Progress
    dsn: str | None = None
    servers: list[tuple[str, Server]] = field(default_factory=list)

    def server(self, role: str, settings: dict[str, str]) -> Server:
        """A server for `role` with command-line settings, or the external one (--dsn)."""
        s: Server = self.lab.external(self.dsn) if self.dsn else self.lab.server(settings)
        self.servers.append((role, s))
        return s

    def servers_ready(self, roles: dict[str, dict[str, str]],
                      prepare: Callable[[Server], None]) -> list[Server]:
        """Start one server per role and `prepare` each (load data, warm up), all at once:
        on 2 cores the set-up of two servers overlaps well with each other."""
        def start(item: tuple[str, dict[str, str]]) -> Server:
            server = self.lab.server(item[1])
            prepare(server)
            return server
        with ThreadPoolExecutor(len(roles)) as pool:
            started = list(pool.map(start, roles.items()))
        self.servers += list(zip(roles, started))
        return started


@dataclass
class Chapter:
    name: str
    title: Text
    source: Path  # the module file: its hash keys the cache
    scales: dict[str, dict[str, Any]]
    run: Callable[[RunContext], dict[str, Any]]  # returns {"raw": ..., "summary": ...}
    findings: list[Finding]
    steps: Callable[[dict[str, Any]], int]  # progress steps at given scale parameters
    tables: dict[str, Callable[[dict[str, Any]], Table]] = field(default_factory=dict)
    charts: dict[str, Callable[[dict[str, Any]], Chart]] = field(default_factory=dict)
    numbers: Callable[[dict[str, Any]], dict[str, Number]] = lambda summary: {}
    supports_dsn: bool = False

    def evaluate(self, summary: dict[str, Any]) -> list[dict[str, Any]]:
        """The findings' outcomes as stored in the result and shown on the page."""
        rows = []
        for finding in self.findings:
            outcome = finding.check(summary)
            rows.append({
                "id": finding.id,
                "claim": finding.claim.as_dict(),
                "expected": finding.expected,
                "status": outcome.status,
                "measured": [{"label": label.as_dict(), **vars(value)}
                             for label, value in outcome.measured],
                "condition": outcome.condition.as_dict(),
                "reason": outcome.reason.as_dict() if outcome.reason else None,
            })
        return rows


def _parameter(value: Any) -> Number | str:
    """A scale parameter as a cell: a number, or a list of client counts ("1–24", "1, 4, 16")."""
    if isinstance(value, list):
        consecutive = value == list(range(value[0], value[-1] + 1))
        return f"{value[0]}–{value[-1]}" if consecutive and len(value) > 2 else ", ".join(map(str, value))
    return Number(value, "", 0)


def scaling_table(rows: list[tuple[str, Text]], original: dict[str, Any],
                  scales: dict[str, dict[str, Any]]) -> Callable[[dict[str, Any]], Table]:
    """The page's "what was scaled" table: each parameter in the original and at every scale
    (it does not depend on the result)."""
    def build(summary: dict[str, Any]) -> Table:
        cells = [[label, _parameter(original[key]), *(_parameter(scales[s][key]) for s in SCALES)]
                 for key, label in rows]
        return Table(Text("原典と各スケールのパラメータ", "Parameters: the original and each scale"),
                     [Text("項目", "Parameter"), Text("原典", "Original"),
                      *(Text(s, s) for s in SCALES)], cells)
    return build
