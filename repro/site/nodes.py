"""The site's building blocks: docutils nodes for tables, badges and paragraphs, the
base directives (a page's language, major and scale; a chapter's result), and the
collapsible `details` node. Generated text is sealed out of the translation catalogue."""
from __future__ import annotations

import html
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from .. import majors, registry
from ..chapter import Chapter, Run, Table
from ..errors import ReproError
from ..text import Number, Text
from ..verdict import Verdict
from ..verdict_words import badge_of
from . import store
from .words import STATUS, WORDS


def sealed(result: list[nodes.Node]) -> list[nodes.Node]:
    """Keep generated text (numbers, labels) out of the translation catalogue: both
    languages' labels come from the chapter package, so .po files never go stale."""
    for node in result:
        for text_node in node.findall(nodes.TextElement):
            # Inline nodes are never extracted; marking them would make Sphinx treat them
            # as translation placeholders and unwrap them (RemoveTranslatableInline).
            if not isinstance(text_node, nodes.Inline):
                text_node["translatable"] = False
    return result


def timestamp(iso: str) -> str:
    """"2026-11-22T12:03:58+00:00" -> "2026-11-22 12:03 UTC"."""
    return iso[:16].replace("T", " ") + " UTC"


def lang_of(env_or_app: Any) -> str:
    return env_or_app.config.language or "ja"


def doc_link(text: str, docname: str) -> addnodes.pending_xref:
    """A link to another page that every builder resolves (HTML and the PDF)."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{docname}",
                                refexplicit=True, refwarn=True)
    ref += nodes.inline(text=text)
    return ref


def finding_anchor(name: str, fid: str) -> str:
    """A finding's row on its chapter page (and in the front page's ledger): ASCII, the same
    in both languages ("auto_explain-f3")."""
    return f"{name}-{fid.lower()}"


def note_finding_row(env: Any, name: str, fid: str) -> str:
    """The finding's row on this page as a target other pages link to (`finding_link`)."""
    anchor = finding_anchor(name, fid)
    env.get_domain("std").note_hyperlink_target(anchor, env.docname, anchor, f"{name} {fid}")
    return anchor


def finding_link(text: str, name: str, fid: str) -> addnodes.pending_xref:
    """A link to a finding's row on its chapter page, which every builder resolves."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=finding_anchor(name, fid),
                                refexplicit=True, refwarn=True)
    ref += nodes.inline(text=text)
    return ref


class TargetsInLatex(SphinxPostTransform):
    """LaTeX labels neither a table row nor a container: there their ids move to a target at
    the start of their content, so that a link to a finding's row (finding_link) or to a
    group of the front page's answer lands in the PDF too."""

    default_priority = 200
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(lambda n: isinstance(n, (nodes.row, nodes.container)))):
            if not node["ids"] or not len(node) or node.get("literal_block"):  # a code block's caption labels it
                continue
            # a row: into its first cell's first paragraph
            into = node[0] if isinstance(node, nodes.row) else node
            into = into[0] if len(into) and isinstance(into[0], nodes.TextElement) else into
            into.insert(0, nodes.target(ids=node["ids"]))
            node["ids"] = []


def has_findings_table(shown: store.Shown) -> bool:
    """Whether the chapter page shows the findings table (and so the findings' rows)."""
    return shown.run is not None and "unavailable" not in shown.run.doc


def badge(status: str, lang: str, stale: bool = False, label: Text | None = None) -> nodes.inline:
    """A verdict as a coloured label ("changed in 14", "not applicable: ≥ 3 CPUs"); "(!)"
    marks a result that is not fresh."""
    return nodes.inline(text=(label or STATUS[status])(lang) + (" (!)" if stale else ""),
                        classes=["repro-status", status.replace(" ", "-")])


def verdict_badge(v: Verdict, lang: str, stale: bool = False) -> nodes.inline:
    return badge(v.status, lang, stale, badge_of(v))


def source_text(shown: store.Shown) -> Text:
    """Where a result's numbers come from, as a noun phrase: this build's run, or a stored
    run with its date, machine, commit and whether the tree had uncommitted changes."""
    doc = shown.run.doc
    prov, host = doc["provenance"], doc["provenance"]["host"]
    major, when = majors.name(doc["major"]), timestamp(prov["started"])
    if shown.this_build:
        return Text(f"このビルドの実行 (PostgreSQL {major}、{when}、`{doc['scale']}` スケール)",
                    f"this build's run (PostgreSQL {major}, {when}, {doc['scale']} scale)")
    git = prov.get("git") or {}
    commit = (git.get("commit") or "?")[:10]
    model, cpus = (host.get('cpu_model') or '?').split(' @')[0], host.get('engine_cpus')
    dirty = Text("、未コミットの変更あり", ", with uncommitted changes") if git.get("dirty") else Text("", "")
    return Text(f"保存された実行 (PostgreSQL {major}、{when}、`{doc['scale']}` スケール、CPU {cpus} 個 ({model})、"
                f"コミット {commit}{dirty.ja})",
                f"a stored run (PostgreSQL {major}, {when}, {doc['scale']} scale, {cpus} CPUs ({model}), "
                f"commit {commit}{dirty.en})")


def pooled_text(shown: store.Shown) -> Text:
    """A sentence on the stored runs that the estimates with an interval pool with the run
    source_text names (in English with a space before it), or nothing when there are none."""
    others = len(shown.pool.runs) - 1 if shown.pool is not None else 0
    if not others:
        return Text("", "")
    return Text(f"区間のある推定値は、この実行と、同じ実験の保存された {others} 回の実行をプールして求めています。",
                f" Estimates with an interval pool this run with {others} stored run{'s' if others > 1 else ''} "
                f"of the same experiment.")


def source_sentences(shown: store.Shown) -> Text:
    """The run that a table, a chart or a matrix cell comes from, and the runs pooled with it."""
    source, pooled = source_text(shown), pooled_text(shown)
    return Text(f"出所: {source.ja}。{pooled.ja}", f"Source: {source.en}.{pooled.en}")


def source_para(shown: store.Shown, lang: str) -> nodes.paragraph:
    return para(source_sentences(shown)(lang), ["repro-source"])


def para(text: str, classes: list[str] | None = None) -> nodes.paragraph:
    """A paragraph; `backquoted` parts become inline code."""
    node = nodes.paragraph(classes=classes or [])
    for i, part in enumerate(text.split("`")):
        node += nodes.literal(text=part) if i % 2 else nodes.Text(part)
    return node


def _cell(value: Any, lang: str) -> nodes.Node:
    if isinstance(value, nodes.Node):
        return value
    if isinstance(value, Text):
        return nodes.paragraph(text=value(lang))
    if isinstance(value, Number):
        cell = nodes.paragraph(text=value.format(lang))
        if note := pooled_note(value, lang):  # pooled: not this build's run alone
            cell += nodes.inline(text=f" {note}", classes=["repro-pooled"])
        return cell
    return nodes.paragraph(text="—" if value is None else str(value))


def pooled_note(number: Number, lang: str) -> str:
    """"9 runs pooled" beside an estimate pooled over several runs (Run.estimate); "" else."""
    return WORDS["pooled_number"](lang).format(k=number.runs) if number.runs and number.value is not None else ""


def table_node(table: Table, lang: str, widths: list[int] | None = None,
               row_ids: list[str] | None = None) -> list[nodes.Node]:
    """A docutils table with a caption (numbered by numfig), and its note below; `row_ids`:
    an id for each body row (a link's target)."""
    node = nodes.table(classes=["repro-table"] + (["colwidths-given"] if widths else []))
    node += nodes.title(text=table.caption(lang))
    group = nodes.tgroup(cols=len(table.columns))
    node += group
    for width in widths or [1] * len(table.columns):
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    ids = row_ids or [""] * len(table.rows)
    for part, rows, idents in ((head, [table.columns], [""]), (body, table.rows, ids)):
        for row, ident in zip(rows, idents):
            tr = nodes.row(ids=[ident] if ident else [])
            for value in row:
                entry = nodes.entry()
                entry += _cell(value, lang)
                tr += entry
            part += tr
    out: list[nodes.Node] = [node]
    if table.note:
        out.append(para(table.note(lang), ["repro-table-note"]))
    return out


class Directive(SphinxDirective):
    @property
    def lang(self) -> str:
        return lang_of(self.env)

    @property
    def site_major(self) -> float:
        return self.env.config.repro_major

    @property
    def scale(self) -> str:
        return self.env.config.repro_scale

    def depend_on(self, name: str) -> None:
        """Re-read the page when the chapter's results or its package (claims, thresholds,
        labels, tables) change."""
        for path in store.watched(name):
            self.env.note_dependency(str(path))
        for path in sorted(registry.get(name).package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                self.env.note_dependency(str(path))

    def run(self) -> list[nodes.Node]:
        try:
            return sealed(self.build())
        except ReproError as exc:
            raise self.error(str(exc)) from exc

    def build(self) -> list[nodes.Node]:
        raise NotImplementedError


class ChapterDirective(Directive):
    required_arguments = 1
    optional_arguments = 1

    def chapter(self) -> Chapter:
        return registry.get(self.arguments[0])

    def shown(self) -> store.Shown:
        self.depend_on(self.arguments[0])
        return store.current(self.arguments[0], self.site_major, self.scale)

    def build(self) -> list[nodes.Node]:
        shown = self.shown()
        if shown.run is None or "unavailable" in shown.run.doc:
            return self.missing()
        return self.build_run(shown.run)

    def build_run(self, run: Run) -> list[nodes.Node]:
        raise NotImplementedError

    def missing(self) -> list[nodes.Node]:
        """What stands in for the result's pieces when there is none (the banner says why)."""
        return [nodes.paragraph(text="—")]


class details(nodes.General, nodes.Element):
    """A collapsible group (HTML <details>); other builders show its content as it is."""


class details_summary(nodes.TextElement):
    """The always visible line of a `details` (HTML <summary>); a bold line elsewhere."""


def visit_details_html(self: Any, node: details) -> None:
    attributes = {"class": " ".join(node["classes"])}
    attributes |= {f"data-{k}": v for k, v in node.get("data", {}).items()}
    self.body.append("<details" + "".join(f' {k}="{html.escape(v, quote=True)}"' for k, v in attributes.items())
                     + ">\n")


def depart_details_html(self: Any, node: details) -> None:
    self.body.append("</details>\n")


def visit_summary_html(self: Any, node: details_summary) -> None:
    self.body.append("<summary>")


def depart_summary_html(self: Any, node: details_summary) -> None:
    self.body.append("</summary>\n")


def visit_summary_latex(self: Any, node: details_summary) -> None:
    self.body.append("\n\n\\noindent\\textbf{")


def depart_summary_latex(self: Any, node: details_summary) -> None:
    self.body.append("}\n\n")


def visit_plain(self: Any, node: nodes.Node) -> None:
    pass


def depart_plain(self: Any, node: nodes.Node) -> None:
    pass
