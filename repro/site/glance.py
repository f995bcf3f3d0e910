"""A chapter page's answer under its findings table (repro-glance): on which majors a
verdict changes, as ranges from the results, and the one command that runs the chapter,
each linked to its section; and the findings table's note, which links to the one page on
how verdicts are judged."""
from __future__ import annotations

from docutils import nodes
from sphinx import addnodes

from .. import pooling
from ..text import Text
from ..verdict import NOT_APPLICABLE, Verdict
from . import store
from .nodes import ChapterDirective
from .words import WORDS

JUDGING = "judging"  # the page on how a verdict is judged (docs/judging.md)

ACROSS = Text("メジャーバージョンごとの判定 (結果のある {majors}): ", "Across majors (results on {majors}): ")
DIFFERS = Text("{fid} は {ranges}。", "{fid}: {ranges}. ")
OTHERS_SAME = Text("ほかの知見は、対象となるどのメジャーバージョンでも同じ判定です。",
                   "The other findings have the same verdict on every major they apply to.")
ALL_SAME = Text("どの知見も、対象となるどのメジャーバージョンでも同じ判定です。",
                "Every finding has the same verdict on every major it applies to.")
DETAILS = Text("(詳しくは「{link}」)", " (details: {link})")
RUN = Text("手元で実行する: ", "Run it yourself: ")
RUN_MORE = Text(" (「{link}」に、原典と同じ規模での実行のしかたもあります)", " ({link}, also at the original's size)")
FINDINGS_NOTE = Text("[ ] 内は 95% 信頼区間です。区間の求め方、実行のプール、原典との大きさの比べ方は「{link}」にあります。"
                     "「プールした実行」を開くと、各実行だけでの判定が見られます。",
                     "Brackets give the 95 % confidence interval. How intervals are made, how runs are pooled and "
                     "how a size compares with the original's: {link}. Open \"Runs pooled\" for each run's "
                     "own verdict.")


def _titled_link(reftype: str, target: str) -> addnodes.pending_xref:
    """A link whose text is its target's title in the page's language: a labelled section
    (reftype "ref") or a page ("doc")."""
    ref = addnodes.pending_xref("", refdomain="std", reftype=reftype, reftarget=target, refexplicit=False,
                                refwarn=True)
    ref += nodes.inline(text=target)
    return ref


def section_link(label: str) -> addnodes.pending_xref:
    """A link to a section of a chapter page ("auto_explain-run": each page labels these)."""
    return _titled_link("ref", label)


def judging_link() -> addnodes.pending_xref:
    return _titled_link("doc", f"/{JUDGING}")


def with_link(paragraph: nodes.paragraph, template: str, link: addnodes.pending_xref) -> nodes.paragraph:
    """The paragraph with the words of `template` added, the link where it says {link}."""
    before, after = template.split("{link}")
    paragraph += nodes.Text(before)
    paragraph += link
    paragraph += nodes.Text(after)
    return paragraph


def judging_note(lang: str) -> nodes.paragraph:
    """The findings table's note: what the brackets are, and where the method is explained
    (once, on the judging page, rather than under every table)."""
    return with_link(nodes.paragraph(classes=["repro-table-note"]), FINDINGS_NOTE(lang), judging_link())


def across_majors(name: str, scale: str) -> Text:
    """The findings whose verdict differs between the majors with a result, each as ranges of
    majors ("F6: reproduced on 9.6–13; changed in 14 on 14–18"), or that none does. A major
    the finding does not apply to (not applicable there) is no change: the matrix shows it."""
    verdicts: dict[float, dict[str, Verdict]] = {
        major: {v.finding.id: v for v in s.verdicts} for major, s in store.majors(name, scale).items() if s.verdicts}
    if len(verdicts) < 2:
        return WORDS["no_other_majors"]
    fids = list(next(iter(verdicts.values())))
    described = {fid: pooling.describe(by) for fid in fids
                 if pooling.differs(by := {m: vs[fid] for m, vs in verdicts.items()
                                           if fid in vs and vs[fid].status != NOT_APPLICABLE})}
    head = Text(ACROSS.ja.format(majors=pooling.span_text(sorted(verdicts), "、")),
                ACROSS.en.format(majors=pooling.span_text(sorted(verdicts))))
    if not described:
        return Text(head.ja + ALL_SAME.ja, head.en + ALL_SAME.en)
    rest = OTHERS_SAME if len(described) < len(fids) else Text("", "")
    return Text(head.ja + "".join(DIFFERS.ja.format(fid=f, ranges=d.ja) for f, d in described.items()) + rest.ja,
                (head.en + "".join(DIFFERS.en.format(fid=f, ranges=d.en) for f, d in described.items())
                 + rest.en).strip())


class GlanceDirective(ChapterDirective):
    """Under the findings table (whose note links to how verdicts are judged): what changes
    across majors, and the command that runs the chapter, each linked to its section."""

    def build(self) -> list[nodes.Node]:
        name, lang = self.arguments[0], self.lang
        self.depend_on(name)
        box = nodes.container(classes=["repro-glance"])
        changes = nodes.paragraph(text=across_majors(name, self.scale)(lang), classes=["repro-glance-majors"])
        box += with_link(changes, DETAILS(lang), section_link(f"{name}-majors"))
        run = nodes.paragraph(text=RUN(lang), classes=["repro-glance-run"])
        run += nodes.literal(text=f"make repro-{name}")
        box += with_link(run, RUN_MORE(lang), section_link(f"{name}-run"))
        return [box]
