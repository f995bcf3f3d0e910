"""Sphinx extension: puts the build's own results on the pages.

Directives (MyST: ```{repro-findings} auto_explain```): repro-status,
repro-findings, repro-table, repro-chart, repro-provenance, repro-ledger,
repro-environment, repro-download; role {repro-num}`chapter:key` for inline numbers. Every
number comes from the chapter's result file and is formatted per language, so
translated text never carries a number.
"""
from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole

from . import charts, registry, results, runner
from .errors import ReproError
from .chapter import NOT_APPLICABLE, NOT_REPRODUCED, REPRODUCED, Chapter, Table
from .text import Number, Text

STATUS = {
    REPRODUCED: Text("再現した", "reproduced"),
    NOT_REPRODUCED: Text("再現しなかった", "not reproduced"),
    NOT_APPLICABLE: Text("この環境では対象外", "not applicable here"),
}
WORDS = {
    "measured": Text("測定値", "measured"),
    "condition": Text("判定条件", "holds if"),
    "why": Text("理由", "why"),
    "not_expected": Text("(この環境では成立を期待しない)", "(not expected to hold here)"),
    "missing": Text("この章の結果はまだありません。`make html` で実行されます。",
                    "This chapter has no result yet; `make html` runs it."),
    "stale": Text("注意: 下の数値はこのビルドのコードで測ったものではありません ({why})。"
                  "`make html` (REPRO=cached なし) で再実行されます。",
                  "Caution: the numbers below were not measured by this build's code ({why}); "
                  "`make html` without REPRO=cached runs the chapter again."),
    "fresh": Text("このページの数値は、このビルドが {started} に {scale} スケールで実行した結果 "
                  "({duration} 秒) から生成されています。",
                  "The numbers on this page come from this build's run of {started} at {scale} "
                  "scale ({duration} s)."),
    "stale_mark": Text("(!) この章の結果は、このビルドのコードやスケールで測ったものではありません。",
                       "(!) this chapter's result was not measured with this build's code or scale."),
    "no_result": Text("(結果なし)", "(no result)"),
    "corrupt": Text("結果ファイルが壊れています", "the result file is corrupt"),
    "code_changed": Text("章のコードが変わっています", "the chapter's code has changed"),
    "scale_changed": Text("スケールが {scale} です", "it was run at {scale} scale"),
    "chapter": Text("章", "Chapter"),
    "finding": Text("知見", "Finding"),
    "status": Text("判定", "Status"),
    "download": Text("この章の結果 (JSON)", "This chapter's results (JSON)"),
}
PROVENANCE = [
    ("started", Text("開始時刻", "Started")),
    ("duration_s", Text("所要時間 [s]", "Duration [s]")),
    ("scale", Text("スケール", "Scale")),
    ("target", Text("対象", "Target")),
    ("version", Text("PostgreSQL", "PostgreSQL")),
    ("image", Text("イメージ (名前、ID、由来)", "Image (name, id, origin)")),
    ("cpu", Text("CPU", "CPU")),
    ("memory_gib", Text("メモリ [GiB]", "Memory [GiB]")),
    ("kernel", Text("カーネル", "Kernel")),
    ("clocksource", Text("クロックソース", "Clock source")),
    ("docker_version", Text("Docker エンジン", "Docker engine")),
    ("code", Text("コードのハッシュ (章 / repro 全体)", "Code hash (chapter / all of repro)")),
    ("params", Text("スケールのパラメータ", "Scale parameters")),
]


def _sealed(result: list[nodes.Node]) -> list[nodes.Node]:
    """Keep generated text (numbers, labels) out of the translation catalogue: both
    languages' labels come from the chapter module, so .po files never go stale."""
    for node in result:
        for text_node in node.findall(nodes.TextElement):
            # Inline nodes are never extracted; marking them would make Sphinx treat them
            # as translation placeholders and unwrap them (RemoveTranslatableInline).
            if not isinstance(text_node, nodes.Inline):
                text_node["translatable"] = False
    return result


def _when(iso: str) -> str:
    """"2026-11-22T12:03:58+00:00" -> "2026-11-22 12:03 UTC"."""
    return iso[:16].replace("T", " ") + " UTC"


def _lang(env: Any) -> str:
    return env.config.language or "ja"


def _state(app: Sphinx, chapter: Chapter) -> tuple[dict | None, str | None]:
    """The chapter's result and, if it is not fresh for this build, why (None when fresh)."""
    try:
        doc = results.load(chapter.name)
    except results.CorruptResult:
        return None, "corrupt"
    if doc is None:
        return None, "missing"
    if doc["key"]["module"] != runner.module_hash(chapter):
        return doc, "code_changed"
    if doc["scale"] != app.config.repro_scale:
        return doc, "scale_changed"
    return doc, None


def _badge(status: str, lang: str, stale: bool = False) -> nodes.paragraph:
    """A finding's status as a coloured label; "(!)" marks a result that is not fresh."""
    para = nodes.paragraph()
    para += nodes.inline(text=STATUS[status](lang) + (" (!)" if stale else ""),
                         classes=["repro-status", status.replace(" ", "-")])
    return para


class _ChapterDirective(SphinxDirective):
    required_arguments = 1
    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        try:
            doc = self.result()
            return _sealed(self.build(doc) if doc is not None else self.missing())
        except ReproError as exc:
            raise self.error(str(exc)) from exc

    def build(self, doc: dict) -> list[nodes.Node]:
        raise NotImplementedError

    def missing(self) -> list[nodes.Node]:
        """What stands in for the result's pieces when there is none (the banner says why)."""
        return [self.para("—")]

    def chapter(self) -> Chapter:
        return registry.get(self.arguments[0])

    def result(self) -> dict | None:
        path = results.path_for(self.arguments[0])
        self.env.note_dependency(str(path))  # re-read the page when its result changes
        return _state(self.env.app, self.chapter())[0]

    @property
    def lang(self) -> str:
        return _lang(self.env)

    def para(self, text: str) -> nodes.paragraph:
        """A paragraph; `backquoted` parts become inline code."""
        node = nodes.paragraph()
        for i, part in enumerate(text.split("`")):
            node += nodes.literal(text=part) if i % 2 else nodes.Text(part)
        return node

    def placeholder(self, node: nodes.Element) -> list[nodes.Node]:
        """A captioned, named stand-in when there is no result, so references still resolve."""
        caption = WORDS["no_result"](self.lang)
        if isinstance(node, nodes.table):
            node = table_node(Table(Text(caption, caption), [Text("—", "—")], []), self.lang)
        else:
            node += nodes.caption(text=caption)
        self.add_name(node)
        return [node]


class StatusDirective(_ChapterDirective):
    """A banner: where the page's numbers come from, or a warning that they are not fresh."""

    def missing(self) -> list[nodes.Node]:
        return self.build(None)

    def build(self, doc: dict | None) -> list[nodes.Node]:
        doc, why = _state(self.env.app, self.chapter())
        if why is None:
            prov = doc["provenance"]
            text = WORDS["fresh"](self.lang).format(started=_when(prov["started"]),
                                                    scale=doc["scale"],
                                                    duration=f"{prov['duration_s']:.0f}")
            box = nodes.note()
        elif doc is None:
            text = WORDS["missing"](self.lang) if why == "missing" else WORDS["corrupt"](self.lang)
            box = nodes.warning()
        else:
            reason = WORDS[why](self.lang).format(scale=doc["scale"])
            text = WORDS["stale"](self.lang).format(why=reason)
            box = nodes.warning()
        box += self.para(text)
        return [box]


class FindingsDirective(_ChapterDirective):
    """Each finding: status, claim, measured values against the thresholds."""

    def build(self, doc: dict) -> list[nodes.Node]:
        findings = self.chapter().evaluate(doc["summary"])
        items = nodes.bullet_list(classes=["repro-findings"])
        for f in findings:
            item = nodes.list_item()
            head = nodes.paragraph()
            head += nodes.strong(text=f"{f['id']} ")
            head += _badge(f["status"], self.lang).children[0]
            head += nodes.Text(" " + f["claim"][self.lang])
            if not f["expected"]:
                head += nodes.Text(" " + WORDS["not_expected"](self.lang))
            item += head
            measured = "; ".join(
                f"{m['label'][self.lang]}: "
                f"{Number(**{k: v for k, v in m.items() if k != 'label'}).format(self.lang)}"
                for m in f["measured"])
            item += self.para(f"{WORDS['measured'](self.lang)}: {measured} — "
                              f"{WORDS['condition'](self.lang)}: {f['condition'][self.lang]}")
            if f["reason"]:
                item += self.para(f"{WORDS['why'](self.lang)}: {f['reason'][self.lang]}")
            items += item
        return [items]


def _cell(value: Any, lang: str) -> str | nodes.Node:
    if isinstance(value, nodes.Node):
        return value
    if value is None:
        return "—"
    if isinstance(value, Text):
        return value(lang)
    if isinstance(value, Number):
        return value.format(lang)
    return str(value)


def table_node(table: Table, lang: str, widths: list[int] | None = None) -> nodes.table:
    """A docutils table with a caption (numbered by numfig)."""
    node = nodes.table(classes=["repro-table"] + (["colwidths-given"] if widths else []))
    node += nodes.title(text=table.caption(lang))
    group = nodes.tgroup(cols=len(table.columns))
    node += group
    for width in widths or [1] * len(table.columns):
        group += nodes.colspec(colwidth=width)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    for part, rows in ((head, [table.columns]), (body, table.rows)):
        for row in rows:
            tr = nodes.row()
            for value in row:
                entry = nodes.entry()
                cell = _cell(value, lang)
                entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=cell)
                tr += entry
            part += tr
    return node


class _PieceDirective(_ChapterDirective):
    """A named piece of a chapter's page (`NAME ID`): a table or a chart."""

    required_arguments = 2
    optional_arguments = 0
    option_spec = {"name": directives.unchanged}
    kind = ""  # "tables" or "charts": the Chapter attribute the ID is looked up in

    def piece(self, doc: dict) -> Any:
        pieces = getattr(self.chapter(), self.kind)
        if self.arguments[1] not in pieces:
            raise ReproError(f"{self.arguments[0]} has no {self.kind[:-1]} {self.arguments[1]!r}; "
                             f"it has: {', '.join(pieces)}")
        return pieces[self.arguments[1]](doc["summary"])

    def missing(self) -> list[nodes.Node]:
        return self.placeholder(nodes.table() if self.kind == "tables" else nodes.figure())


class TableDirective(_PieceDirective):
    kind = "tables"

    def build(self, doc: dict) -> list[nodes.Node]:
        node = table_node(self.piece(doc), self.lang)
        self.add_name(node)
        return [node]


class ChartDirective(_PieceDirective):
    kind = "charts"

    def build(self, doc: dict) -> list[nodes.Node]:
        name, chart_id = self.arguments
        chart = self.piece(doc)
        figure = nodes.figure(classes=["repro-chart"])
        builder = self.env.app.builder
        if builder.format == "html":
            # Drawn straight into the output (not an image node), so that the alt text,
            # which carries measured values, stays out of the translation catalogue.
            file = f"{name}-{chart_id}.png"
            charts.render(chart, self.lang, Path(builder.outdir) / "_images" / "repro" / file)
            up = "../" * self.env.docname.count("/")
            alt = html.escape(charts.alt_text(chart, self.lang), quote=True)
            figure += nodes.raw("", f'<img src="{up}_images/repro/{file}" alt="{alt}" '
                                    f'width="1170" height="676">', format="html")
        figure += nodes.caption(text=chart.title(self.lang))
        self.add_name(figure)
        return [figure]


class ProvenanceDirective(_ChapterDirective):
    """Where, when and with what the chapter's numbers were measured."""

    def build(self, doc: dict) -> list[nodes.Node]:
        prov, host = doc["provenance"], doc["provenance"]["host"]
        servers = prov["servers"]
        values = {
            "started": _when(prov["started"]), "duration_s": f"{prov['duration_s']:.0f}",
            "scale": doc["scale"], "target": prov["target"],
            "version": "; ".join(sorted({s["version"] for s in servers})),
            "image": "; ".join(sorted({f"{s['image']['name']}, {s['image']['id'][7:19]}, "
                                       f"{s['image']['origin']}" for s in servers if s["image"]})),
            "cpu": f"{host['cpu_model']} × {host['cpu_count']}",
            "memory_gib": str(host["memory_gib"]), "kernel": host["kernel"],
            "clocksource": host["clocksource"] or "—", "docker_version": host["docker_version"],
            "code": f"{prov['module_hash']} / {prov['code_hash']}",
            "params": ", ".join(f"{k}={v}" for k, v in doc["scale_params"].items()),
        }
        rows = [[label, values[key]] for key, label in PROVENANCE]
        for s in servers:
            settings = ", ".join(f"{k}={v}" for k, v in s["settings"].items())
            rows.append([Text(f"設定: {s['role']}", f"Settings: {s['role']}"), settings])
        table = Table(Text("実行環境と来歴", "Provenance"), [Text("項目", "Item"), Text("値", "Value")],
                      rows)
        node = table_node(table, self.lang)
        node["classes"].append("repro-provenance")
        return [node]


class LedgerDirective(SphinxDirective):
    """Every chapter's findings and their status, for the front page."""

    def run(self) -> list[nodes.Node]:
        lang = _lang(self.env)
        rows: list[list[Any]] = []
        stale = False
        for name, chapter in registry.chapters().items():
            self.env.note_dependency(str(results.path_for(name)))
            link = nodes.paragraph()
            ref = nodes.reference("", chapter.title(lang), internal=True,
                                  refuri=self.env.app.builder.get_relative_uri(
                                      self.env.docname, f"chapters/{name}"))
            link += ref
            doc, why = _state(self.env.app, chapter)
            if doc is None:
                rows.append([link, "—", WORDS["missing"], "—"])
                continue
            for i, f in enumerate(chapter.evaluate(doc["summary"])):
                rows.append([link if i == 0 else "", f["id"], Text(**f["claim"]),
                             _badge(f["status"], lang, stale=why is not None)])
            stale |= why is not None
        table = Table(Text("知見の一覧", "Findings ledger"),
                      [WORDS["chapter"], WORDS["finding"], Text("内容", "Claim"), WORDS["status"]], rows)
        out: list[nodes.Node] = [table_node(table, lang, [22, 6, 56, 16])]
        if stale:
            out.append(nodes.paragraph(text=WORDS["stale_mark"](lang)))
        return _sealed(out)


class EnvironmentDirective(SphinxDirective):
    """The machine this build measured on, from the newest fresh result (front page)."""

    def run(self) -> list[nodes.Node]:
        lang = _lang(self.env)
        fresh = []
        for name, chapter in registry.chapters().items():
            self.env.note_dependency(str(results.path_for(name)))
            doc, why = _state(self.env.app, chapter)
            if doc is not None and why is None:
                fresh.append(doc)
        if not fresh:
            return _sealed([nodes.paragraph(text=WORDS["no_result"](lang))])
        host = max(fresh, key=lambda d: d["provenance"]["started"])["provenance"]["host"]
        versions = sorted({s["version"].split(" on ")[0] for d in fresh
                           for s in d["provenance"]["servers"]})
        images = sorted({f"{s['image']['name']} ({s['image']['origin']})" for d in fresh
                         for s in d["provenance"]["servers"] if s["image"]})
        rows = [
            [Text("CPU", "CPU"), f"{host['cpu_model']} × {host['cpu_count']}"],
            [Text("メモリ [GiB]", "Memory [GiB]"), str(host["memory_gib"])],
            [Text("カーネル", "Kernel"), host["kernel"]],
            [Text("クロックソース", "Clock source"), host["clocksource"] or "—"],
            [Text("Docker エンジン", "Docker engine"), host["docker_version"]],
            [Text("PostgreSQL", "PostgreSQL"), "; ".join(versions)],
            [Text("イメージ", "Images"), "; ".join(images)],
        ]
        table = Table(Text("このビルドの実行環境", "This build's environment"),
                      [Text("項目", "Item"), Text("値", "Value")], rows)
        return _sealed([table_node(table, lang, [25, 75])])


class DownloadDirective(_ChapterDirective):
    def build(self, doc: dict) -> list[nodes.Node]:
        path = results.path_for(self.arguments[0])
        docdir = Path(self.env.srcdir) / os.path.dirname(self.env.docname)
        ref = addnodes.download_reference("", "", refdoc=self.env.docname, refexplicit=True,
                                          reftarget=os.path.relpath(path, docdir))
        ref += nodes.literal(text=f"{self.arguments[0]}.json")
        para = nodes.paragraph(text=WORDS["download"](self.lang) + ": ")
        para += ref
        return [para]


class NumberRole(SphinxRole):
    """{repro-num}`chapter:key`: a measured number, formatted for the page's language."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        name, _, key = self.text.partition(":")
        chapter = registry.get(name)
        self.env.note_dependency(str(results.path_for(name)))
        doc, _ = _state(self.env.app, chapter)
        if doc is None:
            return [nodes.inline(text="—")], []
        numbers = chapter.numbers(doc["summary"])
        if key not in numbers:
            msg = self.inliner.reporter.error(f"{name} has no number {key!r}", line=self.lineno)
            return [], [msg]
        return [nodes.inline(text=numbers[key].format(_lang(self.env)), classes=["repro-num"])], []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("repro_scale", os.environ.get("SCALE", "default"), "env")
    for name, directive in (("repro-status", StatusDirective), ("repro-findings", FindingsDirective),
                            ("repro-table", TableDirective), ("repro-chart", ChartDirective),
                            ("repro-provenance", ProvenanceDirective),
                            ("repro-ledger", LedgerDirective), ("repro-download", DownloadDirective),
                            ("repro-environment", EnvironmentDirective)):
        app.add_directive(name, directive)
    app.add_role("repro-num", NumberRole())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
