"""The PDF (Sphinx's LaTeX builder, `make pdf`): the chapter pages as the PDF's chapters,
tables that fit the page, and a collapsed group in a table cell set as its visible line."""
from __future__ import annotations

import math
import unicodedata
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from .nodes import details, details_summary

# The text width in points (A4 paper, Sphinx's margins: 452 and 700), upright and on a
# landscape page. Column widths are proportions of it (Sphinx's \X{w}{total}): only their
# ratios and the padding depend on it.
TEXT_WIDTH, LANDSCAPE_WIDTH = 450, 675
# (smallest column count, font size command, its size in points, padding each side in
# points, on a landscape page): the matrix's tables (a column per major) turn the page.
TABLE_FONTS = ((9, r"\scriptsize", 7.0, 2.5, True), (6, r"\footnotesize", 8.0, 3.5, False),
               (4, r"\small", 9.0, 5.0, False), (1, "", 10.0, 6.0, False))
# ems() runs wide by about a sixth: a table whose longest words, so estimated, take up to a
# fifth more than the text width still has room for them when its columns shrink alike.
SQUEEZE = 1.2
# A table's paragraphs ragged right: a narrow justified column stretches its spaces wide.
RAGGED = r"\let\reprostartpar\sphinxAtStartPar\def\sphinxAtStartPar{\raggedright\reprostartpar}"


def _raw(tex: str) -> nodes.raw:
    return nodes.raw("", tex + "\n", format="latex")


class ChaptersOfTheReport(SphinxPostTransform):
    """Sphinx inlines each page a toctree lists where the toctree stands: under the front
    page's heading above the toctrees, so every chapter page would be a section of one
    chapter named after that heading. Here the listed pages become chapters of their own
    (numbered from 1, as on the site), the front page's sections come before them as
    unnumbered front matter, and the pages of any later toctree (the report's own pages)
    are appendices."""

    builders = ("latex",)
    default_priority = 400

    def run(self, **kwargs: Any) -> None:
        wrappers = [n for n in self.document.findall(nodes.compound)
                    if "toctree-wrapper" in n["classes"] and isinstance(n.parent, nodes.section)
                    and any(isinstance(c, addnodes.start_of_file) for c in n.children)]
        if not wrappers or not isinstance(wrappers[0].parent.parent, nodes.section):
            return
        holder = wrappers[0].parent  # the front page's section that holds the toctrees
        front = holder.parent
        body: list[nodes.Node] = [_raw(r"\setcounter{secnumdepth}{\reprosecnumdepth}")]
        for i, wrapper in enumerate(wrappers):
            if i:
                body.append(_raw(r"\appendix"))
            body.extend(c for c in wrapper.children if isinstance(c, addnodes.start_of_file))
        holder.replace_self(body)
        title = front.first_child_matching_class(nodes.title)
        front.insert(0 if title is None else title + 1,  # and the contents' name off the footer
                     _raw(r"\edef\reprosecnumdepth{\the\value{secnumdepth}}\setcounter{secnumdepth}{-1}"
                          r"\markboth{}{}"))


def shown_text(node: nodes.Node) -> str:
    """A node's text as the PDF sets it: LaTeX's raw text only, and of a collapsed group in
    a table cell its visible line only."""
    if isinstance(node, nodes.raw):
        return node.astext() if "latex" in node.get("format", "").split() else ""
    if isinstance(node, nodes.Text):
        return str(node)
    children = [c for c in node.children if isinstance(c, details_summary)] if isinstance(node, details) \
        else node.children
    return " ".join(shown_text(c) for c in children)


def ems(text: str) -> float:
    """The width of `text` in ems, roughly (a serif font, a tenth more for bold headings; a
    CJK character or an arrow is one em)."""
    width = 0.0
    for ch in text:
        if unicodedata.east_asian_width(ch) in "WF" or ch in "→←↑↓⇄⇅":
            width += 1.0
        elif ch.isupper() or ch in "%@—":
            width += 0.7
        elif ch.isspace() or ch in ".,:;'’()[]|!-":
            width += 0.3
        else:
            width += 0.5
    return width * 1.1


def words(text: str) -> list[str]:
    """The pieces a line may break between: at spaces, after a hyphen, between pairs of CJK
    characters (a pair: the characters that may not start or end a line, ー 、 」, bind to
    their neighbour)."""
    pieces: list[str] = []
    for word in text.split():
        piece = ""
        for ch in word:
            cjk = unicodedata.east_asian_width(ch) in "WF"
            if cjk and len(piece) == 1 and ems(piece) > ems("a"):  # the second of a pair
                pieces.append(piece + ch)
                piece = ""
            elif cjk:
                pieces.append(piece)
                piece = ch
            else:
                piece += ch
                if ch == "-":
                    pieces.append(piece)
                    piece = ""
        pieces.append(piece)
    return [p for p in pieces if p]


def longest_words(columns: list[list[str]], size: float, pad: float) -> list[float]:
    """Each column's longest word in points, with the padding."""
    slack = 2 * pad + 4  # bold text runs a little wider than the estimate
    return [max((ems(w) for cell in col for w in words(cell)), default=1.0) * size + slack for col in columns]


def column_widths(columns: list[list[str]], size: float, pad: float, total: float = TEXT_WIDTH) -> list[int]:
    """Each column's width in points: its longest word (or half an even share) at least, its
    longest cell at most, and between the two in proportion to the square root of its
    longest cell, so that a long column gets more room without squeezing a short one (a
    verdict) to a word a line."""
    slack = 2 * pad + 4  # bold text runs a little wider than the estimate
    least = longest_words(columns, size, pad)
    most = [max(max((ems(cell) for cell in col), default=1.0) * size + slack, low)
            for col, low in zip(columns, least)]
    floor = total / (2 * len(columns))  # no column narrower than half an even share, if it has the text
    least = [max(low, min(high, floor)) for low, high in zip(least, most)]
    if sum(most) <= total or sum(least) >= total:
        return [round(w) for w in (most if sum(most) <= total else least)]

    def widths(scale: float) -> list[float]:
        return [min(max(scale * math.sqrt(high), low), high) for low, high in zip(least, most)]

    low, high = 0.0, math.sqrt(max(most))  # widths(high) == most, wider than the page
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if sum(widths(middle)) > total else (middle, high)
    return [round(w) for w in widths(low)]


def table_font(columns: list[list[str]]) -> tuple[str, float, float, bool]:
    """The font size command, its size, the padding and whether the page turns, for a table
    of these columns: by their number, and one size smaller on an upright page where their
    longest words do not fit its width together (they would run into the next column)."""
    i = next(i for i, font in enumerate(TABLE_FONTS) if len(columns) >= font[0])
    tex, size, pad, turn = TABLE_FONTS[i][1:]
    if i and not turn and sum(longest_words(columns, size, pad)) > TEXT_WIDTH * SQUEEZE:
        tex, size, pad = TABLE_FONTS[i - 1][1:4]
    return tex, size, pad, turn


class FittedTables(SphinxPostTransform):
    """Sphinx sets a table on one page (a tall one runs past the footer) and, when a cell
    holds a list, at equal column widths (a short column's heading is cut). Here each table
    that is not inside another breaks across pages (longtable), in a smaller font the more
    columns it has (or the longer its words), at column widths fitted to its cells."""

    builders = ("latex",)
    default_priority = 410

    def run(self, **kwargs: Any) -> None:
        for table in list(self.document.findall(nodes.table)):
            if _inside_table(table):
                continue
            group = next(table.findall(nodes.tgroup), None)
            if group is None:
                continue
            specs = [c for c in group.children if isinstance(c, nodes.colspec)]
            columns: list[list[str]] = [[] for _ in specs]
            for row in group.findall(nodes.row):
                for i, entry in enumerate(c for c in row.children if isinstance(c, nodes.entry)):
                    if i < len(columns) and not entry.get("morecols"):
                        columns[i].append(shown_text(entry))
            tex, size, pad, turn = table_font(columns)
            for spec, width in zip(specs, column_widths(columns, size, pad, LANDSCAPE_WIDTH if turn else TEXT_WIDTH)):
                spec["colwidth"] = width
            table["classes"] += ["colwidths-given", "longtable"]
            begin, end = (r"\begin{landscape}", r"\end{landscape}") if turn else ("", "")
            table.parent.insert(table.parent.index(table),
                                _raw(rf"{begin}\begingroup{tex}\setlength{{\tabcolsep}}{{{pad}pt}}{RAGGED}"))
            table.parent.insert(table.parent.index(table) + 1, _raw(rf"\endgroup{end}"))


WHOLE_IN_PRINT = "repro-whole-in-print"  # a details node the PDF shows whole, in a table cell too


def _inside_table(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None and not isinstance(parent, nodes.table):
        parent = parent.parent
    return parent is not None


def visit_details_latex(self: Any, node: details) -> None:
    """In a table cell, a collapsed group is its visible line only (a list of runs would
    make the row taller than the page); elsewhere all of it, and so is one the PDF must keep
    whole (WHOLE_IN_PRINT: a finding's other checks)."""
    if self.table is None:
        return
    for summary in (c for c in node.children if isinstance(c, details_summary)):
        self.body.append("\n\\sphinxAtStartPar\\textbf{")  # a cell's paragraph: ragged right
        for child in summary.children:
            child.walkabout(self)
        self.body.append("}\n")
    if WHOLE_IN_PRINT in node["classes"]:
        for child in [c for c in node.children if not isinstance(c, details_summary)]:
            child.walkabout(self)
    raise nodes.SkipNode


def depart_details_latex(self: Any, node: details) -> None:
    pass
