"""Where this build's own run and the stored runs of the same experiment differ by more
than their intervals allow (the test of `repro compare`: the interval of their ratio or
difference excludes none), said under the findings table with both values and both
machines: a pooled estimate hides a run that went another way, this note does not."""
from __future__ import annotations

from docutils import nodes

from .. import compare
from ..chapter import Chapter, Run
from ..errors import ReproError
from ..pooling import Pool
from ..text import Number, Text
from . import store
from .nodes import para

APART = Text("このビルドの実行は、保存された {n} 回の実行と、95% 信頼区間が許す以上に違います (`repro compare` と同じ検定): "
             "{items}。このビルドのマシン: {mine}。保存された実行のマシン: {theirs}。",
             "This build's run differs from the {n} stored runs by more than their 95 % intervals allow (the test "
             "of `repro compare`): {items}. This build's machine: {mine}; the stored runs': {theirs}.")
ITEM = Text("{fid} {label}: ここ {mine}、保存 {theirs}", "{fid} {label}: {mine} here, {theirs} stored")


def differing(chapter: Chapter, shown: store.Shown) -> tuple[list[tuple[str, Text, Number, Number]], Pool | None]:
    """The checks on which this build's run and the stored runs differ (finding, label, this
    run's value, the stored runs' value, both with intervals), and those stored runs; none
    for a stored run shown, or with no stored run of this experiment beside it."""
    if not shown.this_build or shown.run is None or shown.pool is None:
        return [], None
    doc = shown.run.doc
    try:
        stored = compare.published(chapter, doc)
    except ReproError:
        return [], None
    found = []
    for v, p in zip(Run(chapter, doc).verdicts, stored.verdicts):
        for a, b in zip(v.checks, p.checks):
            d = compare.difference(a.estimate, b.estimate)
            if d is not None and d["differ"]:
                found.append((v.finding.id, a.check.measure.label, a.number(), b.number()))
    return found, stored


def apart_note(chapter: Chapter, shown: store.Shown, lang: str) -> list[nodes.Node]:
    """The note, or nothing where the run and the stored runs agree."""
    found, stored = differing(chapter, shown)
    if not found or stored is None:
        return []
    items = ("、" if lang == "ja" else "; ").join(
        ITEM(lang).format(fid=fid, label=label(lang), mine=mine.format(lang), theirs=theirs.format(lang))
        for fid, label, mine, theirs in found)
    theirs = ", ".join(sorted({compare.machine(r.doc)["cpu"] for r in stored.runs}))
    text = APART(lang).format(n=len(stored.runs), items=items, mine=compare.machine(shown.run.doc)["cpu"],
                              theirs=theirs)
    return [para(text, ["repro-table-note", "repro-apart"])]
