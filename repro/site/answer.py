"""The front page's first screen (repro-answer): a one-line tally of the originals' claims on
the default major (reproduced, contradicted, changed, not judged here, inconclusive: the
verdicts' words, as every table, the matrix and the PDF say them), then the claims grouped
by their pooled verdict, what does not hold first. A claim that does not hold
where it was expected to is a refutation; one that cannot be judged on this machine, or was
registered as not holding here, is a limit of this experiment, and the two never share a
group. Each item names its chapter by its short name and links to the finding's row on the
chapter page; one that does not hold, or is not judged here, says why in a few words (and on
how many runs); a finding that a later major changes says so."""
from __future__ import annotations

from docutils import nodes

from .. import majors, registry
from ..chapter import Chapter
from ..text import Text
from ..verdict import CHANGED, CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE, ORIGINAL, PARTIAL, REPRODUCED, Verdict
from ..verdict_words import STATUS, badge_of
from . import store
from .expectations import expectation_note
from .nodes import Directive, doc_link, finding_link, has_findings_table, para
from .words import WORDS

NOT_HERE = "not here"  # not applicable here, or contradicted where it was not expected to hold
# the groups as the page lists them, what does not hold first; the tally counts them in TALLY's order
def _heading(status: str) -> Text:
    """A verdict's word, as the tables, the matrix and the PDF say it, as a heading."""
    word = STATUS[status]
    return Text(word.ja, word.en[:1].upper() + word.en[1:])


GROUPS = [
    (CONTRADICTED, _heading(CONTRADICTED)),
    (CHANGED, _heading(CHANGED)),
    (NOT_HERE, Text("ここでは判定しない", "Not judged here")),  # not applicable, or not expected here
    (INCONCLUSIVE, _heading(INCONCLUSIVE)),
    (PARTIAL, _heading(PARTIAL)),
    (REPRODUCED, _heading(REPRODUCED)),
]
TALLY = (REPRODUCED, PARTIAL, CONTRADICTED, CHANGED, NOT_HERE, INCONCLUSIVE)
NOT_HERE_MEANS = Text(
    "このマシンでは確かめられない主張 (要るものが足りない) と、ここでは成り立たないと登録した主張です。",
    "Claims this machine cannot check (it lacks what they need), and claims registered as not holding here.")
HOLDS_UNEXPECTED = Text("ここでは成り立たないと予想していたが、再現した", "reproduced, although not expected to hold here")
ON_RUNS = Text("{n} 回の実行", "{n} runs")
TALLY_HEAD = Text("原典の主張 {n} 件は PostgreSQL {major} でいまも成り立つか: ",
                  "Do the originals' {n} claims still hold on PostgreSQL {major}? ")
TALLY_COUNT = Text("{title} {n} 件", "{title}: {n}")
CHANGES_IN = Text("{major} で変わる", "changes in {major}")
NOT_EXPECTED_MEANS = Text(
    "ここで成り立たないと登録した主張は、原典と違うこの実験の組み立て (1 台のマシンにすべてのサーバーを載せるなど) "
    "のためにそう登録したものです。原典への反証ではなく、`make test` も失敗しません。"
    "どれも、実行の前の予測か、実行の後の宣言か (その日付と、それまでの実行) を示します。",
    "A claim registered as not holding here was registered so because this experiment is set up differently "
    "from the original (all servers on one machine, for example): it does not refute the original, and "
    "`make test` does not fail on it. Each says whether that was predicted before any run or declared after "
    "runs, when, and after which runs.")


def later_change(name: str, fid: str, major: float, scale: str) -> float | None:
    """The first later major on which the finding is "changed" (None if none is)."""
    later = [m for m, s in store.majors(name, scale).items() if m > major and s.verdicts
             and next(v for v in s.verdicts if v.finding.id == fid).status == CHANGED]
    return min(later, default=None)


def group_id(status: str) -> str:
    """The anchor of a group of the answer ("answer-contradicted"), which the tally links to."""
    return "answer-" + status.replace(" ", "-")


def group_of(v: Verdict) -> str:
    """The answer's group of a claim: a refutation only where it was expected to hold."""
    if v.status == NOT_APPLICABLE or (v.status == CONTRADICTED and not v.finding.expected):
        return NOT_HERE
    return v.status if v.status in dict(GROUPS) else INCONCLUSIVE


def why_not(v: Verdict) -> Text:
    """Why a finding does not hold here, in a few words: what its declaration says for one
    not expected to hold, else the value that failed its threshold."""
    if v.finding.not_here is not None:
        return v.finding.not_here
    c = v.deciding
    def line(lang: str) -> str:
        return (f"{c.check.measure.label(lang)}: {c.number().format(lang)} "
                f"({WORDS['condition'](lang)} {c.check.threshold.text(c.check.measure)(lang)})")
    return Text(line("ja"), line("en"))


def finding_name(chapter: Chapter, fid: str, lang: str, linked: bool) -> nodes.Node:
    """"auto_explain F3", linked to the finding's row (to the chapter page where that has no
    findings table)."""
    text = f"{chapter.short(lang)} {fid}"
    return finding_link(text, chapter.name, fid) if linked else doc_link(text, f"chapters/{chapter.name}")


def notes_of(chapter: Chapter, v: Verdict, later: float | None) -> list[Text]:
    """What is said in brackets after an item: why a claim is only partly measured, what this
    machine lacks, a later major's change (that it was not expected to hold here follows them:
    expectations.expectation_note)."""
    notes = []
    if v.status == PARTIAL and v.reason is not None:
        notes.append(v.reason)
    if later is not None and v.status != CHANGED:
        notes.append(CHANGES_IN.format(major=majors.name(later)))
    return notes


class AnswerDirective(Directive):
    """Every claim of the originals on the site's major: the tally, then the claims grouped
    by their pooled verdict."""

    def build(self) -> list[nodes.Node]:
        items: dict[str, list[nodes.Node]] = {status: [] for status, _ in GROUPS}
        unexpected = False  # a claim that does not hold was not expected to
        for name, chapter in registry.chapters().items():
            self.depend_on(name)
            shown = store.current(name, self.site_major, self.scale)
            for v in shown.verdicts:
                if v.finding.kind == ORIGINAL:
                    later = later_change(name, v.finding.id, self.site_major, self.scale)
                    runs = v.runs or (len(shown.pool.runs) if shown.pool is not None else 1)  # not applicable: all
                    items[group_of(v)].append(self.item(chapter, v, has_findings_table(shown), later, runs))
                    unexpected |= v.status == CONTRADICTED and not v.finding.expected
        out: list[nodes.Node] = [self.tally({status: len(found) for status, found in items.items()})]
        for status, title in GROUPS:
            if not items[status]:
                continue
            box = nodes.container(classes=["repro-answer", status.replace(" ", "-")], ids=[group_id(status)])
            head = nodes.paragraph(classes=["repro-answer-head"])
            head += nodes.strong(text=f"{title(self.lang)} ({len(items[status])})")
            box += head
            listed = nodes.bullet_list()
            listed += items[status]
            box += listed
            if status == NOT_HERE:
                box += para(NOT_HERE_MEANS(self.lang) + (" " + NOT_EXPECTED_MEANS(self.lang) if unexpected else ""),
                            ["repro-reason"])
            out.append(box)
        return out

    def tally(self, counts: dict[str, int]) -> nodes.paragraph:
        """One line: how many claims each verdict has, each count linked to its group (a
        verdict with none too, so that "does not hold 0" is said; "holds for the kinds
        measured" only where some do)."""
        p = nodes.paragraph(classes=["repro-tally"])
        p += nodes.Text(TALLY_HEAD(self.lang).format(major=majors.name(self.site_major), n=sum(counts.values())))
        titles = dict(GROUPS)
        for i, status in enumerate(s for s in TALLY if counts[s] or s != PARTIAL):
            if i:
                p += nodes.Text(" ")
            count = nodes.inline(text=TALLY_COUNT(self.lang).format(title=titles[status](self.lang), n=counts[status]),
                                 classes=["repro-status", status.replace(" ", "-"), "repro-tally-count"])
            if counts[status]:  # to its group below
                count = nodes.reference("", "", count, refid=group_id(status), classes=["repro-tally-link"])
            p += count
        return p

    def item(self, chapter: Chapter, v: Verdict, linked: bool, later: float | None, runs: int) -> nodes.list_item:
        """A claim: its chapter and id, linked to its row. One that does not hold, or is not
        judged here, leads with why (and on how many runs), the claim on a line of its own
        under it. A claim registered as not holding here says when and after which runs, on
        every page that shows its verdict, this one too."""
        lang = self.lang
        item = nodes.list_item()
        p = nodes.paragraph()
        p += finding_name(chapter, v.finding.id, lang, linked)
        p += nodes.Text(": ")
        why = why_not(v) if v.status == CONTRADICTED else badge_of(v) if v.status == NOT_APPLICABLE else None
        p += nodes.strong(text=why(lang)) if why else nodes.Text(v.finding.claim(lang))
        notes = notes_of(chapter, v, later) + ([ON_RUNS.format(n=runs)] if why else [])
        if notes:
            p += nodes.inline(text=f" ({Text.join(notes, '、', '; ')(lang)})", classes=["repro-reason"])
        if not v.finding.expected:
            p += expectation_note(chapter, v.finding, lang, HOLDS_UNEXPECTED if v.status == REPRODUCED else None)
        item += p
        if why:
            item += nodes.paragraph(text=v.finding.claim(lang), classes=["repro-claim-line"])
        return item
