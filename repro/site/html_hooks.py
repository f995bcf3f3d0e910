"""Build hooks of the HTML output: PlantUML's error images fail the build, each page gets a
description (og:description), a table keeps its id to itself, a findings table's cells carry
their headings (cards on a phone), and the language's sitemap is written."""
from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform

from .. import results


PLANTUML_ERRORS = ("Cannot find Graphviz", "Dot executable", "Syntax Error", "An error has occured",
                   "An error has occurred", "java.lang.")


def check_diagrams(app: Sphinx, error: Exception | None) -> None:
    """Fail the build when a PlantUML diagram is PlantUML's error message drawn as an image
    (PlantUML exits 0 then, e.g. without Graphviz)."""
    if error is not None or app.builder.format != "html":
        return
    for svg in sorted(Path(app.outdir).glob("_images/plantuml-*.svg")):
        text = svg.read_text(encoding="utf-8", errors="replace")
        if found := [e for e in PLANTUML_ERRORS if e in text]:
            raise ExtensionError(f"{svg.name} is PlantUML's error message, not a diagram: {found[0]}")


def _ancestors(node: nodes.Node) -> Iterator[nodes.Node]:
    while node.parent is not None:
        node = node.parent
        yield node


def describe_page(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                  doctree: nodes.document | None) -> None:
    """The page's first paragraph, shortened, as its description (og:description): what a
    link to the page shows elsewhere besides its title."""
    prose = (p for p in doctree.findall(nodes.paragraph)  # not the status box or a table
             if not any(isinstance(a, (nodes.Admonition, nodes.table)) for a in _ancestors(p))
             ) if doctree else iter(())
    first = next(prose, None)
    if first is not None:
        text = " ".join(first.astext().split())
        if len(text) > 200:  # at a space near the end in English; Japanese has none
            space = text.rfind(" ", 150, 199)
            text = text[:space if space > 0 else 199] + "…"
        context["repro_description"] = text


class OneIdPerElement(SphinxPostTransform):
    """The theme wraps every table (and displayed formula) in a container that copies all of its
    attributes, ids too: a page would carry each table's id twice. The table keeps them."""

    formats = ("html",)
    default_priority = 600  # after furo's wrapping (500)

    def run(self, **kwargs: Any) -> None:
        for node in self.document.findall(nodes.container):
            if {"table-wrapper", "math-wrapper"} & set(node["classes"]) and node.children:
                node["ids"] = []


def _findings_tables(document: nodes.document) -> Iterator[nodes.table]:
    return (t for t in document.findall(nodes.table) if "repro-findings" in t["classes"])


class CardLabels(SphinxPostTransform):
    """On a phone a findings table is a stack of cards, one per finding (repro.css): each cell
    then carries its column's heading, hidden on wider screens where the table head shows."""

    formats = ("html",)
    default_priority = 600

    def run(self, **kwargs: Any) -> None:
        for table in _findings_tables(self.document):
            heads = [entry.astext() for entry in next(table.findall(nodes.thead)).findall(nodes.entry)]
            for row in next(table.findall(nodes.tbody)).findall(nodes.row):
                for head, entry in zip(heads, row.findall(nodes.entry)):
                    label = nodes.paragraph(text=head, classes=["repro-card-label"])
                    label["translatable"] = False
                    entry.insert(0, label)


class BreaksAfterSlashes(SphinxPostTransform):
    """A findings cell wraps between words only (repro.css), so each column is as wide as its
    longest word; a slash may end a line too, or a name such as
    "LWLockAcquireOrWait/LWLockRelease" would widen the table past the text column."""

    formats = ("html",)
    default_priority = 600

    def run(self, **kwargs: Any) -> None:
        for table in _findings_tables(self.document):
            for text in list(table.findall(nodes.Text)):
                if "/" not in text or isinstance(text.parent, nodes.raw):
                    continue
                first, *rest = str(text).split("/")
                pieces: list[nodes.Node] = [nodes.Text(first)]
                for piece in rest:
                    pieces += [nodes.Text("/"), nodes.raw("", "<wbr>", format="html"), nodes.Text(piece)]
                text.parent.replace(text, pieces)


def write_sitemap(app: Sphinx, error: Exception | None) -> None:
    """sitemap.xml of the language's pages: absolute addresses when html_baseurl (the
    REPRO_BASEURL of the build) gives the site's public address, else relative ones."""
    if error is not None or app.builder.format != "html" or app.builder.name != "html":
        return
    base = app.config.html_baseurl or ""
    urls = "".join(f"  <url><loc>{html.escape(base + doc + '.html')}</loc></url>\n"
                   for doc in sorted(app.env.found_docs))
    results.write_atomically(Path(app.outdir) / "sitemap.xml",
                             '<?xml version="1.0" encoding="UTF-8"?>\n'
                             '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                             f"{urls}</urlset>\n")
