"""The version matrix: a chapter's findings on every major with a result, and what changed
between majors, as ranges of majors."""
from __future__ import annotations

import html

from docutils import nodes
from sphinx.util.texescape import escape as tex_escape

from .. import majors, pooling, registry, sizes
from ..chapter import Table
from ..text import Text
from ..verdict import CHANGED, CONTRADICTED, INCONCLUSIVE, KIND, NOT_APPLICABLE, PARTIAL, REPRODUCED, Finding, Verdict
from . import store
from .nodes import (ChapterDirective, Directive, details, details_summary, para, source_text, table_node,
                    verdict_badge)
from .revisions import revised_after_note
from .words import WORDS


class MajorsDirective(ChapterDirective):
    """This chapter's findings on every PostgreSQL major that has a result."""

    def build(self) -> list[nodes.Node]:
        name = self.arguments[0]
        self.depend_on(name)
        shown = store.majors(name, self.scale)
        return [_majors_table(name, shown, self.lang), para(LEGEND(self.lang), ["repro-table-note"]),
                _differences(name, shown, self.lang)]


SYMBOL = {REPRODUCED: "✓", PARTIAL: "◐", CONTRADICTED: "✗", CHANGED: "⇄", INCONCLUSIVE: "?", NOT_APPLICABLE: "–"}
OTHER_COMMIT, STALE = "*", "(!)"  # the legend (matrix.md, chapter pages) explains both
LEGEND = Text("✓ 再現した、◐ 一部で再現 (測った種類では再現し、測っていない種類がある)、✗ 再現しなかった、⇄ 後のメジャーで変化、? 判定できず、– 対象外。値の前の番号は判定条件の番号です。"
              "* はこのビルドと別のコミットで測った実行を含むセル、(!) は実験の別の版か別のスケールの実行だけのセルです。"
              "= ↓ ↑ ⇅ は、効果の大きさが原典と同じ、いまは小さい、いまは大きい、いまは逆向きであることを示します (原典と比べられる知見だけ)。"
              "セルを開くと、判定、判定条件、95% 信頼区間、プールした実行の数が出ます。",
              "✓ reproduced, ◐ reproduced in part (on the kinds measured; others were not measured), ✗ contradicted, ⇄ changed in a later major, ? inconclusive, – not applicable. A number "
              "before a value is the check's. * marks a cell resting on runs made at another commit than this "
              "build's, (!) one with only a run of another version of the experiment or another scale. = ↓ ↑ ⇅: the "
              "effect is the same size as the original's, smaller now, larger now, the other way now (comparable "
              "findings only). Open a "
              "cell for the verdict, the check, the 95 % interval and the runs pooled.")


def marks(shown: store.Shown) -> str:
    """"*" on a cell resting on a run made at another commit than this build's code; "(!)"
    on one whose run is of another experiment or scale (shown alone)."""
    runs = shown.pool.runs if shown.pool is not None else [shown.run]
    here = store.this_commit()
    other = any((r.doc["provenance"].get("git") or {}).get("commit") != here for r in runs)
    return STALE if shown.why is not None else OTHER_COMMIT if other else ""


def _matrix_cell(shown: store.Shown, fid: str, lang: str) -> nodes.Node:
    """A compact cell: the verdict as a symbol (its name for screen readers and on hover),
    the deciding value with its unit (and the check's number, where a finding has several),
    the marks; opening it shows the verdict, the value's interval and the runs it pools."""
    if shown.run is None:
        return nodes.paragraph(text=WORDS["no_result"](lang))
    if "unavailable" in shown.run.doc:
        return para(Text(**shown.run.doc["unavailable"])(lang), ["repro-reason"])
    v = next(v for v in shown.verdicts if v.finding.id == fid)
    badge_text = v.badge()(lang)
    c = v.deciding
    number = c.number() if c is not None else None
    which = f"{list(v.checks).index(c) + 1}: " if c is not None and len(v.checks) > 1 else ""
    cell = details(classes=["repro-cell"])
    line = details_summary()
    status = v.status.replace(" ", "-")
    line += nodes.raw("", f'<span class="repro-symbol repro-status {status}" role="img" '
                          f'aria-label="{html.escape(badge_text, quote=True)}" '
                          f'title="{html.escape(badge_text, quote=True)}">{SYMBOL[v.status]}</span>', format="html")
    line += nodes.raw("", tex_escape(badge_text), format="latex")  # the PDF: the verdict's name
    if mark := marks(shown):
        line += nodes.inline(text=f" {mark}", classes=["repro-mark"])
    size = shown.pool.sizes.get(fid) if shown.pool is not None else None
    if size is not None and size.outcome in sizes.MARK:  # the size beside the original's
        words = html.escape(size.text()(lang), quote=True)
        line += nodes.raw("", f' <span class="repro-size-mark" role="img" aria-label="{words}" title="{words}">'
                              f'{sizes.MARK[size.outcome]}</span>', format="html")
    if number is not None:
        line += nodes.inline(text=f" {which}{number.format(lang, interval=False)}", classes=["repro-key-value"])
    cell += line
    head = nodes.paragraph()
    head += verdict_badge(v, lang)
    cell += head
    if c is not None:
        cell += para(f"{which}{c.check.measure.label(lang)}: {c.number().format(lang)}", ["repro-reason"])
    if v.runs:
        cell += para(WORDS["pooled_cell"](lang).format(k=v.runs, r=v.rounds), ["repro-reason"])
    if size is not None and size.comparable:  # why one is not comparable: on the chapter's page
        cell += para(size.text()(lang), ["repro-reason"])
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
    """A matrix column's own source, compact (its newest run's date and commit), opening to the
    whole of it: this build's run or a stored one (date, machine, commit, uncommitted
    changes), and the runs pooled with it."""
    if shown.run is None:
        return nodes.paragraph(text="—")
    prov = shown.run.doc["provenance"]
    commit = ((prov.get("git") or {}).get("commit") or "")[:7]
    cell = details(classes=["repro-cell", "repro-where"])
    line = details_summary()
    line += nodes.inline(text=f"{prov['started'][5:10]}\n{commit}".strip())  # one per line (CSS)
    cell += line
    cell += para(source_text(shown)(lang), ["repro-reason"])
    return cell


def _majors_table(name: str, shown: dict[float, store.Shown], lang: str) -> nodes.Node:
    chapter = registry.get(name)
    columns = [WORDS["finding"], *(Text(majors.name(m), majors.name(m)) for m in shown)]
    rows = [[_finding_cell(f, lang), *(_matrix_cell(s, f.id, lang) for s in shown.values())]
            for f in chapter.findings]
    if shown:
        rows.append([WORDS["measured_where"], *(_measured_where(s, lang) for s in shown.values())])
    caption = Text(f"{chapter.title.ja}: PostgreSQL のメジャーバージョンごとの判定",
                   f"{chapter.title.en}: verdicts per PostgreSQL major")
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
        if pooling.differs(by_major):
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
