"""A chapter page's own pieces: the status banner and its one-line tally, the findings table
(pooled verdicts, what would decide an undecided check, each run's own verdict), and the
rounds log."""
from __future__ import annotations

from typing import Any

from docutils import nodes

from .. import noise, pooling, sizes
from ..chapter import Run, Table
from ..stats import BETWEEN_RUNS
from ..text import Number, Text
from ..verdict import CheckResult, Finding, Verdict
from ..verdict_words import KIND, STOPPED, to_decide
from . import store
from .expectations import expectation_note
from .answer import GROUPS, TALLY, TALLY_COUNT, group_of
from .apart import apart_note
from .glance import judging_note
from .latex import WHOLE_IN_PRINT
from .nodes import (ChapterDirective, badge, details, details_summary, finding_link, has_findings_table,
                    note_finding_row, para, pooled_text, source_text, table_node, timestamp, verdict_badge)
from .revisions import revised_after_note, revisions_block, targets
from .sources import citation
from .words import WORDS


class StatusDirective(ChapterDirective):
    """A banner: where the page's numbers come from, or a warning that they are not fresh."""

    def build(self) -> list[nodes.Node]:
        shown = self.shown()
        if shown.run is None:
            box = nodes.warning()
            box += para(WORDS["missing" if shown.why == "missing" else "corrupt"](self.lang))
            return [box]
        doc = shown.run.doc
        source, pooled = source_text(shown)(self.lang), pooled_text(shown)(self.lang)
        if shown.why is None:
            box = nodes.note()
            box += para(WORDS["fresh"](self.lang).format(
                source=source, pooled=pooled, duration=f"{doc['provenance']['duration_s']:.0f}"))
        else:
            box = nodes.warning()
            reason = WORDS[shown.why](self.lang).format(scale=doc["scale"])
            box += para(WORDS["stale"](self.lang).format(why=reason, source=source, pooled=pooled))
        return [box, _tally(shown.verdicts, self.chapter().name, self.lang)] if has_findings_table(shown) else [box]


FINDINGS_HEAD = Text("この章の知見 {n} 件: ", "This chapter's {n} findings: ")


def _tally(verdicts: list[Verdict], name: str, lang: str) -> nodes.paragraph:
    """The page's answer in one line, above its summary: how many findings each verdict has
    (the front page's groups and words), each finding linked to its row in the table under
    the summary."""
    grouped: dict[str, list[str]] = {}
    for v in verdicts:
        grouped.setdefault(group_of(v), []).append(v.finding.id)
    titles = dict(GROUPS)
    p = nodes.paragraph(classes=["repro-tally", "repro-chapter-tally"])
    p += nodes.Text(FINDINGS_HEAD(lang).format(n=len(verdicts)))
    for i, status in enumerate(s for s in TALLY if s in grouped):
        if i:
            p += nodes.Text(" ")
        p += nodes.inline(text=TALLY_COUNT(lang).format(title=titles[status](lang), n=len(grouped[status])),
                          classes=["repro-status", status.replace(" ", "-"), "repro-tally-count"])
        p += nodes.Text(" (")
        for j, fid in enumerate(grouped[status]):
            if j:
                p += nodes.Text(", ")
            p += finding_link(fid, name, fid)
        p += nodes.Text(")")
    return p


def _checks_cell(v: Verdict, lang: str) -> nodes.Node:
    """The check that gave the verdict on its line: what was measured, its value and
    interval, its threshold, its own verdict, and, when undecided, what would decide it; the
    finding's other checks the same way under it, collapsed with their count, so that a row
    is as tall as its answer."""
    cell = nodes.container()
    first = v.deciding
    others = [c for c in v.checks if c is not first]
    for c in [first] if first is not None else []:
        cell += _check_lines(c, lang)
    if others:
        more = details(classes=["repro-more-checks", WHOLE_IN_PRINT])  # the PDF keeps every check
        line = details_summary()
        line += nodes.Text(MORE_CHECKS(lang).format(n=len(others), s="s" if len(others) > 1 else ""))
        more += line
        for c in others:
            more += _check_lines(c, lang)
        cell += more
    if v.reason:
        cell += para(v.reason(lang), ["repro-reason"])
    return cell


MORE_CHECKS = Text("ほかの確認 {n} 件", "{n} more check{s}")


def _check_lines(c: CheckResult, lang: str) -> list[nodes.Node]:
    line = nodes.paragraph(classes=["repro-check"])
    line += nodes.Text(f"{c.check.measure.label(lang)}: ")
    line += nodes.strong(text=c.number().format(lang))
    line += nodes.Text(f" ({WORDS['condition'](lang)} {c.check.threshold.text(c.check.measure)(lang)}) ")
    line += badge(c.status, lang)
    return [line, *([para(decide(lang), ["repro-reason", "repro-to-decide"])] if (decide := to_decide(c)) else [])]


def _original_cell(f: Finding, lang: str) -> nodes.Node:
    """The original's number, and where in which source it is: the publication and its
    table, figure or section, linked to the publication's entry on the sources page."""
    cell = nodes.container()
    cell += nodes.paragraph(text=f.original(lang) if f.original else "—")
    for cite in f.cites():
        where = nodes.paragraph(classes=["repro-reason"])
        where += citation(cite.source, cite.where, lang)
        cell += where
    return cell


def _size_cell(shown: store.Shown, fid: str, lang: str) -> nodes.Node:
    """The effect's size beside the original's: the mark, and our pooled value (the one in the
    measured column) beside the original's (repro/sizes.py)."""
    size = shown.pool.sizes.get(fid) if shown.pool is not None else None
    if size is None:
        return nodes.paragraph(text="—")
    if size.why is not None:  # the reason, long, opens from the word
        group = details(classes=["repro-size", "not-comparable"])
        line = details_summary()
        line += nodes.Text(sizes.OUTCOME[size.outcome](lang))
        group += line
        group += para(size.why(lang), ["repro-reason"])
        return group
    line = nodes.paragraph(classes=["repro-size", size.outcome.replace(" ", "-")])
    if size.outcome in sizes.MARK:
        line += nodes.strong(text=sizes.MARK[size.outcome] + " ")
    line += nodes.Text(size.text(runs=False)(lang))
    if not size.fewer_runs or size.judged is None:
        return line
    cell = nodes.container()  # the value over the runs that judge the size, collapsed like a run's own
    cell += line
    group = details(classes=["repro-size-runs"])
    summary = details_summary()
    summary += nodes.Text(size.since()(lang))
    group += summary
    group += para(JUDGED(lang).format(value=size.judged.format(lang), k=size.runs), ["repro-reason"])
    cell += group
    return cell


JUDGED = Text("この {k} 回の実行での本ビルドの値: {value}", "ours {value} over those {k} runs")


def _pooled_cell(shown: store.Shown, v: Verdict, lang: str) -> nodes.Node:
    """What a pooled verdict rests on ("3 runs (17 rounds)"), and each run's own verdict,
    collapsed."""
    pool = shown.pool
    if pool is None:  # a stale run, shown alone
        return nodes.paragraph(text=WORDS["alone"](lang))
    counted = pool.counted(v.finding.id)
    group = details(classes=["repro-runs"])
    line = details_summary()
    line += nodes.Text(WORDS["pooled_cell"](lang).format(k=v.runs, r=v.rounds))
    group += line
    items = nodes.bullet_list()
    for run in pool.runs:
        item = nodes.list_item()
        p = nodes.paragraph()
        p += nodes.Text(timestamp(run.doc["provenance"]["started"]) + ": ")
        if run in counted:
            p += badge(store.statuses(run)[v.finding.id], lang)
        else:
            p += nodes.Text(WORDS["before_revision"](lang))
        item += p
        items += item
    group += items
    return group


class FindingsDirective(ChapterDirective):
    """The compact findings table: the claim, the original's value, the checks (each pooled
    value with its interval, threshold and verdict, and what would decide it), the pooled
    verdict, and the runs it pools with each run's own verdict."""

    def build(self) -> list[nodes.Node]:
        shown = self.shown()
        if not has_findings_table(shown):
            return self.missing()
        lang, chapter = self.lang, self.chapter()
        rows: list[list[Any]] = []
        for v in shown.verdicts:
            f = v.finding
            ident = nodes.paragraph(text=f.id)
            ident += nodes.inline(text=" " + KIND[f.kind](lang), classes=["repro-kind", f.kind])
            claim = nodes.paragraph()
            claim += nodes.strong(text=f.claim(lang))
            if not f.expected:
                claim += expectation_note(chapter, f, lang)
            verdict = nodes.container()
            badge_line = nodes.paragraph()
            badge_line += verdict_badge(v, lang)
            verdict += badge_line
            if shown.pool is None:
                verdict += revised_after_note(shown.run, f.id, lang)
            rows.append([ident, claim, _original_cell(f, lang), _checks_cell(v, lang), verdict,
                         _size_cell(shown, f.id, lang), _pooled_cell(shown, v, lang)])
        table = Table(Text("知見と判定", "Findings and verdicts"),
                      [WORDS[k] for k in ("finding", "claim", "original", "measured", "status", "size", "pooled")],
                      rows)
        ids = [note_finding_row(self.env, chapter.name, v.finding.id) for v in shown.verdicts]
        out = [*table_node(table, lang, row_ids=ids), judging_note(lang)]
        out[0]["classes"].append("repro-findings")
        if chapter.machine_bound and shown.pool is not None:
            model = pooling.machine(shown.run.doc) or "?"
            out.append(para(WORDS["machine_bound"](lang).format(model=model) + chapter.machine_bound(lang)
                            + _machine_spread(chapter.name, self.scale, lang), ["repro-table-note"]))
        if shown.pool is not None and shown.pool.left_out:
            out.append(_left_out(shown.pool, lang))
        out += apart_note(chapter, shown, lang)
        block = revisions_block(chapter, lang)
        targets(block, self.state.document)
        return out + block


def _machine_spread(name: str, scale: str, lang: str) -> str:
    """How far apart the stored runs on different CPU models are, in the findings where that
    is beyond the between-run floor (noise.between_machines): what makes the chapter
    machine-bound, measured, not typed."""
    found = noise.between_machines(noise.series(name, scale))
    beyond = sorted(((a.rho, f) for f, a in found.items() if a.rho > BETWEEN_RUNS), reverse=True)
    if not beyond:
        return ""
    parts = Text.join([Text(f"{f} で {rho:.1f}", f"{rho:.1f} in {f}") for rho, f in beyond], "、", " and ")
    return WORDS["machine_spread"](lang).format(parts=parts(lang), floor=BETWEEN_RUNS)


def _left_out(pool: Any, lang: str) -> nodes.Node:
    """The result files a pool leaves out, named, collapsed."""
    group = details(classes=["repro-left-out"])
    line = details_summary()
    line += nodes.Text(WORDS["left_out"](lang).format(n=len(pool.left_out)))
    group += line
    items = nodes.bullet_list()
    for left in pool.left_out:
        item = nodes.list_item()
        p = nodes.paragraph()
        p += nodes.literal(text=left.path.name)
        p += nodes.Text(f": {left.why(lang)}")
        item += p
        items += item
    group += items
    return group


class RoundsDirective(ChapterDirective):
    """How many rounds each condition got, and the runner's log of each series of rounds:
    the rounds it added (for which undecided findings) and why it stopped."""

    def build_run(self, run: Run) -> list[nodes.Node]:
        lang = self.lang
        counts = {c: run.rounds.count(c) for c in run.rounds.conditions()}
        by_count: dict[int, list[str]] = {}
        for condition, n in counts.items():
            by_count.setdefault(n, []).append(condition)
        rows: list[list[Any]] = [[Number(n, "", 0), _identifiers(cs)] for n, cs in sorted(by_count.items())]
        logs = run.raw.get("rounds_log", [])
        table = Table(Text("条件ごとのラウンド数", "Rounds per condition"),
                      [Text("ラウンド", "Rounds"), Text("条件", "Conditions")], rows,
                      ROUNDS_NOTE if logs else None)
        out = table_node(table, lang, [12, 88])
        if logs:
            out.append(nodes.rubric(text=ROUNDS_LOG(lang)))
            items = nodes.bullet_list(classes=["repro-rounds-log"])
            for i, log in enumerate(logs):
                item = nodes.list_item()
                head = (SERIES(lang).format(i=i + 1, n=len(logs)) if len(logs) > 1 else "")
                item += nodes.paragraph(text=head + Text.join(
                    [*_added(log["extra"]), STOPPED[log["stopped"]]], "。", "; ")(lang) + Text("。", ".")(lang))
                items += item
            out.append(items)
        return out


def _identifiers(names: list[str]) -> nodes.paragraph:
    """Conditions by the names the results file gives them: identifiers (code), never prose
    to translate ("this major" on a Japanese page)."""
    cell = nodes.paragraph()
    for i, name in enumerate(names):
        cell += nodes.Text(", " if i else "")
        cell += nodes.literal(text=name)
    return cell


ROUNDS_NOTE = Text("条件は結果ファイルでの名前で示します。ラウンドは、すべての条件を 1 回ずつ測る単位です。最小のラウンド数より後のラウンドは、判定が決まらない知見が"
                   "読む条件だけを測ります (下の記録)。",
                   "Conditions go by their names in the results file. A round measures every condition once; rounds beyond the minimum measure only the conditions "
                   "that undecided findings read (see the log below).")


ROUNDS_LOG = Text("ラウンドの記録: 追加したラウンドと終了の理由", "Round log: the rounds added, and why the rounds stopped")


SERIES = Text("測定の組 {i} / {n}: ", "Series {i} of {n}: ")


def _added(extra: list[dict[str, Any]]) -> list[Text]:
    """The added rounds of one series, consecutive rounds that added the same runs for the
    same findings in one line ("rounds 6-8: 2 runs each added because F2 was undecided")."""
    groups: list[list[dict[str, Any]]] = []
    for e in extra:
        if groups and (e["findings"], e["runs"]) == (groups[-1][-1]["findings"], groups[-1][-1]["runs"]) \
                and e["round"] == groups[-1][-1]["round"] + 1:
            groups[-1].append(e)
        else:
            groups.append([e])
    out = []
    for g in groups:
        first, last, runs, found = g[0]["round"] + 1, g[-1]["round"] + 1, len(g[0]["runs"]), ", ".join(g[0]["findings"])
        which = Text(f"ラウンド {first}", f"round {first}") if first == last else \
            Text(f"ラウンド {first}〜{last}", f"rounds {first}–{last}")
        each = Text("", "") if first == last else Text("ずつ", " each")
        verb = "was" if len(g[0]["findings"]) == 1 else "were"
        out.append(Text(f"{which.ja}: {'、'.join(g[0]['findings'])} が未決定のため、実行を {runs} 回{each.ja}追加",
                        f"{which.en}: {runs} run{'s' if runs != 1 else ''}{each.en} added because {found} {verb} "
                        f"undecided"))
    return out


