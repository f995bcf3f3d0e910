"""Downloads: a chapter's result files and the verdicts of all of them as CSV
(repro-download); on the entry pages, the whole matrix as CSV and JSON (the fields of
`repro matrix --json`) and one archive of every result file (repro-downloads)."""
from __future__ import annotations

import csv
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes

from .. import majors, pooling, registry, results
from ..chapter import Chapter, Run
from ..verdict_words import badge_of
from . import store
from .nodes import ChapterDirective, Directive, para, timestamp
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
        out = [download_link(self.env, WORDS["download_csv"](lang), table)]
        items = nodes.bullet_list(classes=["repro-downloads"])
        for path, doc in found:
            item = nodes.list_item()
            item += download_link(self.env, f"PostgreSQL {majors.name(doc['major'])}, {doc['scale']}, "
                                            f"{timestamp(doc['provenance']['started'])}", path, path.name)
            items += item
        out += [para(WORDS["download"](lang)), items]
        return out


def download_link(env: Any, text: str, path: Path, code: str | None = None) -> nodes.paragraph:
    """A paragraph with a link that Sphinx copies `path` for (`code`: the file name shown)."""
    docdir = Path(env.srcdir) / os.path.dirname(env.docname)
    ref = addnodes.download_reference("", "", refdoc=env.docname, refexplicit=True,
                                      reftarget=os.path.relpath(path, docdir))
    ref += nodes.literal(text=code) if code else nodes.inline(text=text)
    p = nodes.paragraph()
    if code:
        p += nodes.Text(text + ": ")
    p += ref
    return p


MATRIX_FIELDS = ("chapter", "finding", "kind", "major", "status", "badge", "runs", "rounds", "check", "unit",
                 "value", "low", "high", "holds_if", "expected", "expected_since", "expected_before_runs", "to_decide",
                 *pooling.SIZE_FIELDS)


class EverythingDirective(Directive):
    """The whole matrix (every finding's pooled verdict on every major) as CSV and JSON, and
    one archive of every result file, for the front page and the matrix page."""

    def build(self) -> list[nodes.Node]:
        lang = self.lang
        rows, files = [], []
        for name in registry.chapters():
            self.depend_on(name)
            for major in store.majors(name, self.scale):
                pool = store.pooled(name, major, self.scale)
                rows += [pooling.row(pool, v) for v in pool.verdicts]
            files += [path for path, _ in results.files(name)]
        folder = results.build_dir().parent / "downloads"
        as_json = folder / "matrix.json"
        results.write_atomically(as_json, json.dumps(rows, ensure_ascii=False, indent=1))
        text = io.StringIO()
        writer = csv.DictWriter(text, MATRIX_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
        as_csv = folder / "matrix.csv"
        results.write_atomically(as_csv, text.getvalue())
        archive = folder / "results.zip"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(set(files)):
                z.write(path, f"{path.parent.name}/{path.name}")
        results.write_atomically(archive, buffer.getvalue())
        items = nodes.bullet_list(classes=["repro-downloads"])
        for label, path in ((WORDS["matrix_csv"], as_csv), (WORDS["matrix_json"], as_json),
                            (WORDS["results_zip"].format(n=len(set(files))), archive)):
            item = nodes.list_item()
            item += download_link(self.env, label(lang), path)
            items += item
        return [items]


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
            head = where + [v.finding.id, v.finding.kind, v.finding.expected, v.status, badge_of(v).en]
            for c in v.checks or [None]:
                if c is None:
                    writer.writerow(head + [""] * 6)
                    continue
                e = c.estimate
                writer.writerow(head + [c.check.measure.label.en, e.value, e.low, e.high,
                                        c.check.measure.unit, c.check.threshold.text(c.check.measure).en])
    results.write_atomically(path, out.getvalue())
    return path
