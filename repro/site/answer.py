"""The front page's first screen (repro-answer): what holds on the default major, claim by
claim of the originals, grouped as holds / does not hold / changed since / undecided /
can't run here, each with its chapter's link; a finding that a later major changes says so
beside its verdict on this one."""
from __future__ import annotations

from docutils import nodes

from .. import majors, registry
from ..text import Text
from ..verdict import CHANGED, CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE, ORIGINAL, PARTIAL, REPRODUCED, Verdict
from . import store
from .expectations import expectation_note
from .nodes import Directive, doc_link

GROUPS = [
    (REPRODUCED, Text("成り立つ", "Holds")),
    (PARTIAL, Text("測った種類では成り立つ", "Holds for the kinds measured")),
    (CONTRADICTED, Text("成り立たない", "Does not hold")),
    (CHANGED, Text("その後のメジャーで変わった", "Changed since")),
    (INCONCLUSIVE, Text("まだ決まらない", "Undecided")),
    (NOT_APPLICABLE, Text("ここでは確かめられない", "Can't run here")),
]
CHANGES_IN = Text("{major} で変わる", "changes in {major}")


def later_change(name: str, fid: str, major: float, scale: str) -> float | None:
    """The first later major on which the finding is "changed" (None if none is)."""
    later = [m for m, s in store.majors(name, scale).items() if m > major and s.verdicts
             and next(v for v in s.verdicts if v.finding.id == fid).status == CHANGED]
    return min(later, default=None)


def group_of(v: Verdict) -> str:
    return v.status if v.status in dict(GROUPS) else INCONCLUSIVE


class AnswerDirective(Directive):
    """Every claim of the originals on the site's major, grouped by its pooled verdict."""

    def build(self) -> list[nodes.Node]:
        lang, major = self.lang, self.site_major
        lines: dict[str, list[nodes.Node]] = {status: [] for status, _ in GROUPS}
        for name, chapter in registry.chapters().items():
            self.depend_on(name)
            shown = store.current(name, major, self.scale)
            for v in shown.verdicts:
                if v.finding.kind != ORIGINAL:
                    continue
                item = nodes.list_item()
                p = nodes.paragraph()
                p += doc_link(f"{chapter.title(lang)} {v.finding.id}", f"chapters/{name}")
                p += nodes.Text(": " + v.finding.claim(lang))
                notes = []
                if v.status == PARTIAL and v.reason is not None:
                    notes.append(v.reason(lang))
                if v.status == NOT_APPLICABLE and v.lacking is not None:
                    notes.append(v.badge()(lang))
                changes = later_change(name, v.finding.id, major, self.scale)
                if changes is not None and v.status != CHANGED:
                    notes.append(CHANGES_IN(lang).format(major=majors.name(changes)))
                if notes:
                    p += nodes.inline(text=f" ({'、'.join(notes) if lang == 'ja' else '; '.join(notes)})",
                                      classes=["repro-reason"])
                if not v.finding.expected:
                    p += expectation_note(chapter, v.finding, lang)
                item += p
                lines[group_of(v)].append(item)
        out: list[nodes.Node] = []
        for status, title in GROUPS:
            if not lines[status]:
                continue
            box = nodes.container(classes=["repro-answer", status.replace(" ", "-")])
            head = nodes.paragraph(classes=["repro-answer-head"])
            head += nodes.strong(text=f"{title(lang)} ({len(lines[status])})")
            box += head
            items = nodes.bullet_list()
            items += lines[status]
            box += items
            out.append(box)
        return out
