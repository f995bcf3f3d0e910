"""The version matrix: a chapter's findings on every major with a result, and what changed
between majors, as ranges of majors."""
from __future__ import annotations

from docutils import nodes

from .. import majors, pooling, registry
from ..chapter import Table
from ..text import Text
from ..verdict import CHANGED, KIND, Finding, Verdict
from . import store
from .nodes import ChapterDirective, Directive, para, source_text, table_node, verdict_badge
from .revisions import revised_after_note
from .words import WORDS


class MajorsDirective(ChapterDirective):
    """This chapter's findings on every PostgreSQL major that has a result."""

    def build(self) -> list[nodes.Node]:
        name = self.arguments[0]
        self.depend_on(name)
        shown = store.majors(name, self.scale)
        return [_majors_table(name, shown, self.lang), _differences(name, shown, self.lang)]


def _matrix_cell(shown: store.Shown, fid: str, lang: str) -> nodes.Node:
    if shown.run is None:
        return nodes.paragraph(text=WORDS["no_result"](lang))
    if "unavailable" in shown.run.doc:
        return para(Text(**shown.run.doc["unavailable"])(lang), ["repro-reason"])
    v = next(v for v in shown.verdicts if v.finding.id == fid)
    cell = nodes.container()
    p = nodes.paragraph()
    p += verdict_badge(v, lang, stale=shown.why is not None)
    cell += p
    key = v.deciding.number().format(lang) if v.checks else ""
    if key:
        cell += para(key, ["repro-key-value"])
    if v.runs > 1:
        cell += para(WORDS["pooled_cell"](lang).format(k=v.runs, r=v.rounds), ["repro-reason"])
    if shown.pool is None:
        cell += revised_after_note(shown.run, fid, lang)
    return cell


def _finding_cell(f: Finding, lang: str) -> nodes.Node:
    """A finding as a matrix row names it: its id, kind and claim."""
    cell = nodes.paragraph()
    cell += nodes.strong(text=f.id)
    cell += nodes.inline(text=" " + KIND[f.kind](lang), classes=["repro-kind", f.kind])
    cell += nodes.inline(text=f.claim(lang), classes=["repro-claim"])
    return cell


def _measured_where(shown: store.Shown, lang: str) -> nodes.Node:
    """A matrix column's own source: this build's run, or a stored one (date, machine,
    commit, uncommitted changes)."""
    if shown.run is None:
        return nodes.paragraph(text="—")
    return para(source_text(shown)(lang), ["repro-reason"])


def _majors_table(name: str, shown: dict[float, store.Shown], lang: str) -> nodes.Node:
    chapter = registry.get(name)
    columns = [WORDS["finding"], *(Text(f"PostgreSQL {majors.name(m)}", f"PostgreSQL {majors.name(m)}")
                                   for m in shown)]
    rows = [[_finding_cell(f, lang), *(_matrix_cell(s, f.id, lang) for s in shown.values())]
            for f in chapter.findings]
    if shown:
        rows.append([WORDS["measured_where"], *(_measured_where(s, lang) for s in shown.values())])
    caption = Text(f"{chapter.title.ja}: メジャーバージョンごとの判定",
                   f"{chapter.title.en}: verdicts per major")
    node = table_node(Table(caption, columns, rows or [[WORDS["no_result"]]]), lang)[0]
    node["classes"].append("repro-matrix")
    return node


def _differences(name: str, shown: dict[float, store.Shown], lang: str) -> nodes.Node:
    """What changed between majors, from the same verdicts as the table: one line per finding
    whose verdict differs between majors, as ranges ("F1: reproduced on 9.6–13; changed in
    14 on 14–18 (why)")."""
    findings = registry.get(name).findings
    verdicts: dict[float, dict[str, Verdict]] = {
        major: {v.finding.id: v for v in s.verdicts}
        for major, s in shown.items() if s.verdicts}
    lines: list[str] = []
    for f in findings:
        by_major = {m: vs[f.id] for m, vs in verdicts.items()}
        if len({v.badge() for v in by_major.values()}) > 1:
            why = next((v.reason(lang) for v in by_major.values() if v.status == CHANGED and v.reason), None)
            lines.append(f"{f.id}: {pooling.describe(by_major)(lang)}" + (f" ({why})" if why else ""))
    box = nodes.container(classes=["repro-differences"])
    if len(verdicts) < 2:
        box += para(WORDS["no_other_majors"](lang))
    elif not lines:
        box += para(WORDS["same_everywhere"](lang).format(majors=", ".join(map(majors.name, verdicts))))
    else:
        box += para(WORDS["differ"](lang))
        items = nodes.bullet_list()
        for line in lines:
            item = nodes.list_item()
            item += nodes.paragraph(text=line)
            items += item
        box += items
    left_out = {major: sorted({k for srv in s.run.doc["provenance"]["servers"]
                               for k in srv.get("absent_settings", [])})
                for major, s in shown.items() if s.run is not None}
    if any(left_out.values()):
        box += para(LEFT_OUT(lang).format(cells="; ".join(
            f"{majors.name(m)}: {', '.join(names)}" for m, names in left_out.items() if names)))
    return box


LEFT_OUT = Text("そのメジャーバージョンにないため、サーバーの設定から外したもの: {cells}。",
                "Settings left out of the servers because that major does not have them: {cells}.")


class MatrixDirective(Directive):
    """The version matrix: for every chapter, its findings on every major with a result."""

    def build(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        for name in registry.chapters():
            self.depend_on(name)
            section_title = nodes.rubric(text=registry.get(name).title(self.lang))
            shown = store.majors(name, self.scale)
            out += [section_title, _majors_table(name, shown, self.lang), _differences(name, shown, self.lang)]
        return out
