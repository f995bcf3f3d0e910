"""A chapter's named tables and charts (repro-table, repro-chart), from the site's major or
from another one set beside it."""
from __future__ import annotations

import html
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives

from .. import majors
from ..chapter import Chart, Run, Table
from ..errors import ReproError
from ..text import Text
from . import charts, store
from .nodes import ChapterDirective, source_para, table_node
from .words import WORDS


class _PieceDirective(ChapterDirective):
    """A named piece of a chapter's page (`NAME ID`): a table or a chart, from the site's
    major, or from another one (`:major: 18`, named in the caption, "(!)" when the result is
    not of this build's experiment or scale) to set majors side by side."""

    required_arguments = 2
    optional_arguments = 0
    option_spec = {"name": directives.unchanged, "major": directives.unchanged}
    kind = ""  # "tables" or "charts": the Chapter attribute the ID is looked up in

    @property
    def piece_major(self) -> float:
        given = self.options.get("major")
        if given is None:
            return self.site_major
        try:
            return 9.6 if given.strip() == "9.6" else int(given)
        except ValueError:
            raise ReproError(f":major: takes a PostgreSQL major (9.6, 10, ... 18), not {given!r}") from None

    def shown(self) -> store.Shown:
        self.depend_on(self.arguments[0])
        return store.current(self.arguments[0], self.piece_major, self.scale)

    def builder(self) -> Callable[[Run], Any]:
        pieces = getattr(self.chapter(), self.kind)
        if self.arguments[1] not in pieces:
            raise ReproError(f"{self.arguments[0]} has no {self.kind[:-1]} {self.arguments[1]!r}; "
                             f"it has: {', '.join(pieces)}")
        build = pieces[self.arguments[1]]
        if "major" not in self.options:
            return build
        stale = self.shown().why is not None  # marked as in the matrix: not this build's code or scale
        prefix = f"PostgreSQL {majors.name(self.piece_major)}{' (!)' if stale else ''}: "

        def named(run: Run) -> Any:
            piece = build(run)
            title = piece.caption if self.kind == "tables" else piece.title
            retitled = Text(prefix + title.ja, prefix + title.en)
            return replace(piece, caption=retitled) if self.kind == "tables" else replace(piece, title=retitled)
        return named

    def missing(self) -> list[nodes.Node]:
        """A captioned, named stand-in, so references to the piece still resolve."""
        self.builder()  # an unknown id is an error also without a result
        caption = WORDS["no_result"](self.lang)
        if self.kind == "tables":
            node = table_node(Table(Text(caption, caption), [Text("—", "—")], []), self.lang)[0]
        else:
            node = nodes.figure(classes=["repro-chart", "repro-missing"])
            node += nodes.caption(text=caption)
        self.add_name(node)
        return [node]


class TableDirective(_PieceDirective):
    kind = "tables"

    def build_run(self, run: Run) -> list[nodes.Node]:
        table = self.builder()(run)
        out = table_node(table, self.lang)
        self.add_name(out[0])
        return out + ([source_para(self.shown(), self.lang)] if table.measured else [])


class ChartDirective(_PieceDirective):
    kind = "charts"

    @property
    def file_suffix(self) -> str:
        """The same chart from another major is another image: it must not overwrite this one."""
        return f"-pg{majors.name(self.piece_major)}" if "major" in self.options else ""

    def build_run(self, run: Run) -> list[nodes.Node]:
        name, chart_id = self.arguments
        figure = chart_figure(self, self.builder()(run), f"{name}-{chart_id}{self.file_suffix}")
        self.add_name(figure)
        return [figure, source_para(self.shown(), self.lang)]


def chart_figure(directive: ChapterDirective, chart: Chart, file: str) -> nodes.figure:
    """A chart drawn at build time as a captioned figure, PNG `file` in the HTML's images or
    beside the PDF's source."""
    figure = nodes.figure(classes=["repro-chart"])
    builder, lang = directive.env.app.builder, directive.lang
    if builder.format == "html":
        # Drawn straight into the output (not an image node), so that the alt text,
        # which carries measured values, stays out of the translation catalogue.
        charts.render(chart, lang, Path(builder.outdir) / "_images" / "repro" / f"{file}.png")
        up = "../" * directive.env.docname.count("/")
        alt = html.escape(charts.alt_text(chart, lang), quote=True)
        figure += nodes.raw("", f'<img src="{up}_images/repro/{file}.png" alt="{alt}" '
                                f'width="1170" height="676">', format="html")
    elif builder.format == "latex":  # the PDF: an image of the chart drawn outside the source
        png = charts.render(chart, lang, Path(builder.outdir) / "charts" / f"{file}.png")
        figure += nodes.image(uri="/" + os.path.relpath(png, directive.env.srcdir), width="100%")
    figure += nodes.caption(text=chart.title(lang))
    return figure
