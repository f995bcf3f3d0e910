"""Sphinx extension: puts the build's own results on the pages.

Directives (MyST: ```{repro-findings} auto_explain```): repro-status,
repro-findings, repro-table, repro-chart, repro-provenance, repro-ledger,
repro-download; role {repro-num}`chapter:key` for inline numbers. Every
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
    ("started", Text("開始時刻 (UTC)", "Started (UTC)")),
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
            text_node["translatable"] = False
    return result


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


class _ChapterDirective(SphinxDirective):
    required_arguments = 1
    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        try:
            return _sealed(self.build())
        except ReproError as exc:
            raise self.error(str(exc)) from exc

    def build(self) -> list[nodes.Node]:
        raise NotImplementedError

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
        return nodes.paragraph(text=text)

    def placeholder(self, node: nodes.Element) -> list[nodes.Node]:
        """A captioned, named stand-in when there is no result, so references still resolve."""
        caption = WORDS["no_result"](self.lang)
        if isinstance(node, nodes.table):
            node = table_node(Table(Text(caption, caption), [Text("—", "—")], []), self.lang, [])
        else:
            node += nodes.caption(text=caption)
        self.add_name(node)
        return [node]


class StatusDirective(_ChapterDirective):
    """A banner: where the page's numbers come from, or a warning that they are not fresh."""

    def build(self) -> list[nodes.Node]:
        self.result()
        doc, why = _state(self.env.app, self.chapter())
        if why is None:
            prov = doc["provenance"]
            text = WORDS["fresh"](self.lang).format(started=prov["started"].replace("T", " "),
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

    def build(self) -> list[nodes.Node]:
        doc = self.result()
        if doc is None:
            return [self.para("—")]
        findings = self.chapter().evaluate(doc["summary"])
        items = nodes.bullet_list(classes=["repro-findings"])
        for f in findings:
            item = nodes.list_item()
            head = nodes.paragraph()
            head += nodes.strong(text=f"{f['id']} ")
            head += nodes.inline(text=STATUS[f["status"]](self.lang),
                                 classes=["repro-status", f["status"].replace(" ", "-")])
            head += nodes.Text(" " + f["claim"][self.lang])
            if not f["expected"]:
                head += nodes.Text(" " + WORDS["not_expected"](self.lang))
            item += head
            measured = ", ".join(f"{k}: {Number(**v).format(self.lang)}"
                                 for k, v in f["measured"].items())
            item += self.para(f"{WORDS['measured'](self.lang)}: {measured} — "
                              f"{WORDS['condition'](self.lang)}: {f['condition'][self.lang]}")
            if f["reason"]:
                item += self.para(f"{WORDS['why'](self.lang)}: {f['reason'][self.lang]}")
            items += item
        return [items]


def _cell(value: Any, lang: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, Text):
        return value(lang)
    if isinstance(value, Number):
        return value.format(lang)
    return str(value)


def table_node(table: Table, lang: str, ids: list[str]) -> nodes.table:
    """A docutils table with a caption (numbered by numfig)."""
    node = nodes.table(classes=["repro-table"], ids=ids)
    node += nodes.title(text=table.caption(lang))
    group = nodes.tgroup(cols=len(table.columns))
    node += group
    for _ in table.columns:
        group += nodes.colspec(colwidth=1)
    head, body = nodes.thead(), nodes.tbody()
    group += head
    group += body
    for part, rows in ((head, [table.columns]), (body, table.rows)):
        for row in rows:
            tr = nodes.row()
            for value in row:
                entry = nodes.entry()
                entry += nodes.paragraph(text=_cell(value, lang))
                tr += entry
            part += tr
    return node


class TableDirective(_ChapterDirective):
    required_arguments = 2
    optional_arguments = 0
    option_spec = {"name": directives.unchanged}

    def build(self) -> list[nodes.Node]:
        doc = self.result()
        if doc is None:
            return self.placeholder(nodes.table())
        table = self.chapter().tables[self.arguments[1]](doc["summary"])
        node = table_node(table, self.lang, [])
        self.add_name(node)
        return [node]


class ChartDirective(_ChapterDirective):
    required_arguments = 2
    optional_arguments = 0
    option_spec = {"name": directives.unchanged}

    def build(self) -> list[nodes.Node]:
        doc = self.result()
        if doc is None:
            return self.placeholder(nodes.figure())
        name, chart_id = self.arguments
        chart = self.chapter().charts[chart_id](doc["summary"])
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
                                    f'width="1170" height="598" loading="lazy">', format="html")
        figure += nodes.caption(text=chart.title(self.lang))
        self.add_name(figure)
        return [figure]


class ProvenanceDirective(_ChapterDirective):
    """Where, when and with what the chapter's numbers were measured."""

    def build(self) -> list[nodes.Node]:
        doc = self.result()
        if doc is None:
            return [self.para("—")]
        prov, host = doc["provenance"], doc["provenance"]["host"]
        servers = prov["servers"]
        values = {
            "started": prov["started"].replace("T", " "), "duration_s": f"{prov['duration_s']:.0f}",
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
        node = table_node(table, self.lang, [])
        node["classes"].append("repro-provenance")
        return [node]


class LedgerDirective(SphinxDirective):
    """Every chapter's findings and their status, for the front page."""

    def run(self) -> list[nodes.Node]:
        lang = _lang(self.env)
        rows = []
        for name, chapter in registry.chapters().items():
            self.env.note_dependency(str(results.path_for(name)))
            doc, why = _state(self.env.app, chapter)
            if doc is None:
                rows.append([chapter.title, "—", WORDS["missing"], "—"])
                continue
            for f in chapter.evaluate(doc["summary"]):
                status = STATUS[f["status"]](lang) + ("" if why is None else " (!)")
                rows.append([chapter.title, f["id"], Text(**f["claim"]), status])
        table = Table(Text("知見の一覧", "Findings ledger"),
                      [WORDS["chapter"], WORDS["finding"], Text("内容", "Claim"), WORDS["status"]], rows)
        return _sealed([table_node(table, lang, [])])


class DownloadDirective(_ChapterDirective):
    def build(self) -> list[nodes.Node]:
        if self.result() is None:
            return [self.para("—")]
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
                            ("repro-ledger", LedgerDirective), ("repro-download", DownloadDirective)):
        app.add_directive(name, directive)
    app.add_role("repro-num", NumberRole())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
