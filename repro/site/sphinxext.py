"""Sphinx extension: puts the results on the pages. This module only wires it up (its
configuration values, directives, roles, nodes and hooks); each job lives in a module of
its own (ARCHITECTURE.md draws them):

- chapter_page: repro-status, repro-findings, repro-rounds; glance: repro-glance; pieces: repro-table,
  repro-chart; trend: repro-trend (a finding across majors); matrix: repro-majors, repro-matrix; provenance: repro-provenance;
  downloads: repro-download, repro-downloads; machines: repro-machines, the contributed runs
  (MyST: ```{repro-findings} auto_explain```);
- report: the report's own pages (repro-ledger, repro-summary, repro-environment,
  repro-sources); api: repro-api, a harness class's members from its docstrings (the
  contributors' guide); answer: the front page's first screen (repro-answer); roles: {repro-num}`chapter:key`, {repro-source}`004`,
  {repro-repository}`text`; sources: the source entries and the citations that link to them;
- nodes: the building blocks and base directives; revisions: the claims' register as
  pages show it; html_hooks and search: what the HTML build adds; latex: what the PDF's
  build changes (chapters, tables).

Every number comes from a result file and is formatted per language, so translated text
never carries a number. This layer imports no part of the lab (docker, testcontainers,
psycopg): it reads results and judges them.
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from .. import majors, results
from .answer import AnswerDirective
from .api import ApiDirective
from .chapter_page import FindingsDirective, RoundsDirective, StatusDirective
from .downloads import DownloadDirective, EverythingDirective
from .glance import GlanceDirective
from .html_hooks import BreaksAfterSlashes, CardLabels, OneIdPerElement, check_diagrams, describe_page, write_sitemap
from .latex import ChaptersOfTheReport, FittedTables, depart_details_latex, visit_details_latex
from .machines import MachinesDirective
from .matrix import MajorsDirective, MatrixDirective
from .nodes import (TargetsInLatex, depart_details_html, depart_plain, depart_summary_html, depart_summary_latex,
                    details, details_summary, visit_details_html, visit_plain, visit_summary_html,
                    visit_summary_latex)
from .pieces import ChartDirective, TableDirective
from .trend import TrendDirective
from .provenance import ProvenanceDirective
from .report import EnvironmentDirective, LedgerDirective, SourcesDirective, SummaryDirective
from .roles import NumberRole, RepositoryRole, SourceRole, repository
from .search import SearchJapaneseBigrams, search_messages


def code_version() -> int:
    """A number that changes with the shared code that renders the pages: Sphinx rereads
    every page when it changes (its cache knows nothing of the directives' code). A chapter's
    own package is a dependency of the pages that show it (depend_on); a chapter added or
    removed changes the number too, since the pages that list every chapter (the front page,
    the matrix, the sources) depend on no package of a chapter they have not seen."""
    package = Path(results.ROOT, "repro")
    files = sorted([*package.glob("*.py"), *package.glob("site/*.py")])
    chapters = sorted(p.parent.name for p in package.glob("chapters/*/__init__.py"))
    return zlib.crc32(b"".join(p.read_bytes() for p in files) + " ".join(chapters).encode())


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("repro_scale", os.environ.get("SCALE", "default"), "env")
    app.add_config_value("repro_major", majors.DEFAULT_MAJOR, "env")
    app.add_config_value("repro_repository", repository(), "env")
    for name, directive in (
            ("repro-status", StatusDirective), ("repro-findings", FindingsDirective),
            ("repro-majors", MajorsDirective), ("repro-rounds", RoundsDirective),
            ("repro-table", TableDirective), ("repro-chart", ChartDirective),
            ("repro-provenance", ProvenanceDirective), ("repro-download", DownloadDirective),
            ("repro-ledger", LedgerDirective), ("repro-matrix", MatrixDirective),
            ("repro-environment", EnvironmentDirective), ("repro-sources", SourcesDirective),
            ("repro-summary", SummaryDirective), ("repro-answer", AnswerDirective),
            ("repro-downloads", EverythingDirective), ("repro-machines", MachinesDirective),
            ("repro-glance", GlanceDirective), ("repro-api", ApiDirective), ("repro-trend", TrendDirective)):
        app.add_directive(name, directive)
    app.add_node(details, html=(visit_details_html, depart_details_html),
                 latex=(visit_details_latex, depart_details_latex), text=(visit_plain, depart_plain))
    app.add_node(details_summary, html=(visit_summary_html, depart_summary_html),
                 latex=(visit_summary_latex, depart_summary_latex), text=(visit_plain, depart_plain))
    app.add_role("repro-num", NumberRole())
    app.add_role("repro-repository", RepositoryRole())
    app.add_role("repro-source", SourceRole())
    app.add_search_language(SearchJapaneseBigrams)
    app.connect("builder-inited", search_messages)
    app.connect("build-finished", check_diagrams)
    app.connect("build-finished", write_sitemap)
    app.connect("html-page-context", describe_page)
    app.add_post_transform(OneIdPerElement)
    app.add_post_transform(TargetsInLatex)
    app.add_post_transform(ChaptersOfTheReport)
    app.add_post_transform(FittedTables)
    app.add_post_transform(CardLabels)
    app.add_post_transform(BreaksAfterSlashes)
    return {"version": "2", "env_version": code_version(), "parallel_read_safe": True,
            "parallel_write_safe": True}
