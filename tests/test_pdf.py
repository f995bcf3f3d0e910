"""The PDFs (make pdf): the LaTeX build's chapters and tables (repro/site/latex.py), the
check of the built PDFs (scripts/check_pdf.py) on samples of poppler's output, and that
check on the PDFs of this checkout's build when there are any (CI: make site builds them)."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document
from sphinx import addnodes

from repro.site.latex import ChaptersOfTheReport, column_widths, ems, shown_text, visit_details_latex, words
from repro.site.nodes import details, details_summary

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("check_pdf", ROOT / "scripts" / "check_pdf.py")
check_pdf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_pdf)


def section(title: str, *children: nodes.Node) -> nodes.section:
    node = nodes.section()
    node += nodes.title(text=title)
    node.extend(children)
    return node


def included(docname: str, title: str) -> addnodes.start_of_file:
    """A page as Sphinx's LaTeX builder inlines it where a toctree listed it."""
    node = addnodes.start_of_file(docname=docname)
    node += section(title, nodes.paragraph(text="..."))
    return node


def toctree(*pages: addnodes.start_of_file) -> nodes.compound:
    node = nodes.compound(classes=["toctree-wrapper"])
    node.extend(pages)
    return node


def test_chapter_pages_become_chapters_after_unnumbered_front_matter() -> None:
    document = new_document("index", get_default_settings(Parser))
    chapters, about = toctree(included("a", "A"), included("b", "B")), toctree(included("m", "Matrix"))
    root = section("Report", nodes.paragraph(text="first screen"), section("About"),
                   section("Contents", chapters, about))
    document += root
    ChaptersOfTheReport(document).run()
    kinds = [type(c).__name__ for c in root.children]
    assert kinds == ["title", "raw", "paragraph", "section", "raw", "start_of_file", "start_of_file",
                     "raw", "start_of_file"]
    assert [s[0].astext() for s in root.children if isinstance(s, nodes.section)] == ["About"]
    raws = [c.astext() for c in root.children if isinstance(c, nodes.raw)]
    assert r"\setcounter{secnumdepth}{-1}" in raws[0]  # the front page's sections: unnumbered
    assert r"\markboth{}{}" in raws[0]  # its first page's footer names no chapter
    assert r"\setcounter{secnumdepth}{\reprosecnumdepth}" in raws[1]  # the chapters: numbered again
    assert raws[2].strip() == r"\appendix"  # the second toctree's pages


def test_a_page_without_toctrees_is_left_as_it_is() -> None:
    document = new_document("index", get_default_settings(Parser))
    document += section("Report", section("About"))
    before = document.pformat()
    ChaptersOfTheReport(document).run()
    assert document.pformat() == before


def test_a_collapsed_group_in_the_pdf_is_its_visible_line() -> None:
    cell = nodes.entry()
    group = details()
    line = details_summary()
    line += nodes.Text("8 runs (48 rounds)")
    line += nodes.raw("", "<span>✓</span>", format="html")
    line += nodes.raw("", "reproduced", format="latex")
    group += line
    group += nodes.bullet_list("", nodes.list_item("", nodes.paragraph(text="2026-11-26 06:30 UTC")))
    cell += group
    assert shown_text(cell).split() == ["8", "runs", "(48", "rounds)", "reproduced"]


class Writer(nodes.GenericNodeVisitor):
    """A stand-in for Sphinx's LaTeX writer: its body, whether it is in a table, text as is."""

    def __init__(self, document: nodes.document, in_table: bool) -> None:
        super().__init__(document)
        self.body: list[str] = []
        self.table = object() if in_table else None

    def default_visit(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.Text):
            self.body.append(str(node))

    def default_departure(self, node: nodes.Node) -> None:
        pass


@pytest.mark.parametrize("in_table", [True, False])
def test_a_collapsed_group_in_a_table_cell_writes_its_visible_line_only(in_table: bool) -> None:
    document = new_document("chapter", get_default_settings(Parser))
    group = details()
    group += details_summary("", "", nodes.Text("8 runs (48 rounds)"))
    group += nodes.paragraph(text="2026-11-26 06:30 UTC: reproduced")
    writer = Writer(document, in_table)
    if in_table:
        with pytest.raises(nodes.SkipNode):
            visit_details_latex(writer, group)
        assert "".join(writer.body) == "\n\\sphinxAtStartPar\\textbf{8 runs (48 rounds)}\n"
    else:
        visit_details_latex(writer, group)  # the writer goes on into all of it
        assert writer.body == []


def test_a_line_breaks_at_spaces_after_hyphens_and_between_pairs_of_japanese_characters() -> None:
    assert words("re-pro duced") == ["re-", "pro", "duced"]
    assert words("プールした run") == ["プー", "ルし", "た", "run"]
    assert ems("再") > ems("a") > ems(".")


def test_no_column_is_narrower_than_its_longest_word() -> None:
    columns = [["F1 claim"], ["a long claim " * 30], ["Verdict", "reproduced"], ["+46.7 [+42.6, +50.9] %"]]
    widths = column_widths(columns, size=8.0, pad=3.5, total=470)
    assert sum(widths) <= 470 + len(widths)  # rounding
    assert widths[2] >= ems("reproduced") * 8.0 + 7
    assert widths[1] == max(widths)  # the room left goes where the text is


def test_a_narrow_table_keeps_its_natural_widths() -> None:
    widths = column_widths([["a"], ["bb"]], size=10.0, pad=6.0, total=470)
    assert widths == [round(ems("a") * 10 + 16), round(ems("bb") * 10 + 16)]


def test_a_short_column_keeps_half_an_even_share_or_its_one_line() -> None:
    widths = column_widths([["F1 claim of the original"], ["word " * 200], ["reproduced"]], size=8.0, pad=3.5,
                           total=470)
    assert widths[0] >= 470 / 6 - 1  # half of an even share
    assert widths[2] == round(ems("reproduced") * 8 + 11)  # on one line


POPPLER_FONTS = """\
name                                 type              encoding         emb sub uni object ID
------------------------------------ ----------------- ---------------- --- --- --- ---------
FRVXOR+TeXGyreHeros-Bold             Type 1C           Custom           yes yes yes      4  0
Ryumin-Light-Identity-H              CID Type 0        Identity-H       no  no  no      26  0
XUFNZL+HaranoAjiMincho-Regular-Identity-H CID Type 0C       Identity-H       yes yes no     181  0
"""

# updvitype's listing of "originals’ claims 再現" with the apostrophe in the Japanese font
DVI_LISTING = """\
762: fntnum23 current font is ec-qtmr
771: setchar115 ("73)
[originals]
772: fntdef1 35: upjisr-h
796: fntnum35 current font is upjisr-h
797: set2 8217("2019) type=2 h:=7102286+315300=7417586, hh:=471
804: fntnum23 current font is ec-qtmr
805: setchar99 ("63) h:=7951339+291271=8242610, hh:=522
815: fntnum35 current font is upjisr-h
816: set2 20877("518D) type=0 h:=9957472+630600=10588072, hh:=671
817: set2 9680("25D0) type=0 h:=9957472+630600=10588072, hh:=671
"""


def test_fonts_left_out_of_the_pdf_are_found() -> None:
    assert check_pdf.not_embedded(POPPLER_FONTS) == ["Ryumin-Light-Identity-H"]


def test_an_apostrophe_in_the_japanese_font_is_found() -> None:
    assert check_pdf.latin_in_japanese_font(DVI_LISTING) == ["'’' (U+2019) in upjisr-h"]
    latin = DVI_LISTING.replace("set2 8217(\"2019)", "setchar39 (\"27)")  # set in the Latin font
    assert check_pdf.latin_in_japanese_font(latin.replace("fntnum35 current font is upjisr-h\n797",
                                                          "fntnum23 current font is ec-qtmr\n797")) == []


def test_chapters_are_found_in_the_contents_pages_only() -> None:
    pages = ["Title page", "Contents\n\n1 The overhead of auto_explain  5\n\n"
             "2 Full-text search (pg_bigm) and load separation\n  by logical replication   9\n\n   i\n",
             "6 Contents 19\n6.1 Wait events expose the WAL bottleneck 21\n\n   1\n"]
    contents = check_pdf.contents_text(pages)
    titles = ["The overhead of auto_explain", "Full-text search (pg_bigm) and load separation by logical replication",
              "Wait events expose the WAL bottleneck"]
    assert check_pdf.missing_chapters(contents, titles) == ["Wait events expose the WAL bottleneck"]
    assert check_pdf.missing_chapters("第3章待機イベント 41", ["待機イベント"]) == []
    assert check_pdf.missing_chapters("6.3 待機イベント 41", ["待機イベント"]) == ["待機イベント"]


def test_tables_numbered_out_of_their_chapters_order_are_found() -> None:
    """Each chapter numbers its tables, the appendices by letter: a "Table 2.1" met after
    chapter 5's or after an appendix's is a second table of that number."""
    text = ("  Table 2.1: Findings\n  Table 2.1 – continued from previous page\n   Table 2.2: x\n"
            "  Table 6.3 (section 6 of the source) names a source's table in a sentence\n"
            " Table 10.1: y\n  Table A.1: z\n  Table A.2: w\n")
    assert check_pdf.tables_out_of_order(text) == []
    assert check_pdf.tables_out_of_order(text + "  Table 2.1: Revisions\n") == ["Table 2.1:"]
    assert check_pdf.tables_out_of_order("  表 3.1: 知見\n  表 7.9 と 7.4.2.2 節\n  表 1.2 – 前のページからの続き\n") == ["表 1.2 –"]


def test_a_page_size_other_than_a4_is_found() -> None:
    assert not check_pdf.not_a4("Pages:          283\nPage size:       595.276 x 841.89 pts (A4)\n")
    assert check_pdf.not_a4("Page size:       612 x 792 pts (letter)\n")


def test_overfull_lines_are_counted() -> None:
    log = "Overfull \\hbox (7.78pt too wide) in paragraph at lines 3182--3182\n[]\\T1/qhv/m/n/10 Find-\n" \
          "Underfull \\hbox (badness 10000) in paragraph\nOverfull \\hbox (1pt too wide) detected at line 9\n"
    assert check_pdf.overfull(log) == 2


BUILT = [lang for lang in check_pdf.LANGUAGES
         if (ROOT / "_build" / "latex" / lang / f"repro-report-{lang}.pdf").is_file()]


@pytest.mark.skipif(not BUILT, reason="no PDF built in this checkout (make pdf)")
@pytest.mark.skipif(shutil.which("pdffonts") is None, reason="poppler-utils is not installed")
@pytest.mark.parametrize("lang", BUILT)
def test_the_built_pdf_passes_the_check(lang: str) -> None:
    assert check_pdf.check(lang, ROOT / "_build" / "latex") == []
