"""Sphinx extension: puts the results on the pages.

Directives (MyST: ```{repro-findings} auto_explain```): repro-status, repro-findings,
repro-majors, repro-rounds, repro-table, repro-chart, repro-provenance, repro-download
on chapter pages; repro-ledger, repro-environment, repro-matrix, repro-sources on the
report's own pages; role {repro-num}`chapter:key` for inline numbers, {repro-source}`004` for a
source's number (linked to the list of sources). Every number
comes from a result file and is formatted per language, so translated text never
carries a number. This layer imports no part of the lab (docker, testcontainers,
psycopg): it reads results and judges them.
"""
from __future__ import annotations

import csv
import html
import io
import json
import os
import subprocess
import zlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective, SphinxRole

from .. import claims, majors, pooling, registry, results
from ..chapter import Chapter, Run, Table
from ..errors import ReproError
from ..text import Number, Text
from ..verdict import (CHANGED, CONTRADICTED, INCONCLUSIVE, KIND, KINDS, NOT_APPLICABLE, REPRODUCED,
                       CheckResult, Finding, Verdict)
from . import charts, store
from .search import SearchJapaneseBigrams
from .words import STATUS, WORDS


def _sealed(result: list[nodes.Node]) -> list[nodes.Node]:
    """Keep generated text (numbers, labels) out of the translation catalogue: both
    languages' labels come from the chapter package, so .po files never go stale."""
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


def _lang(env_or_app: Any) -> str:
    return env_or_app.config.language or "ja"


def doc_link(text: str, docname: str) -> addnodes.pending_xref:
    """A link to another page that every builder resolves (HTML and the PDF)."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{docname}",
                                refexplicit=True, refwarn=True)
    ref += nodes.inline(text=text)
    return ref


def badge(status: str, lang: str, stale: bool = False, label: Text | None = None) -> nodes.inline:
    """A verdict as a coloured label ("changed in 14", "not applicable: ≥ 3 CPUs"); "(!)"
    marks a result that is not fresh."""
    return nodes.inline(text=(label or STATUS[status])(lang) + (" (!)" if stale else ""),
                        classes=["repro-status", status.replace(" ", "-")])


def verdict_badge(v: Verdict, lang: str, stale: bool = False) -> nodes.inline:
    return badge(v.status, lang, stale, v.badge())


def source_text(shown: store.Shown) -> Text:
    """Where a result's numbers come from: this build's run, or a stored run with its date,
    machine, commit and whether the tree had uncommitted changes."""
    doc = shown.run.doc
    prov, host = doc["provenance"], doc["provenance"]["host"]
    major, when = majors.name(doc["major"]), _when(prov["started"])
    others = len(shown.pool.runs) - 1 if shown.pool is not None else 0
    pooled = Text(f"。区間のある推定値は、同じ実験の保存された {others} 回の実行とプールしています",
                  f"; estimates with an interval pool it with {others} stored run{'s' if others > 1 else ''} "
                  f"of the same experiment") if others else Text("", "")
    if shown.this_build:
        return Text(f"このビルドの実行 (PostgreSQL {major}、{when}、{doc['scale']} スケール){pooled.ja}",
                    f"this build's run (PostgreSQL {major}, {when}, {doc['scale']} scale){pooled.en}")
    git = prov.get("git") or {}
    commit = (git.get("commit") or "?")[:10]
    model, cpus = (host.get('cpu_model') or '?').split(' @')[0], host.get('engine_cpus')
    dirty = Text("、未コミットの変更あり", ", with uncommitted changes") if git.get("dirty") else Text("", "")
    return Text(f"保存された実行 (PostgreSQL {major}、{when}、{doc['scale']} スケール、CPU {cpus} 個 ({model})、"
                f"コミット {commit}{dirty.ja}){pooled.ja}",
                f"a stored run (PostgreSQL {major}, {when}, {doc['scale']} scale, {cpus} CPUs ({model}), "
                f"commit {commit}{dirty.en}){pooled.en}")


def source_para(shown: store.Shown, lang: str) -> nodes.paragraph:
    return para(WORDS["source"](lang) + source_text(shown)(lang), ["repro-source"])


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
        return nodes.paragraph(text=value.format(lang))
    return nodes.paragraph(text="—" if value is None else str(value))


def table_node(table: Table, lang: str, widths: list[int] | None = None) -> list[nodes.Node]:
    """A docutils table with a caption (numbered by numfig), and its note below."""
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
                entry += _cell(value, lang)
                tr += entry
            part += tr
    out: list[nodes.Node] = [node]
    if table.note:
        out.append(para(table.note(lang), ["repro-table-note"]))
    return out


class _Directive(SphinxDirective):
    @property
    def lang(self) -> str:
        return _lang(self.env)

    @property
    def site_major(self) -> float:
        return self.env.config.repro_major

    @property
    def scale(self) -> str:
        return self.env.config.repro_scale

    def depend_on(self, name: str) -> None:
        """Re-read the page when the chapter's results or its package (claims, thresholds,
        labels, tables) change."""
        for d in (results.build_dir(), *results.stored_dirs()):
            for path in sorted(d.glob(f"{name}/*.json")):
                self.env.note_dependency(str(path))
        for path in sorted(registry.get(name).package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                self.env.note_dependency(str(path))

    def run(self) -> list[nodes.Node]:
        try:
            return _sealed(self.build())
        except ReproError as exc:
            raise self.error(str(exc)) from exc

    def build(self) -> list[nodes.Node]:
        raise NotImplementedError


class _ChapterDirective(_Directive):
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


class StatusDirective(_ChapterDirective):
    """A banner: where the page's numbers come from, or a warning that they are not fresh."""

    def build(self) -> list[nodes.Node]:
        shown = self.shown()
        if shown.run is None:
            box = nodes.warning()
            box += para(WORDS["missing" if shown.why == "missing" else "corrupt"](self.lang))
            return [box]
        doc = shown.run.doc
        source = source_text(shown)(self.lang)
        if shown.why is None:
            box = nodes.note()
            box += para(WORDS["fresh"](self.lang).format(
                source=source, duration=f"{doc['provenance']['duration_s']:.0f}"))
        else:
            box = nodes.warning()
            reason = WORDS[shown.why](self.lang).format(scale=doc["scale"])
            box += para(WORDS["stale"](self.lang).format(why=reason, source=source))
        return [box]


def _checks_cell(v: Verdict, lang: str) -> nodes.Node:
    """Each check on a line: what was measured, its value and interval, its threshold, its
    own verdict, and, when undecided, what would decide it."""
    cell = nodes.container()
    for c in v.checks:
        line = nodes.paragraph(classes=["repro-check"])
        line += nodes.Text(f"{c.check.measure.label(lang)}: ")
        line += nodes.strong(text=c.number().format(lang))
        line += nodes.Text(f" ({WORDS['condition'](lang)} {c.check.threshold.text(c.check.measure)(lang)}) ")
        line += badge(c.status, lang)
        cell += line
        if c.to_decide():
            cell += para(c.to_decide()(lang), ["repro-reason", "repro-to-decide"])
    if v.reason:
        cell += para(v.reason(lang), ["repro-reason"])
    return cell


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
        p += nodes.Text(_when(run.doc["provenance"]["started"]) + ": ")
        if run in counted:
            p += badge(store.statuses(run)[v.finding.id], lang)
        else:
            p += nodes.Text(WORDS["before_revision"](lang))
        item += p
        items += item
    group += items
    return group


class FindingsDirective(_ChapterDirective):
    """The compact findings table: the claim, the original's value, the checks (each pooled
    value with its interval, threshold and verdict, and what would decide it), the pooled
    verdict, and the runs it pools with each run's own verdict."""

    def build(self) -> list[nodes.Node]:
        shown = self.shown()
        if shown.run is None or "unavailable" in shown.run.doc:
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
                claim += nodes.Text(" " + WORDS["not_expected"](lang))
            verdict = nodes.container()
            badge_line = nodes.paragraph()
            badge_line += verdict_badge(v, lang)
            verdict += badge_line
            if shown.pool is None:
                verdict += _revised_after(shown.run, f.id, lang)
            rows.append([ident, claim, f.original, _checks_cell(v, lang), verdict, _pooled_cell(shown, v, lang)])
        table = Table(Text("知見と判定", "Findings and verdicts"),
                      [WORDS[k] for k in ("finding", "claim", "original", "measured", "status", "pooled")],
                      rows, Text.join([WORDS["interval"], WORDS["pooled_note"]], "", " "))
        out = table_node(table, lang)
        out[0]["classes"].append("repro-findings")
        if shown.pool is not None and shown.pool.left_out:
            out.append(_left_out(shown.pool, lang))
        return out + _revisions(chapter, lang)


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


REVISED_FIELDS = {"claim": Text("内容", "claim"), "claim_ja": Text("内容 (和文)", "claim (Japanese text)"),
                  "holds_if": Text("判定条件", "holds if"), "requires": Text("要件", "requires"),
                  "expected": Text("成立の期待", "expected to hold"), "kind": WORDS["kind"],
                  "changed_in": Text("変えたメジャー", "changed in"),
                  "measure": Text("測り方 (そのコードの指紋)", "how it is measured (its code's fingerprint)")}
YES_NO = {True: Text("期待する", "yes"), False: Text("期待しない", "no")}


def _revision_value(key: str, value: Any, lang: str) -> str:
    if key == "expected" and isinstance(value, bool):
        return YES_NO[value](lang)
    if key == "kind" and value in KIND:
        return KIND[value](lang)
    return _plain(value)


def _revision_change(r: dict[str, Any], lang: str) -> str | None:
    """What a revision changed, in the page's language ("holds if: old → new; ..."); None
    when the Japanese page has no Japanese for it (a register from before why_ja)."""
    if lang == "ja" and r["new"] is not None:
        if r.get("new_ja") is None:
            return None
        old, new = r.get("old_ja") or {}, r["new_ja"]
        parts = []
        for k, v in new.items():
            before = old.get(k) if r.get("old_ja") else None
            if k == "claim" and before == v and "claim" in (r["old"] or {}):
                parts.append(f"{REVISED_FIELDS[k].ja}: 英文だけの修正 (和文は同じ)")
            else:
                parts.append(f"{REVISED_FIELDS[k].ja}: {_revision_value(k, before, lang)} → {_revision_value(k, v, lang)}")
        return "。".join(parts) or WORDS[r["what"]](lang)
    new = r["new"] or {}
    if set(new) == {"claim_ja"}:  # only the Japanese wording: the English page says so
        return Text("", "the claim's Japanese text (the English is unchanged)")(lang)
    return "; ".join(f"{REVISED_FIELDS.get(k, Text(k, k))(lang)}: "
                     f"{_revision_value(k, r['old'].get(k) if r['old'] else None, lang)} → {_revision_value(k, v, lang)}"
                     for k, v in new.items() if k != "claim_ja") or WORDS[r["what"]](lang)


def _revisions(chapter: Chapter, lang: str) -> list[nodes.Node]:
    """The register's revisions of this chapter's claims (first registrations aside), in the
    page's language; the English record stands in where a revision has no Japanese."""
    rows: list[list[Any]] = []
    first = None
    english = False  # some row of the Japanese page shows the English record
    for fid, entry in sorted(claims.load(chapter).items(), key=lambda kv: _finding_order(kv[0])):
        for r in entry.get("revisions", []):
            if r["what"] == "registered":
                first = min(first or r["date"], r["date"])
                continue
            change = _revision_change(r, lang)
            why = r.get("why_ja") if lang == "ja" else r["why"]
            if change is None or not why:
                english = True
                change, why = change or _revision_change(r, "en"), why or r["why"]
            rows.append([fid, r["date"][:10], change, why])
    out: list[nodes.Node] = []
    if first:
        out.append(para(WORDS["registered"](lang).format(date=first[:10]), ["repro-table-note"]))
    if rows:
        caption = Text("主張の改訂 (一部は英語の記録)" if english else "主張の改訂", "Revisions of the claims")
        table = Table(caption, [WORDS["finding"], Text("日付", "Date"), Text("変更 (旧 → 新)", "Change (old → new)"),
                                WORDS["why"]], rows)
        built = table_node(table, lang, [8, 12, 50, 30])
        built[0]["classes"].append("repro-revisions")
        out += built
    return out


def _finding_order(fid: str) -> tuple[int, str]:
    digits = "".join(ch for ch in fid if ch.isdigit())
    return (int(digits) if digits else 0, fid)


def _plain(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return " / ".join(map(str, value)) or "—"
    return str(value)


class MajorsDirective(_ChapterDirective):
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
        cell += _revised_after(shown.run, fid, lang)
    return cell


def _revised_after(run: Run, fid: str, lang: str) -> list[nodes.Node]:
    """A note on a verdict whose claim was revised after its run (the run never counts)."""
    revised = store.revised_after(run, fid)
    return [para(WORDS["revised_after"](lang).format(date=revised[:10]), ["repro-reason"])] if revised else []


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


class RoundsDirective(_ChapterDirective):
    """How many rounds each condition got, and the runner's log of each series of rounds:
    the rounds it added (for which undecided findings) and why it stopped."""

    def build_run(self, run: Run) -> list[nodes.Node]:
        lang = self.lang
        counts = {c: run.rounds.count(c) for c in run.rounds.conditions()}
        by_count: dict[int, list[str]] = {}
        for condition, n in counts.items():
            by_count.setdefault(n, []).append(condition)
        rows: list[list[Any]] = [[Number(n, "", 0), ", ".join(cs)] for n, cs in sorted(by_count.items())]
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


ROUNDS_NOTE = Text("ラウンドは、すべての条件を 1 回ずつ測る単位です。最小のラウンド数より後のラウンドは、判定が決まらない知見が"
                   "読む条件だけを測ります (下の記録)。",
                   "A round measures every condition once; rounds beyond the minimum measure only the conditions "
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
        out.append(Text(f"{which.ja}: {found} が未決定のため、{runs} 件{each.ja}の実行を追加",
                        f"{which.en}: {runs} run{'s' if runs != 1 else ''}{each.en} added because {found} {verb} "
                        f"undecided"))
    return out


STOPPED = {
    "minimum": Text("最小ラウンド数で終了", "stopped at the minimum rounds"),
    "decided": Text("すべての知見が決まったため終了", "stopped: every finding decided"),
    "max_rounds": Text("最大ラウンド数に達して終了", "stopped at the most rounds the scale allows"),
    "budget": Text("スケールの時間予算に達して終了", "stopped: the scale's time budget was spent"),
}


class _PieceDirective(_ChapterDirective):
    """A named piece of a chapter's page (`NAME ID`): a table or a chart, from the site's
    major, or from another one (`:major: 18`, named in the caption, "(!)" when the result is
    not of this build's experiment or scale) to set majors side by side."""

    required_arguments = 2
    optional_arguments = 0
    option_spec = {"name": directives.unchanged, "major": directives.unchanged}
    kind = ""  # "tables" or "charts": the Chapter attribute the ID is looked up in

    @property
    def piece_major(self) -> float:
        given = self.options.get("major")
        if given is None:
            return self.site_major
        try:
            return 9.6 if given.strip() == "9.6" else int(given)
        except ValueError:
            raise ReproError(f":major: takes a PostgreSQL major (9.6, 10, ... 18), not {given!r}") from None

    def shown(self) -> store.Shown:
        self.depend_on(self.arguments[0])
        return store.current(self.arguments[0], self.piece_major, self.scale)

    def builder(self) -> Callable[[Run], Any]:
        pieces = getattr(self.chapter(), self.kind)
        if self.arguments[1] not in pieces:
            raise ReproError(f"{self.arguments[0]} has no {self.kind[:-1]} {self.arguments[1]!r}; "
                             f"it has: {', '.join(pieces)}")
        build = pieces[self.arguments[1]]
        if "major" not in self.options:
            return build
        stale = self.shown().why is not None  # marked as in the matrix: not this build's code or scale
        prefix = f"PostgreSQL {majors.name(self.piece_major)}{' (!)' if stale else ''}: "

        def named(run: Run) -> Any:
            piece = build(run)
            title = piece.caption if self.kind == "tables" else piece.title
            retitled = Text(prefix + title.ja, prefix + title.en)
            return replace(piece, caption=retitled) if self.kind == "tables" else replace(piece, title=retitled)
        return named

    def missing(self) -> list[nodes.Node]:
        """A captioned, named stand-in, so references to the piece still resolve."""
        self.builder()  # an unknown id is an error also without a result
        caption = WORDS["no_result"](self.lang)
        if self.kind == "tables":
            node = table_node(Table(Text(caption, caption), [Text("—", "—")], []), self.lang)[0]
        else:
            node = nodes.figure(classes=["repro-chart", "repro-missing"])
            node += nodes.caption(text=caption)
        self.add_name(node)
        return [node]


class TableDirective(_PieceDirective):
    kind = "tables"

    def build_run(self, run: Run) -> list[nodes.Node]:
        table = self.builder()(run)
        out = table_node(table, self.lang)
        self.add_name(out[0])
        return out + ([source_para(self.shown(), self.lang)] if table.measured else [])


class ChartDirective(_PieceDirective):
    kind = "charts"

    @property
    def file_suffix(self) -> str:
        """The same chart from another major is another image: it must not overwrite this one."""
        return f"-pg{majors.name(self.piece_major)}" if "major" in self.options else ""

    def build_run(self, run: Run) -> list[nodes.Node]:
        name, chart_id = self.arguments
        chart = self.builder()(run)
        figure = nodes.figure(classes=["repro-chart"])
        builder = self.env.app.builder
        if builder.format == "html":
            # Drawn straight into the output (not an image node), so that the alt text,
            # which carries measured values, stays out of the translation catalogue.
            file = f"{name}-{chart_id}{self.file_suffix}.png"
            charts.render(chart, self.lang, Path(builder.outdir) / "_images" / "repro" / file)
            up = "../" * self.env.docname.count("/")
            alt = html.escape(charts.alt_text(chart, self.lang), quote=True)
            figure += nodes.raw("", f'<img src="{up}_images/repro/{file}" alt="{alt}" '
                                    f'width="1170" height="676">', format="html")
        elif builder.format == "latex":  # the PDF: an image of the chart drawn outside the source
            png = charts.render(chart, self.lang, Path(builder.outdir) / "charts" / f"{name}-{chart_id}{self.file_suffix}.png")
            figure += nodes.image(uri="/" + os.path.relpath(png, self.env.srcdir), width="100%")
        figure += nodes.caption(text=chart.title(self.lang))
        self.add_name(figure)
        return [figure, source_para(self.shown(), self.lang)]


TARGETS = {"container": Text("この実行が起動したコンテナー", "containers this run started"),
           "external server (DSN)": Text("既存のサーバー (DSN)", "an existing server (DSN)")}
PROVENANCE = [
    ("started", Text("開始時刻", "Started")),
    ("duration", Text("所要時間 [s]", "Duration [s]")),
    ("scale", Text("スケール", "Scale")),
    ("target", Text("対象", "Target")),
    ("version", Text("PostgreSQL", "PostgreSQL")),
    ("image", Text("イメージ (名前、ID、由来、使える機能)", "Image (name, id, origin, features)")),
    ("cpu", Text("CPU (エンジン側)", "CPU (engine side)")),
    ("memory", Text("メモリ [GiB]", "Memory [GiB]")),
    ("kernel", Text("カーネル、OS", "Kernel, OS")),
    ("storage", Text("ストレージドライバー", "Storage driver")),
    ("clocksource", Text("クロックソース", "Clock source")),
    ("docker", Text("Docker エンジン", "Docker engine")),
    ("code", Text("コード (git コミット、実験のハッシュ)", "Code (git commit, experiment hash)")),
    ("params", Text("スケールのパラメーター", "Scale parameters")),
]


def provenance_values(doc: dict[str, Any]) -> dict[str, Any]:
    prov, host = doc["provenance"], doc["provenance"]["host"]
    servers = prov["servers"]
    git = prov.get("git") or {}
    commit = (git.get("commit") or "—")[:12] + (" (+ changes)" if git.get("dirty") else "")
    return {
        "started": _when(prov["started"]), "duration": f"{prov['duration_s']:.0f}",
        "scale": doc["scale"], "target": TARGETS.get(prov["target"], Text(prov["target"], prov["target"])),
        "version": "; ".join(sorted({s["version"].split(" on ")[0] for s in servers})) or "—",
        "image": "; ".join(sorted({f"{s['image']['name']}, {s['image']['id'][7:19]}, "
                                   f"{s['image']['origin']}" + _features(s["image"])
                                   for s in servers if s["image"]})) or "—",
        "cpu": f"{host.get('engine_cpus')} ({host.get('cpu_model') or '—'})",
        "memory": str(host.get("memory_gib")), "kernel": f"{host.get('kernel')}, {host.get('os')}",
        "storage": str(host.get("storage_driver")), "clocksource": host.get("clocksource") or "—",
        "docker": f"{host.get('docker_version')} ({host.get('docker_host')})",
        "code": f"{commit}, {prov['experiment']}",
        "params": ", ".join(f"{k}={v}" for k, v in doc["scale_params"].items()),
    }


def _features(image: dict[str, Any]) -> str:
    """What worked in the image (results before 2026-11-25 did not record it)."""
    return f" ({', '.join(image['features']) or '—'})" if "features" in image else ""


ABSENT = Text(" (PostgreSQL {major} にない設定のため外したもの: {names})",
              " (left out, as PostgreSQL {major} does not have them: {names})")


class ProvenanceDirective(_ChapterDirective):
    """Where, when and with what the chapter's numbers were measured."""

    def build_run(self, run: Run) -> list[nodes.Node]:
        values = provenance_values(run.doc)
        rows: list[list[Any]] = [[label, values[key]] for key, label in PROVENANCE]
        for s in run.doc["provenance"]["servers"]:
            settings = ", ".join(f"{k}={v}" for k, v in s["settings"].items())
            if absent := ", ".join(s.get("absent_settings", [])):
                settings += ABSENT(self.lang).format(names=absent, major=majors.name(run.major))
            role = Text(**s["role"]) if isinstance(s["role"], dict) else Text(s["role"], s["role"])
            rows.append([Text(f"設定: {role.ja}", f"Settings: {role.en}"), settings])
        table = Table(Text("実行環境と来歴", "Provenance"), [Text("項目", "Item"), Text("値", "Value")],
                      rows)
        out = table_node(table, self.lang)
        out[0]["classes"].append("repro-provenance")
        return out


class DownloadDirective(_ChapterDirective):
    """Every result behind the chapter (all majors, all stored runs) as JSON, and the
    verdicts of all of them as one CSV table, to take away."""

    def build(self) -> list[nodes.Node]:
        name, lang = self.arguments[0], self.lang
        self.depend_on(name)
        found = sorted(results.files(name), key=lambda f: (f[1]["major"], f[1]["provenance"]["started"]))
        if not found:
            return [nodes.paragraph(text=WORDS["no_result"](lang))]
        table = verdicts_csv(registry.get(name), [doc for _, doc in found])
        out = [self._link(WORDS["download_csv"](lang), table)]
        items = nodes.bullet_list(classes=["repro-downloads"])
        for path, doc in found:
            item = nodes.list_item()
            item += self._link(f"PostgreSQL {majors.name(doc['major'])}, {doc['scale']}, "
                               f"{_when(doc['provenance']['started'])}", path, path.name)
            items += item
        out += [para(WORDS["download"](lang)), items]
        return out

    def _link(self, text: str, path: Path, code: str | None = None) -> nodes.paragraph:
        docdir = Path(self.env.srcdir) / os.path.dirname(self.env.docname)
        ref = addnodes.download_reference("", "", refdoc=self.env.docname, refexplicit=True,
                                          reftarget=os.path.relpath(path, docdir))
        ref += nodes.literal(text=code) if code else nodes.inline(text=text)
        p = nodes.paragraph()
        if code:
            p += nodes.Text(text + ": ")
        p += ref
        return p


def verdicts_csv(chapter: Chapter, docs: list[dict[str, Any]]) -> Path:
    """One row per run, finding and check: where and when, the verdict, the value, its
    interval and threshold. Written beside this build's results (the page links it)."""
    path = results.build_dir().parent / "downloads" / f"{chapter.name}-verdicts.csv"
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["chapter", "major", "scale", "started", "commit", "uncommitted_changes", "finding",
                     "kind", "expected", "status", "badge", "check", "value", "low", "high", "unit", "holds_if"])
    for doc in docs:
        run = Run(chapter, doc)
        git = doc["provenance"].get("git") or {}
        where = [chapter.name, majors.name(doc["major"]), doc["scale"], doc["provenance"]["started"],
                 git.get("commit") or "", git.get("dirty", "")]
        for v in run.verdicts if "unavailable" not in doc else []:
            head = where + [v.finding.id, v.finding.kind, v.finding.expected, v.status, v.badge().en]
            for c in v.checks or [None]:
                if c is None:
                    writer.writerow(head + [""] * 6)
                    continue
                e = c.estimate
                writer.writerow(head + [c.check.measure.label.en, e.value, e.low, e.high,
                                        c.check.measure.unit, c.check.threshold.text(c.check.measure).en])
    results.write_atomically(path, out.getvalue())
    return path


class details(nodes.General, nodes.Element):
    """A collapsible group (HTML <details>); other builders show its content as it is."""


class details_summary(nodes.TextElement):
    """The always visible line of a `details` (HTML <summary>); a bold line elsewhere."""


def _visit_details_html(self: Any, node: details) -> None:
    attributes = {"class": " ".join(node["classes"])}
    attributes |= {f"data-{k}": v for k, v in node.get("data", {}).items()}
    self.body.append("<details" + "".join(f' {k}="{html.escape(v, quote=True)}"' for k, v in attributes.items())
                     + ">\n")


def _depart_details_html(self: Any, node: details) -> None:
    self.body.append("</details>\n")


def _visit_summary_html(self: Any, node: details_summary) -> None:
    self.body.append("<summary>")


def _depart_summary_html(self: Any, node: details_summary) -> None:
    self.body.append("</summary>\n")


def _visit_summary_latex(self: Any, node: details_summary) -> None:
    self.body.append("\n\n\\noindent\\textbf{")


def _depart_summary_latex(self: Any, node: details_summary) -> None:
    self.body.append("}\n\n")


def _visit_plain(self: Any, node: nodes.Node) -> None:
    pass


def _depart_plain(self: Any, node: nodes.Node) -> None:
    pass


class LedgerDirective(_Directive):
    """Every chapter's findings and their verdicts, for the front page: one collapsible
    group per chapter, whose always visible line names the chapter and counts its verdicts."""

    def build(self) -> list[nodes.Node]:
        lang = self.lang
        out: list[nodes.Node] = []
        stale = False
        for name, chapter in registry.chapters().items():
            self.depend_on(name)
            shown = store.current(name, self.site_major, self.scale)
            group = details(classes=["repro-ledger-chapter"], data={"chapter": name})
            line = details_summary()
            line += nodes.strong(text=chapter.title(lang))
            link = nodes.paragraph()
            link += nodes.Text(WORDS["chapter_page"](lang))
            link += doc_link(chapter.title(lang), f"chapters/{name}")
            if shown.run is None:
                line += nodes.Text(f" — {WORDS['no_result'](lang)}")
                group += [line, link]
                out.append(group)
                continue
            mark = shown.why is not None
            counts: dict[str, int] = {}
            rows: list[list[Any]] = []
            for v in shown.verdicts:
                cell = nodes.paragraph()
                cell += verdict_badge(v, lang, stale=mark)
                rows.append([v.finding.id, v.finding.claim, cell])
                counts[bucket(v)] = counts.get(bucket(v), 0) + 1
            line += nodes.Text(" — " + WORDS["ledger_counts"](lang).format(n=len(rows)))
            for i, status in enumerate(s for s in ORDER if counts.get(s)):
                line += nodes.Text("、" if lang == "ja" and i else ", " if i else " ")
                line += nodes.inline(text=f"{BUCKETS[status](lang)} {counts[status]}",
                                     classes=["repro-status", status.replace(" ", "-"), "repro-count"])
            if mark:
                line += nodes.Text(" (!)")
            table = table_node(Table(Text("", ""), [WORDS["finding"], WORDS["claim"], WORDS["status"]], rows),
                               lang, [8, 72, 20])[0]
            table.remove(table[0])  # the group's line names it: no caption, no number
            table["classes"].append("repro-ledger")
            group += [line, link, table]
            out.append(group)
            stale |= mark
        if stale:
            out.append(nodes.paragraph(text=WORDS["stale_mark"](lang)))
        return out


OTHER_MAJORS = "other_majors"  # not applicable because the finding is about other majors
ORDER = (REPRODUCED, CONTRADICTED, CHANGED, pooling.DIFFERS, pooling.PARTLY, INCONCLUSIVE, NOT_APPLICABLE,
         OTHER_MAJORS, "missing")
BUCKETS = {**STATUS, OTHER_MAJORS: Text("他のメジャーが対象", "applies to other majors"),
           pooling.DIFFERS: Text("メジャーで判定が分かれる", "decided differently by major"),
           pooling.PARTLY: Text("一部のメジャーで判定できず", "undecided on some majors"),
           "missing": WORDS["no_result"]}


def bucket(v: Verdict) -> str:
    """The summary's column of a verdict: its status, but a finding scoped to other majors
    is not something this machine lacks."""
    return OTHER_MAJORS if v.status == NOT_APPLICABLE and v.other_majors else v.status


def across(by_major: dict[float, Verdict]) -> str:
    """A finding's column over the majors that have a result (pooling.across), a finding
    scoped to other majors apart."""
    status = pooling.across(by_major)
    if status == NOT_APPLICABLE and all(v.other_majors for v in by_major.values()):
        return OTHER_MAJORS
    return status


class SummaryDirective(_Directive):
    """The front page's answer: per kind of finding, how many are reproduced, contradicted,
    changed in a later major, inconclusive or not testable here, on the site's major and
    across every major with a result; then the findings a later major changed."""

    def build(self) -> list[nodes.Node]:
        lang = self.lang
        here: dict[str, dict[str, int]] = {k: dict.fromkeys(ORDER, 0) for k in KINDS}
        over: dict[str, dict[str, int]] = {k: dict.fromkeys(ORDER, 0) for k in KINDS}
        changed: list[Text] = []
        stored = False
        for name, chapter in registry.chapters().items():
            self.depend_on(name)
            shown = store.current(name, self.site_major, self.scale)
            stored |= shown.run is not None and not shown.this_build
            now = {v.finding.id: v for v in shown.verdicts}
            by_major = {m: {v.finding.id: v for v in s.verdicts}
                        for m, s in store.majors(name, self.scale).items() if s.verdicts}
            for f in chapter.findings:
                here[f.kind][bucket(now[f.id]) if f.id in now else "missing"] += 1
                over[f.kind][across({m: vs[f.id] for m, vs in by_major.items()}) if by_major else "missing"] += 1
                first = next((m for m, vs in sorted(by_major.items()) if vs[f.id].status == CHANGED), None)
                if first is not None:
                    v = by_major[first][f.id]
                    link = f"{chapter.title(lang)} {f.id}"
                    changed.append(Text(f"{link}: {f.claim.ja} — {v.reason.ja}",
                                        f"{link}: {f.claim.en} — {v.reason.en}"))
        out: list[nodes.Node] = []
        shown = [s for s in ORDER if any(counts[k][s] for counts in (here, over) for k in KINDS)
                 or s in (REPRODUCED, CONTRADICTED, CHANGED, INCONCLUSIVE)]  # a column of zeros says nothing
        tables = ((here, WORDS["summary_here"].format(major=majors.name(self.site_major))),
                  (over, WORDS["summary_over"]))
        for i, (counts, caption) in enumerate(tables):
            rows: list[list[Any]] = [[KIND[k], *(Number(counts[k][s], "", 0) for s in shown),
                                      Number(sum(counts[k].values()), "", 0)] for k in KINDS]
            last = i == len(tables) - 1  # the note explains both tables: once, after the last
            table = Table(caption, [WORDS["kind"], *(BUCKETS[s] for s in shown),
                                    WORDS["total"]], rows,
                          WORDS["summary_note"] if last else None)
            built = table_node(table, lang)
            built[0]["classes"].append("repro-summary")
            out += built
        out.append(nodes.rubric(text=WORDS["changed_list"](lang)))
        items = nodes.bullet_list()
        for text in changed or [WORDS["none_changed"]]:
            item = nodes.list_item()
            item += nodes.paragraph(text=text(lang))
            items += item
        out.append(items)
        if stored:
            out.append(para(WORDS["summary_stored"](lang), ["repro-source"]))
        return out


class MatrixDirective(_Directive):
    """The version matrix: for every chapter, its findings on every major with a result."""

    def build(self) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        for name in registry.chapters():
            self.depend_on(name)
            section_title = nodes.rubric(text=registry.get(name).title(self.lang))
            shown = store.majors(name, self.scale)
            out += [section_title, _majors_table(name, shown, self.lang), _differences(name, shown, self.lang)]
        return out


class EnvironmentDirective(_Directive):
    """The machine this build measured on, from the newest fresh result (front page)."""

    def build(self) -> list[nodes.Node]:
        fresh: list[store.Shown] = []
        for name in registry.chapters():
            self.depend_on(name)
            shown = store.current(name, self.site_major, self.scale)
            if shown.run is not None and shown.why is None:
                fresh.append(shown)
        if not fresh:
            return [nodes.paragraph(text=WORDS["no_result"](self.lang))]
        newest = max(fresh, key=lambda s: (s.this_build, s.run.doc["provenance"]["started"]))
        values = provenance_values(newest.run.doc)
        keys = ("cpu", "memory", "kernel", "storage", "clocksource", "docker")
        rows: list[list[Any]] = [[label, values[k]] for k, label in PROVENANCE if k in keys]
        caption = (Text("このビルドの実行環境", "This build's environment") if newest.this_build else
                   Text("保存された最新の実行の環境 (このビルドは章を実行していません)",
                        "The environment of the newest stored run (this build ran no chapter)"))
        table = Table(caption, [Text("項目", "Item"), Text("値", "Value")], rows)
        return table_node(table, self.lang, [25, 75])


class SourcesDirective(_Directive):
    """Every source publication, from the chapters' original.toml files, with the chapters
    that reproduce it."""

    def build(self) -> list[nodes.Node]:
        lang = self.lang
        sources: dict[str, tuple[dict[str, Any], list[str]]] = {}
        for name, chapter in registry.chapters().items():
            self.env.note_dependency(str(chapter.package / "original.toml"))
            for source in chapter.original.get("sources", []):
                sources.setdefault(source["id"], (source, []))[1].append(name)
        rows: list[list[Any]] = []
        for ident, (source, names) in sorted(sources.items()):  # by number
            title = nodes.paragraph()
            title += (nodes.reference("", source["title"], refuri=source["url"]) if source["url"]
                      else nodes.Text(source["title"]))
            if source.get("english"):
                title += nodes.Text(" (" + source["english"] + ")")
            if source.get("note"):
                title += nodes.Text(" (" + Text(**source["note"])(lang) + ")")
            chapters = nodes.paragraph()
            for i, name in enumerate(names):
                if i:
                    chapters += nodes.Text(", ")
                chapters += doc_link(name, f"chapters/{name}")
            date = source["date"] or "—"
            if source.get("date_inferred"):
                date = WORDS["inferred"].format(date=date)
            rows.append([ident, title, Text(**source["by"]), date, Text(**source["subject"]), chapters])
        table = Table(Text("原典", "Sources"), [SOURCE_NUMBER, Text("題名", "Title"), Text("著者・組織", "Author"),
                                                Text("日付", "Date"), Text("対象", "Subject"),
                                                WORDS["chapter"]], rows,
                      Text("章のページとその章のファイルのコメントは、原典をこの番号で呼びます。",
                           "Chapter pages, and the comments in the chapters' files, name a source by this number."))
        return table_node(table, lang, [7, 31, 17, 11, 22, 12])


SOURCE_NUMBER = Text("番号", "No.")


def source_ids() -> set[str]:
    return {s["id"] for c in registry.chapters().values() for s in c.original.get("sources", [])}


class SourceRole(SphinxRole):
    """{repro-source}`004`: a source's number in the list of sources, linked to that list."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        ident = self.text.strip()
        if ident not in source_ids():
            msg = self.inliner.reporter.error(f"no source {ident!r} in any original.toml "
                                              f"(known: {', '.join(sorted(source_ids()))})", line=self.lineno)
            return [], [msg]
        for chapter in registry.chapters().values():
            self.env.note_dependency(str(chapter.package / "original.toml"))
        return [doc_link(ident, "sources")], []


def run_numbers(chapter: Chapter, run: Run) -> dict[str, Number]:
    """The numbers a page may cite: the chapter's own, and the machine's CPU count (`cpus`)
    and the rounds the run's conditions got at least and at most (`rounds`, `max_rounds`)."""
    counts = [run.rounds.count(c) for c in run.rounds.conditions()]
    machine = {"cpus": Number(run.doc["provenance"]["host"].get("engine_cpus"), "", 0),
               "rounds": Number(min(counts, default=None), "", 0),
               "max_rounds": Number(max(counts, default=None), "", 0)}
    return machine | chapter.numbers(run)


class NumberRole(SphinxRole):
    """{repro-num}`chapter:key`: a measured number, formatted for the page's language."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        name, _, key = self.text.partition(":")
        chapter = registry.get(name)
        for path in sorted(results.build_dir().glob(f"{name}/*.json")):
            self.env.note_dependency(str(path))
        shown = store.current(name, self.config.repro_major, self.config.repro_scale)
        if shown.run is None or "unavailable" in shown.run.doc:
            return [nodes.inline(text="—")], []
        numbers = run_numbers(chapter, shown.run)
        if key not in numbers:
            msg = self.inliner.reporter.error(f"{name} has no number {key!r}", line=self.lineno)
            return [], [msg]
        return [nodes.inline(text=numbers[key].format(_lang(self.env)), classes=["repro-num"])], []


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


def search_messages(app: Sphinx) -> None:
    """The search page's plural messages from this project's catalogue (locale/LANG/sphinx.po)
    into the browser, after Sphinx's translations.js, which can carry them empty."""
    catalogs = [Path(app.srcdir, d, _lang(app), "LC_MESSAGES", "sphinx.po") for d in app.config.locale_dirs]
    plurals: dict[str, list[str]] = {}
    for catalog in filter(Path.exists, catalogs if app.builder.format == "html" else []):
        with catalog.open("rb") as f:
            plurals |= {m.id[0]: list(m.string) for m in read_po(f) if m.pluralizable and all(m.string)}
    if plurals:
        app.add_js_file(None, priority=600, body="".join(
            f"Documentation.TRANSLATIONS[{json.dumps(k)}] = {json.dumps(v)};" for k, v in plurals.items()))


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


def repository() -> str:
    """The repository's public address: REPRO_REPOSITORY, GitHub Actions' repository, or the
    clone's origin (empty when none is known)."""
    if url := os.environ.get("REPRO_REPOSITORY"):
        return url
    if os.environ.get("GITHUB_REPOSITORY"):
        return f"{os.environ.get('GITHUB_SERVER_URL', 'https://github.com')}/{os.environ['GITHUB_REPOSITORY']}"
    try:
        origin = subprocess.run(["git", "remote", "get-url", "origin"], cwd=results.ROOT,
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return origin if origin.startswith(("https://", "http://")) else ""


class RepositoryRole(SphinxRole):
    """{repro-repository}`text`: a link to the repository, or a note that no public address
    is recorded for this build."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        url = self.config.repro_repository
        if url:
            return [nodes.reference(self.rawtext, url, refuri=url)], []
        return [nodes.inline(text=WORDS["no_repository"](_lang(self.env)))], []


def code_version() -> int:
    """A number that changes with the shared code that renders the pages: Sphinx rereads
    every page when it changes (its cache knows nothing of the directives' code). A chapter's
    own package is a dependency of the pages that show it (depend_on)."""
    package = Path(results.ROOT, "repro")
    files = sorted([*package.glob("*.py"), *package.glob("site/*.py")])
    return zlib.crc32(b"".join(p.read_bytes() for p in files))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("repro_scale", os.environ.get("SCALE", "default"), "env")
    app.add_config_value("repro_major", majors.DEFAULT_MAJOR, "env")
    app.add_config_value("repro_repository", repository(), "env")
    for name, directive in (
            ("repro-status", StatusDirective), ("repro-findings", FindingsDirective),
            ("repro-majors", MajorsDirective), ("repro-rounds", RoundsDirective),
            ("repro-table", TableDirective), ("repro-chart", ChartDirective),
            ("repro-provenance", ProvenanceDirective), ("repro-download", DownloadDirective),
            ("repro-ledger", LedgerDirective), ("repro-matrix", MatrixDirective),
            ("repro-environment", EnvironmentDirective), ("repro-sources", SourcesDirective),
            ("repro-summary", SummaryDirective)):
        app.add_directive(name, directive)
    app.add_node(details, html=(_visit_details_html, _depart_details_html),
                 latex=(_visit_plain, _depart_plain), text=(_visit_plain, _depart_plain))
    app.add_node(details_summary, html=(_visit_summary_html, _depart_summary_html),
                 latex=(_visit_summary_latex, _depart_summary_latex), text=(_visit_plain, _depart_plain))
    app.add_role("repro-num", NumberRole())
    app.add_role("repro-repository", RepositoryRole())
    app.add_role("repro-source", SourceRole())
    app.add_search_language(SearchJapaneseBigrams)
    app.connect("builder-inited", search_messages)
    app.connect("build-finished", check_diagrams)
    app.connect("build-finished", write_sitemap)
    app.connect("html-page-context", describe_page)
    return {"version": "2", "env_version": code_version(), "parallel_read_safe": True,
            "parallel_write_safe": True}
