"""What a chapter declares, and a run of it as the judge and the page see it.

A chapter is a package, repro/chapters/NAME/:

- ``experiment.py``: ``run(ctx)``, what runs on the servers (imported by the lab only);
- ``scales.toml``: the parameters of each scale; ``files/``: its SQL, pgbench scripts
  and server settings as plain files (the page includes the same files);
- ``original.toml``: the original publications (citation) and their numbers;
- ``__init__.py``: its TITLE and SHORT name (and REQUIRES, MACHINE_BOUND); the registry builds the Chapter by convention
  from it, ``analysis.summarize``, ``findings.FINDINGS`` and ``page`` (TABLES, CHARTS, numbers).

Only the experiment, the files, the scale's own parameters (and a run of one round's)
and the harness modules the experiment imports decide a measurement, so only they key the cache: editing a
claim, a threshold, a label, a chart or another scale re-judges and re-renders the
stored raw data.
This module imports nothing of the lab (docker, testcontainers, psycopg).
"""
from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from . import fingerprint
from .requirements import Requirement
from .stats import Rounds
from .text import Number, Text
from .verdict import Environment, Finding, Measure, Verdict

HASHED = ("experiment.py", "files")  # what keys a chapter's cache, with the scale's parameters
ONE_ROUND = "one_round"  # scales.toml's table of what a run of one round sets (Chapter.one_round)
# What every chapter page shows (tests/test_chapters.py; the scaffold's page and the guide
# name each), and what each of original.toml's sources gives (its citation).
PAGE_DIRECTIVES = ("repro-status", "repro-findings", "repro-glance", "repro-majors", "repro-rounds",
                   "repro-provenance", "repro-download")
SOURCE_FIELDS = ("id", "title", "short", "url", "date", "by", "subject")


INTERVAL = Text(" [95% 信頼区間]", " [95 % interval]")  # after a column heading of estimates


@dataclass
class Table:
    caption: Text
    columns: list[Text]
    rows: list[list[Text | Number | str | None]]
    note: Text | None = None  # how a column was computed, under the table
    measured: bool = True  # False: made from declarations only (no run is its source)

    def transposed(self) -> Table:
        """Rows become columns: a few conditions with many quantities each fit the page
        as columns, where as rows they would be wider than the text column."""
        heads = [h if isinstance(h, Text) else Text(str(h), str(h)) for h, *_ in self.rows]
        rows = [[column, *(row[i] for row in self.rows)] for i, column in enumerate(self.columns) if i]
        return replace(self, columns=[self.columns[0], *heads], rows=rows)


@dataclass
class Series:
    label: Text
    values: list[float | None]
    low: list[float | None] | None = None  # confidence intervals, drawn as error bars
    high: list[float | None] | None = None
    reference: bool = False  # a line to read the others against (a threshold), dashed, no markers


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
class Chapter:
    """A chapter's declaration; `name` and `package` are filled in by the registry."""

    title: Text
    short: Text  # the name in lists that name many chapters ("auto_explain", "wait events")
    summarize: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]  # (raw, params)
    findings: list[Finding]
    tables: dict[str, Callable[[Run], Table]] = field(default_factory=dict)
    charts: dict[str, Callable[[Run], Chart]] = field(default_factory=dict)
    numbers: Callable[[Run], dict[str, Number]] = lambda run: {}
    requires: list[Requirement] = field(default_factory=list)  # else the run is "not applicable"
    machine_bound: Text | None = None  # why its values depend on the machine: pooled per machine
    beside: tuple[str, ...] = ()  # images of the servers a run starts beside its major's
    name: str = ""
    package: Path = Path()

    @cached_property
    def _scales_file(self) -> dict[str, dict[str, Any]]:
        return _toml(self.package / "scales.toml")

    @cached_property
    def scales(self) -> dict[str, dict[str, Any]]:
        return {name: params for name, params in self._scales_file.items() if name != ONE_ROUND}

    @cached_property
    def one_round(self) -> dict[str, Any]:
        """What `repro run --one-round` sets over the scale's parameters besides its one
        round (scales.toml's [one_round]): smaller data, for a check that the chapter runs,
        where its smallest scale needs much data for its findings alone."""
        return self._scales_file.get(ONE_ROUND, {})

    @cached_property
    def original(self) -> dict[str, Any]:
        return _toml(self.package / "original.toml")

    def file(self, name: str) -> Path:
        """One of the chapter's plain files (SQL, scripts, settings)."""
        return self.package / "files" / name

    def experiment_hash(self, scale: str, target: str = "container",
                        params: dict[str, Any] | None = None) -> str:
        """The key of a measurement at `scale` (or with these `params`) on a target: the
        containers, or an existing server (see fingerprint.experiment)."""
        return fingerprint.experiment(self.package, params or self.scales.get(scale), target)


def _toml(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


class Run:
    """A stored result of a chapter as the judge and the page see it: rounds, summary,
    its own verdicts, and estimates with their intervals (each computed once). A run shown
    as part of a pool (repro/pooling.py, which sets `pool`) gives the pooled estimates."""

    def __init__(self, chapter: Chapter, doc: dict[str, Any]):
        self.chapter = chapter
        self.doc = doc
        self.pool: Any = None  # a pooling.Pool that holds this run
        self._estimates: dict[Measure, Number] = {}

    @property
    def raw(self) -> dict[str, Any]:
        return self.doc["raw"]

    @property
    def params(self) -> dict[str, Any]:
        return self.doc["scale_params"]

    @property
    def major(self) -> int:
        return self.doc["major"]

    @cached_property
    def rounds(self) -> Rounds:
        return Rounds(self.raw, minimum=self.params.get("rounds"))

    @cached_property
    def summary(self) -> dict[str, Any]:
        return self.chapter.summarize(self.raw, self.params)

    @cached_property
    def environment(self) -> Environment:
        prov = self.doc["provenance"]
        target = self.doc["key"]["target"]
        external = target.startswith("dsn:")  # local clusters' CPUs are recorded
        cpus = prov.get("server_cpus_declared") if external else prov["host"].get("engine_cpus")
        return Environment(self.major, cpus, frozenset(prov.get("features", ())), self.raw, external,
                           local=target.startswith("local:"))

    @cached_property
    def verdicts(self) -> list[Verdict]:
        """The run's own verdicts: this run alone, as a pool of one."""
        return [f.judge(self.rounds, self.environment) for f in self.chapter.findings]

    def estimate(self, measure: Measure) -> Number:
        """A measure's value with its interval: over the pool's runs when the run is shown as
        part of one (the number then says over how many: pages label it pooled, not this
        build's), else over this run's rounds."""
        if measure not in self._estimates:
            runs = [r.rounds for r in self.pool.runs] if self.pool is not None else [self.rounds]
            e = measure.pooled(runs)
            exact = measure.exact and e.low == e.high  # counted: no interval to show
            number = measure.number(e.value, *((None, None) if exact else (e.low, e.high)))
            self._estimates[measure] = replace(number, runs=e.runs) if e.runs > 1 else number
        return self._estimates[measure]
