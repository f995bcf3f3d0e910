"""When a finding stopped being expected to hold here, as every page that says "not expected
to hold here" must say it: predicted before any run, or declared after runs (and whether
they had contradicted it), linked to the revision that set it (claims.expectation)."""
from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.util.texescape import escape as tex_escape

from .. import claims
from ..chapter import Chapter
from ..text import Text
from ..verdict import Finding
from .words import WORDS

PREDICTED, DECLARED_AFTER = "†", "‡"  # the matrix's marks of a finding not expected to hold here


def row_id(chapter: str, fid: str, index: int) -> str:
    """The HTML id of a revision's row in the chapter's revisions table (the same in both
    languages): the finding's revision `index` in registered.json."""
    return f"{chapter}-{fid.lower()}-rev-{index}"


def of(chapter: Chapter, f: Finding) -> claims.Expectation:
    return claims.expectation(claims.load(chapter), f.id, f.expected)


def commit_named(after: str) -> Text:
    """" (commit abc1234)": the commit a sentence about runs that were not stored names."""
    found = re.search(r"\b[0-9a-f]{7,40}\b", after)
    return Text(f" (コミット {found.group(0)[:7]})", f" (commit {found.group(0)[:7]})") if found else Text("", "")


def runs(n: int) -> str:
    return f"{n} run{'s' if n != 1 else ''}"


def after_text(revision: dict) -> Text:
    """A revision's `after` (and how many of those runs had contradicted the finding), as the
    revisions table shows it."""
    after, k = revision.get("after"), revision.get("contradicted")
    if after is None:
        return Text("記録なし", "not recorded")
    if isinstance(after, str):
        commit = commit_named(after)
        return Text(f"保存されていない実行の後{commit.ja}", f"after runs that were not stored{commit.en}")
    if not after:
        return Text("実行の前", "before any run")
    if k:
        return Text(f"{len(after)} 回の実行 (うち {k} 回で成り立たず) の後",
                    f"after {runs(len(after))}, {k} of which contradicted it")
    return Text(f"{len(after)} 回の実行の後", f"after {runs(len(after))}")


def when(chapter: Chapter, f: Finding) -> Text | None:
    """"predicted on DATE, before any run" or "declared on DATE, after N runs contradicted
    it" (its variants); None when the register does not know when the flag was set."""
    e = of(chapter, f)
    if e.since is None:
        return None
    date = e.since[:10]
    if e.before_runs:
        return Text(f"{date} に、実行の前に予測", f"predicted on {date}, before any run")
    if isinstance(e.after, list) and e.unstored_contradicted:  # a run not stored, that its reason names
        n, k, u = len(e.after), e.contradicted or 0, e.unstored_contradicted
        return Text(f"{date} に、保存された {n} 回の実行 (うち {k} 回で成り立たず) と、保存されていない"
                    f" {u} 回の実行 (いずれも成り立たず) の後で宣言",
                    f"declared on {date}, after {runs(n)} stored ({k} of which contradicted it) "
                    f"and {runs(u)} not stored that contradicted it")
    if isinstance(e.after, list):
        n, k = len(e.after), e.contradicted
        if k is None:
            return Text(f"{date} に、{n} 回の実行の後で宣言 (そのうち成り立たなかった回数は登録簿に記録がありません)",
                        f"declared on {date}, after {runs(n)} (the register does not say how many contradicted it)")
        if k == n:
            return Text(f"{date} に、成り立たなかった {n} 回の実行の後で宣言",
                        f"declared on {date}, after {runs(n)} contradicted it")
        if k:
            return Text(f"{date} に、{n} 回の実行 (うち {k} 回で成り立たず) の後で宣言",
                        f"declared on {date}, after {runs(n)}, {k} of which contradicted it")
        return Text(f"{date} に、{n} 回の実行の後で宣言", f"declared on {date}, after {runs(n)}")
    if isinstance(e.after, str):
        commit = commit_named(e.after)
        return Text(f"{date} に、保存されていない実行の後で宣言{commit.ja}",
                    f"declared on {date}, after runs that were not stored{commit.en}")
    return Text(f"{date} に宣言 (それより前の実行は登録簿に記録がありません)",
                f"declared on {date} (the register does not say which runs came before)")


def expectation_note(chapter: Chapter, f: Finding, lang: str, label_text: Text | None = None) -> nodes.inline:
    """" (not expected to hold here: predicted on DATE, before any run)", the date part a
    link to the revision's row in the chapter's revisions table; `label_text` in place of
    "not expected to hold here" (one that holds all the same says so in words)."""
    note = nodes.inline(classes=["repro-expectation"])
    label = (label_text or WORDS["not_expected"])(lang).strip("()")
    said = when(chapter, f)
    if said is None:
        note += nodes.Text(f" ({label})")
        return note
    note += nodes.Text(f" ({label}: ")
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref",
                                reftarget=row_id(chapter.name, f.id, of(chapter, f).revision),
                                refexplicit=True, refwarn=True)
    ref += nodes.inline(text=said(lang))
    note += ref
    note += nodes.Text(")")
    return note


def mark_nodes(chapter: Chapter, f: Finding, lang: str) -> list[nodes.Node]:
    """A matrix cell's mark of a finding not expected to hold here (none for an expected one),
    saying when on hover and to screen readers."""
    found = mark(chapter, f)
    if found is None:
        return []
    symbol, words = found
    said = html.escape(words(lang), quote=True)
    return [nodes.raw("", f' <span class="repro-expect-mark" role="img" aria-label="{said}" title="{said}">'
                          f'{symbol}</span>', format="html"),
            nodes.raw("", " " + tex_escape(symbol), format="latex")]


def mark(chapter: Chapter, f: Finding) -> tuple[str, Text] | None:
    """The matrix's mark of a finding not expected to hold here, with what it says (None for
    an expected one): predicted before any run, or declared after runs (or at a time the
    register does not say)."""
    if f.expected:
        return None
    said = when(chapter, f)
    label = Text(WORDS["not_expected"].ja.strip("()"), WORDS["not_expected"].en.strip("()"))
    words = label if said is None else Text(f"{label.ja}: {said.ja}", f"{label.en}: {said.en}")
    return (PREDICTED if of(chapter, f).before_runs else DECLARED_AFTER), words
