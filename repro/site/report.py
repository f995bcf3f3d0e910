"""The report's own pages: the front page's ledger, summary and environment, the version
matrix of every chapter, and the list of sources."""
from __future__ import annotations

import math
import re
from typing import Any

from docutils import nodes

from .. import majors, pooling, registry, sizes
from ..chapter import Chapter, Table
from ..text import Number, Text
from ..verdict import (CHANGED, CONTRADICTED, INCONCLUSIVE, KINDS, MECHANISM, NOT_APPLICABLE, ORIGINAL, PARTIAL,
                       REPORT, REPRODUCED, SANITY, Verdict)
from ..verdict_words import badge_of
from . import expectations, store
from .answer import CHANGES_IN, finding_name, later_change
from .nodes import (Directive, details, details_summary, doc_link, finding_anchor, finding_link, has_findings_table,
                    para, table_node, verdict_badge)
from .provenance import PROVENANCE, provenance_values
from .sources import Source, anchor, sources
from .words import STATUS, WORDS


class LedgerDirective(Directive):
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
            link += doc_link(chapter.short(lang), f"chapters/{name}")
            if shown.run is None:
                line += nodes.Text(f" — {WORDS['no_result'](lang)}")
                group += [line, link]
                out.append(group)
                continue
            mark = shown.why is not None
            counts: dict[str, int] = {}
            rows: list[list[Any]] = []
            linked = has_findings_table(shown)
            for v in shown.verdicts:
                cell = nodes.paragraph()
                cell += verdict_badge(v, lang, stale=mark)
                claim = nodes.paragraph(text=v.finding.claim(lang))
                if not v.finding.expected:
                    claim += expectations.expectation_note(chapter, v.finding, lang)
                ident = nodes.paragraph()
                ident += finding_link(v.finding.id, name, v.finding.id) if linked else nodes.Text(v.finding.id)
                rows.append([ident, claim, cell])
                counts[bucket(v)] = counts.get(bucket(v), 0) + 1
            line += nodes.Text(" — " + WORDS["ledger_counts"](lang).format(n=len(rows)))
            for i, status in enumerate(s for s in ORDER if counts.get(s)):
                line += nodes.Text("、" if lang == "ja" and i else ", " if i else " ")
                line += nodes.inline(text=f"{BUCKETS[status](lang)} {counts[status]}",
                                     classes=["repro-status", status.replace(" ", "-"), "repro-count"])
            if mark:
                line += nodes.Text(" (!)")
            table = table_node(Table(Text("", ""), [WORDS["finding"], WORDS["claim"], WORDS["status"]], rows),
                               lang, [8, 72, 20], [finding_anchor(name, v.finding.id) for v in shown.verdicts])[0]
            table.remove(table[0])  # the group's line names it: no caption, no number
            table["classes"].append("repro-ledger")
            group += [line, link, table]
            out.append(group)
            stale |= mark
        if stale:
            out.append(nodes.paragraph(text=WORDS["stale_mark"](lang)))
        return out


OTHER_MAJORS = "other_majors"  # not applicable because the finding is about other majors


ORDER = (REPRODUCED, PARTIAL, CONTRADICTED, CHANGED, pooling.DIFFERS, pooling.PARTLY, INCONCLUSIVE, NOT_APPLICABLE,
         OTHER_MAJORS, "missing")


# "does not hold" of a finding not expected to hold here, split into the counts' rows under it:
# predicted before any run, or declared after runs (or at a time the register does not say)
SPLIT = ("predicted", "declared after runs")


BUCKETS = {**STATUS, OTHER_MAJORS: Text("他のメジャーが対象", "applies to other majors"),
           pooling.DIFFERS: Text("メジャーで判定が分かれる", "decided differently by major"),
           pooling.PARTLY: Text("一部のメジャーで判定できず", "undecided on some majors"),
           "missing": WORDS["no_result"],
           SPLIT[0]: Text("うち、実行の前に成り立たないと予測", "of which predicted before any run"),
           SPLIT[1]: Text("うち、実行の後で成立を期待しないと宣言", "of which declared not expected after runs")}


def _split(shown: list[str]) -> list[str]:
    """The counts' rows: "contradicted" followed by its split."""
    return [x for s in shown for x in ((s, *SPLIT) if s == CONTRADICTED else (s,))]


# the kinds as the counts' columns name them (short: four columns fit a phone)
KIND_SHORT = {ORIGINAL: Text("原典の主張", "original"), MECHANISM: Text("仕組み", "mechanism"),
              REPORT: Text("本報告の主張", "report"), SANITY: Text("健全性", "sanity")}


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


class SummaryDirective(Directive):
    """The front page's answer: per kind of finding, how many are reproduced, contradicted,
    changed in a later major, inconclusive or not testable here, on the site's major and
    across every major with a result; then the findings a later major changed."""

    def build(self) -> list[nodes.Node]:
        lang = self.lang
        here: dict[str, dict[str, int]] = {k: dict.fromkeys(ORDER + SPLIT, 0) for k in KINDS}
        over: dict[str, dict[str, int]] = {k: dict.fromkeys(ORDER + SPLIT, 0) for k in KINDS}
        changed: list[Listed] = []  # changed on the site's major
        later: list[Listed] = []  # holding here, changed on a later major
        stored = False
        for name, chapter in registry.chapters().items():
            self.depend_on(name)
            shown = store.current(name, self.site_major, self.scale)
            stored |= shown.run is not None and not shown.this_build
            now = {v.finding.id: v for v in shown.verdicts}
            by_major = {m: {v.finding.id: v for v in s.verdicts}
                        for m, s in store.majors(name, self.scale).items() if s.verdicts}
            for f in chapter.findings:
                for counts, status in ((here, bucket(now[f.id]) if f.id in now else "missing"),
                                       (over, across({m: vs[f.id] for m, vs in by_major.items()})
                                        if by_major else "missing")):
                    counts[f.kind][status] += 1
                    if status == CONTRADICTED and not f.expected:  # predicted, or declared after runs
                        counts[f.kind][SPLIT[0 if expectations.of(chapter, f).before_runs else 1]] += 1
                linked = has_findings_table(shown)
                if f.id in now and now[f.id].status == CHANGED:
                    changed.append((chapter, f.id, linked, Text(f"{f.claim.ja} — {now[f.id].reason.ja}",
                                                                f"{f.claim.en} — {now[f.id].reason.en}")))
                elif (major := later_change(name, f.id, self.site_major, self.scale)) is not None:
                    badge = badge_of(now[f.id]) if f.id in now else WORDS["no_result"]
                    later.append((chapter, f.id, linked,
                                  Text(f"{f.claim.ja} — {majors.name(self.site_major)} では「{badge.ja}」、"
                                       f"{CHANGES_IN.ja.format(major=majors.name(major))}",
                                       f"{f.claim.en} — {badge.en} on {majors.name(self.site_major)}; "
                                       f"{CHANGES_IN.en.format(major=majors.name(major))}")))
        out: list[nodes.Node] = []
        shown = [s for s in ORDER if any(counts[k][s] for counts in (here, over) for k in KINDS)
                 or s in (REPRODUCED, CONTRADICTED, CHANGED, INCONCLUSIVE)]  # a column of zeros says nothing
        tables = ((here, WORDS["summary_here"].format(major=majors.name(self.site_major))),
                  (over, WORDS["summary_over"]))
        for i, (counts, caption) in enumerate(tables):
            # a row per verdict, a column per kind of finding: narrow enough for a phone
            rows: list[list[Any]] = [[BUCKETS[s], *(Number(counts[k][s], "", 0) for k in KINDS)]
                                     for s in _split(shown)]
            rows.append([WORDS["total"], *(Number(sum(counts[k][s] for s in ORDER), "", 0) for k in KINDS)])
            last = i == len(tables) - 1  # the note explains both tables: once, after the last
            table = Table(caption, [WORDS["status"], *(KIND_SHORT[k] for k in KINDS)], rows,
                          WORDS["summary_note"] if last else None)
            built = table_node(table, lang)
            built[0]["classes"].append("repro-summary")
            out += built
        for heading, listed in ((WORDS["changed_list"].format(major=majors.name(self.site_major)), changed),
                                (WORDS["later_list"].format(major=majors.name(self.site_major)), later)):
            out.append(nodes.rubric(text=heading(lang)))
            items = nodes.bullet_list(classes=["repro-changed-list"])
            lines = [finding_line(*one, lang) for one in listed]
            for line in lines or [nodes.paragraph(text=WORDS["none_changed"](lang))]:
                item = nodes.list_item()
                item += line
                items += item
            out.append(items)
        out += _sizes(self.site_major, self.scale, lang)
        if stored:
            out.append(para(WORDS["summary_stored"](lang), ["repro-source"]))
        return out


Listed = tuple[Chapter, str, bool, Text]  # a finding in a list: its chapter, id, whether its row is there, words


def finding_line(chapter: Chapter, fid: str, linked: bool, text: Text, lang: str) -> nodes.paragraph:
    """"auto_explain F3: <text>", the name linked to the finding's row."""
    p = nodes.paragraph()
    p += finding_name(chapter, fid, lang, linked)
    p += nodes.Text(": " + text(lang))
    return p


LARGEST = 3  # the largest changes of size the front page names


def size_counts(major: float, scale: str) -> tuple[list[tuple[str, Any, Any]], dict[str, int]]:
    """The claims of the original with a size beside the original's on a major: (chapter,
    finding, size) for each comparable one, and how many are not comparable or have no run
    since their size was registered."""
    comparable, other = [], {sizes.NOT_COMPARABLE: 0, sizes.NO_RUN: 0}
    for name, chapter in registry.chapters().items():
        shown = store.current(name, major, scale)
        for f in chapter.findings:
            size = shown.pool.sizes.get(f.id) if shown.pool is not None and f.kind == ORIGINAL else None
            if size is None:
                continue
            if size.comparable:
                comparable.append((name, f, size))
            else:
                other[size.outcome] += 1
    return comparable, other


def _sizes(major: float, scale: str, lang: str) -> list[nodes.Node]:
    """How many comparable claims are the same size as the original's, and the largest changes."""
    comparable, other = size_counts(major, scale)
    same = sum(size.outcome == sizes.SAME for _, _, size in comparable)
    count = nodes.paragraph(classes=["repro-size-count"])
    values = {"major": majors.name(major), "same": same, "n": len(comparable),
              "apart": other[sizes.NOT_COMPARABLE], "waiting": other[sizes.NO_RUN]}
    for i, piece in enumerate(re.split(r"\{(\w+)\}", WORDS["sizes_count"](lang))):
        # the numbers in spans of their own: the site check reads them
        count += nodes.inline(text=str(values[piece]), classes=[f"repro-size-{piece}"]) if i % 2 else nodes.Text(piece)
    count += nodes.Text(" " + sizes.POINT(lang))
    out: list[nodes.Node] = [nodes.rubric(text=WORDS["sizes_head"](lang)), count]
    changes = sorted((c for c in comparable if c[2].outcome != sizes.SAME),
                     key=lambda c: -abs(math.log(abs(c[2].ratio))) if c[2].ratio else -math.inf)
    if changes:
        out.append(para(WORDS["sizes_largest"](lang)))
        items = nodes.bullet_list(classes=["repro-size-list"])
        for name, f, size in changes[:LARGEST]:
            item = nodes.list_item()
            words = Text(f"{f.claim.ja} — {sizes.MARK[size.outcome]} {size.text().ja}",
                         f"{f.claim.en} — {sizes.MARK[size.outcome]} {size.text().en}")
            item += finding_line(registry.get(name), f.id, True, words, lang)
            items += item
        out.append(items)
    return out


class EnvironmentDirective(Directive):
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


class SourcesDirective(Directive):
    """Every source publication, one entry each under its anchor (`source-004`), which every
    citation links to: who published it, its title and date, its public address or why it
    has none, what it measures and the chapters that reproduce it."""

    def build(self) -> list[nodes.Node]:
        for chapter in registry.chapters().values():
            self.env.note_dependency(str(chapter.package / "original.toml"))
        return [self._entry(source) for source in sources().values()]

    def _entry(self, source: Source) -> nodes.section:
        lang, entry = self.lang, source.entry
        name = anchor(source.id)
        section = nodes.section(ids=[name], names=[name], classes=["repro-source-entry"])
        self.state.document.note_explicit_target(section)
        title = entry["title"] + (f" ({entry['english']})" if entry.get("english") and lang == "en" else "")
        section += nodes.title(text=title)
        date = entry["date"] + (f" ({Text(**entry['date_note'])(lang)})" if entry.get("date_note") else "")
        chapters = nodes.paragraph()
        for i, chapter in enumerate(source.chapters):
            chapters += nodes.Text(("、" if lang == "ja" else ", ") if i else "")
            chapters += doc_link(registry.get(chapter).title(lang), f"chapters/{chapter}")
        fields = [(SOURCE_WORDS["by"], nodes.paragraph(text=Text(**entry["by"])(lang))),
                  (SOURCE_WORDS["date"], nodes.paragraph(text=date)),
                  (SOURCE_WORDS["address"], _address(entry, lang)),
                  (SOURCE_WORDS["subject"], nodes.paragraph(text=Text(**entry["subject"])(lang))),
                  (SOURCE_WORDS["cited_as"], nodes.paragraph(
                      text=SOURCE_WORDS["cited_as_value"](lang).format(short=source.short(lang), id=source.id))),
                  (SOURCE_WORDS["chapters"], chapters)]
        if entry.get("note"):
            fields.append((SOURCE_WORDS["note"], nodes.paragraph(text=Text(**entry["note"])(lang))))
        section += _field_list(fields, lang)
        return section


def _address(entry: dict[str, Any], lang: str) -> nodes.paragraph:
    """The publication's own address; where none was found, a sentence that says so, and the
    author's or publisher's site where the publication can be looked for."""
    if entry["url"]:
        cell = nodes.paragraph(classes=["repro-source-address"])
        cell += nodes.reference("", entry["url"], refuri=entry["url"])
        return cell
    cell = nodes.paragraph(text=Text(**entry["no_url"])(lang), classes=["repro-no-address"])
    if site := entry.get("site"):
        cell += nodes.Text(" ")
        cell += nodes.reference("", Text(site["ja"], site["en"])(lang), refuri=site["url"])
    return cell


def _field_list(fields: list[tuple[Text, nodes.Node]], lang: str) -> nodes.field_list:
    out = nodes.field_list()
    for label, body in fields:
        field = nodes.field()
        field += nodes.field_name(text=label(lang))
        field_body = nodes.field_body()
        field_body += body
        field += field_body
        out += field
    return out


SOURCE_WORDS = {
    "by": Text("著者・サイト", "Author or site"),
    "date": Text("日付", "Date"),
    "address": Text("アドレス", "Address"),
    "subject": Text("対象", "Subject"),
    "cited_as": Text("この報告での呼び方", "Cited here as"),
    "cited_as_value": Text("{short} (番号 {id}: 章のファイルのコメントはこの番号で呼びます)",
                           "{short} (number {id}, by which the comments in the chapters' files name it)"),
    "chapters": Text("章", "Chapters"),
    "note": Text("注", "Note"),
}
