"""A chapter's result files and the verdicts of all of them as CSV (repro-download)."""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes

from .. import majors, registry, results
from ..chapter import Chapter, Run
from .nodes import ChapterDirective, para, timestamp
from .words import WORDS


class DownloadDirective(ChapterDirective):
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
                               f"{timestamp(doc['provenance']['started'])}", path, path.name)
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
