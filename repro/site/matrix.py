"""The version matrix: a chapter's findings on every major with a result, and what changed
between majors, as ranges of majors."""
from __future__ import annotations

import html

from docutils import nodes
from sphinx.util.texescape import escape as tex_escape

from .. import majors, pooling, registry, sizes
from ..chapter import Table
from ..text import Text
from ..verdict import (CHANGED, CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE, PARTIAL, REPRODUCED, CheckResult, Finding,
                       Verdict)
from ..verdict_words import KIND, STATUS, badge_of
from . import store
from .expectations import DECLARED_AFTER, PREDICTED, mark_nodes
from .nodes import (ChapterDirective, Directive, details, details_summary, para, source_sentences, table_node,
                    verdict_badge)
from .revisions import revised_after_note
from .words import WORDS


class MajorsDirective(ChapterDirective):
    """This chapter's findings on every PostgreSQL major that has a result."""

    def build(self) -> list[nodes.Node]:
        name = self.arguments[0]
        self.depend_on(name)
        shown = store.majors(name, self.scale)
        return [_majors_table(name, shown, self.lang, self.site_major), legend(self.lang),
                _differences(name, shown, self.lang)]


SYMBOL = {REPRODUCED: "✓", PARTIAL: "◐", CONTRADICTED: "✗", CHANGED: "⇄", INCONCLUSIVE: "?", NOT_APPLICABLE: "–"}
STALE = "(!)"
# Every symbol a matrix shows, with its meaning: the legend under a chapter's table and at the
# top of the matrix page (tests/test_site.py checks that it covers the built pages).
LEGEND: list[tuple[str, Text]] = [
    (SYMBOL[REPRODUCED], STATUS[REPRODUCED]),  # the verdicts' own words, as every page says them
    (SYMBOL[PARTIAL], Text("一部で再現 (測った種類では再現し、測っていない種類がある)",
                           "reproduced in part (on the kinds measured; others were not measured)")),
    (SYMBOL[CONTRADICTED], STATUS[CONTRADICTED]),
    (SYMBOL[CHANGED], STATUS[CHANGED]),
    (SYMBOL[INCONCLUSIVE], STATUS[INCONCLUSIVE]),
    (SYMBOL[NOT_APPLICABLE], STATUS[NOT_APPLICABLE]),
    (sizes.MARK[sizes.SAME], Text("効果の大きさが原典と同じ (原典の値がここでの 95% 信頼区間に入る)",
                                  "the effect is the original's size (its number lies within our 95 % interval)")),
    (sizes.MARK[sizes.SMALLER], Text("効果がいまは原典より小さい", "the effect is smaller now than the original's")),
    (sizes.MARK[sizes.LARGER], Text("効果がいまは原典より大きい", "the effect is larger now than the original's")),
    (sizes.MARK[sizes.REVERSED], Text("効果がいまは原典と逆向き", "the effect goes the other way now")),
    (STALE, Text("このビルドの実験コードやスケールの実行がなく、実験の別の版か別のスケールの実行だけで判定したセル",
                 "no run of this build's experiment and scale: judged on a run of another version of the "
                 "experiment or another scale alone")),
    (PREDICTED, Text("実行の前に、ここでは成り立たないと予測した知見 (予測した日付は章の「主張の改訂」を参照)",
                     "a finding predicted, before any run, not to hold here (when: the chapter's revisions of the claims)")),
    (DECLARED_AFTER, Text("実行の後で、ここでは成立を期待しないと宣言した知見 (いつ、どの実行の後に宣言したかは章の「主張の改訂」を参照)",
                          "a finding declared, after runs of it, as not holding here (when, after which runs: the "
                          "chapter's revisions of the claims)")),
    ("—", Text("結果なし", "no result")),
]
LEGEND_NOTE = Text("各セルは判定と、その行の判定条件の値 (単位つき) とその大きさの印を示します。1 つの行はどのメジャーバージョンでも"
                   "同じ判定条件の値を示し、その判定条件は行の見出しにあります。サイトのメジャーバージョンで判定を決めたもの "
                   "(判定できなかった知見では区間が閾値をまたいだもの、すべての判定条件で再現した知見では効果の大きさが原典から"
                   "いちばん離れたもの) です。判定条件が複数ある知見の残りの判定条件は、章のページの知見の表にあります。"
                   "大きさの印は、原典と比べられる知見だけに付きます。セルを開くと、判定、判定条件、95% 信頼区間、"
                   "プールした実行の数が出ます。",
                   "Each cell shows the verdict, and the value of its row's check (with its unit) and that "
                   "check's size mark. A row shows the same check on every major, named in the row's header: "
                   "the one that gave the verdict on the site's major (for an inconclusive finding, the one "
                   "whose interval straddles its threshold; where every check held, the one whose size is "
                   "furthest from the original's). A finding's other checks are in its chapter's findings "
                   "table. Size marks appear on comparable findings only. Open a cell for the verdict, the "
                   "check, the 95 % interval and the runs pooled.")


def legend(lang: str) -> nodes.Node:
    """The matrix's legend: each symbol with its meaning, then how a cell picks its check."""
    box = nodes.container(classes=["repro-legend", "repro-table-note"])
    pairs = nodes.paragraph()
    for i, (symbol, meaning) in enumerate(LEGEND):
        if i:
            pairs += nodes.Text("、" if lang == "ja" else "; ")
        pairs += nodes.inline(text=symbol, classes=["repro-legend-symbol"])
        pairs += nodes.Text(f" {meaning(lang)}")
    pairs += nodes.Text("。" if lang == "ja" else ".")
    box += pairs
    box += para(LEGEND_NOTE(lang))
    return box


def cell_check(shown: store.Shown, v: Verdict, index: int | None = None
               ) -> tuple[CheckResult | None, sizes.Size | None]:
    """The one check a cell shows and its size, the value and the size mark of the same
    check: its row's (`index`, pooling.row_checks); a run shown alone has no size."""
    if shown.pool is None:
        return (v.checks[index] if index is not None and index < len(v.checks) else v.deciding), None
    return pooling.row_check(shown.pool, v, index)


def _matrix_cell(shown: store.Shown, fid: str, lang: str, index: int | None = None) -> nodes.Node:
    """A compact cell: the verdict as a symbol (its name for screen readers and on hover;
    the PDF prints both), the value of its row's check (cell_check; the row's header names
    it) with its unit and that check's size mark;
    opening it shows the verdict, the value's interval and the runs it pools."""
    if shown.run is None:
        return nodes.paragraph(text=WORDS["no_result"](lang))
    if "unavailable" in shown.run.doc:
        return para(Text(**shown.run.doc["unavailable"])(lang), ["repro-reason"])
    v = next(v for v in shown.verdicts if v.finding.id == fid)
    badge_text = badge_of(v)(lang)
    c, size = cell_check(shown, v, index)
    cell = details(classes=["repro-cell"])
    line = details_summary()
    status = v.status.replace(" ", "-")
    line += _span(SYMBOL[v.status], badge_text, f"repro-symbol repro-status {status}")
    # the PDF: the symbol the legend explains, and the verdict's name (no hover on paper)
    line += nodes.raw("", tex_escape(f"{SYMBOL[v.status]} {badge_text}"), format="latex")
    if shown.why is not None:
        line += nodes.inline(text=f" {STALE}", classes=["repro-mark"])
    line += mark_nodes(shown.run.chapter, v.finding, lang)
    if size is not None and size.comparable:  # the same check's size beside the original's
        line += nodes.Text(" ")
        line += _span(sizes.MARK[size.outcome], size.text()(lang), "repro-size-mark")
        line += nodes.raw("", tex_escape(sizes.MARK[size.outcome]), format="latex")
    if c is not None:
        value = c.number().format(lang, interval=False)
        line += _span(value, c.check.measure.label(lang), "repro-key-value", role=None)
        line += nodes.raw("", " " + tex_escape(value), format="latex")
    cell += line
    head = nodes.paragraph()
    head += verdict_badge(v, lang)
    cell += head
    if c is not None:
        cell += para(f"{c.check.measure.label(lang)}: {c.number().format(lang)}", ["repro-reason"])
    if v.runs:
        cell += para(WORDS["pooled_cell"](lang).format(k=v.runs, r=v.rounds), ["repro-reason"])
    if size is not None and size.comparable:  # why one is not comparable: on the chapter's page
        cell += para(size.text()(lang), ["repro-reason"])
    if shown.pool is None:
        cell += revised_after_note(shown.run, fid, lang)
    return cell


def _span(text: str, title: str, classes: str, role: str | None = "img") -> nodes.raw:
    """An HTML span whose meaning shows on hover (and, as a symbol, to screen readers)."""
    words = html.escape(title, quote=True)
    named = f' role="{role}" aria-label="{words}"' if role else ""
    return nodes.raw("", f'<span class="{classes}"{named} title="{words}">{html.escape(text)}</span>', format="html")


ROW_CHECK = Text("値: {label}", "value: {label}")
ROW_CHECK_OF = Text("値: 判定条件 {n} ({of} 個のうち)、{label}", "value: check {n} of {of}, {label}")


def _finding_cell(f: Finding, lang: str, index: int | None) -> nodes.Node:
    """A finding as a matrix row names it: its id, kind and claim, and the check whose value
    the row shows (its number, where the finding has several)."""
    cell = nodes.paragraph()
    cell += nodes.strong(text=f.id)
    cell += nodes.inline(text=" " + KIND[f.kind](lang), classes=["repro-kind", f.kind])
    cell += nodes.inline(text=f.claim(lang), classes=["repro-claim"])
    if index is not None and index < len(f.checks):
        label = f.checks[index].measure.label(lang)
        said = ROW_CHECK_OF.format(n=index + 1, of=len(f.checks), label=label) if len(f.checks) > 1 \
            else ROW_CHECK.format(label=label)
        cell += nodes.inline(text=" " + said(lang), classes=["repro-row-check"])  # a space for the PDF
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
    cell += para(source_sentences(shown)(lang), ["repro-reason"])
    return cell


def _majors_table(name: str, shown: dict[float, store.Shown], lang: str, site_major: float) -> nodes.Node:
    """A chapter's findings by major; each row shows one check on every major (its header
    names it: pooling.row_checks)."""
    chapter = registry.get(name)
    checks = pooling.row_checks({m: s.pool for m, s in shown.items() if s.pool is not None}, site_major)
    columns = [WORDS["finding"], *(Text(majors.name(m), majors.name(m)) for m in shown)]
    rows = [[_finding_cell(f, lang, checks.get(f.id)), *(_matrix_cell(s, f.id, lang, checks.get(f.id))
                                                         for s in shown.values())]
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
        box += para(WORDS["same_everywhere"](lang).format(majors=("、" if lang == "ja" else ", ").join(
            map(majors.name, verdicts))))
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
        out: list[nodes.Node] = [legend(self.lang)]
        for name in registry.chapters():
            self.depend_on(name)
            section_title = nodes.rubric(text=registry.get(name).title(self.lang))
            shown = store.majors(name, self.scale)
            out += [section_title, _majors_table(name, shown, self.lang, self.site_major),
                    _differences(name, shown, self.lang)]
        return out
