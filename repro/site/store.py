"""The results the site shows, found and judged once per build.

For each chapter: this build's result (or a stored one) at the site's major and
scale, and the newest result on every other major (the version matrix), each with the
pool of runs of the current experiment it belongs to (repro/pooling.py): the verdicts
shown are the pooled ones, each run's own verdict beside them. Runs' own verdicts are
cached on disk, keyed by the run and by the judging code, so a warm build does not judge
every stored run again.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

from .. import claims, pooling, registry, results
from ..chapter import HASHED, Run
from ..verdict import Verdict

PACKAGE = Path(__file__).resolve().parent.parent
JUDGE_CODE = ("chapter.py", "stats.py", "text.py", "verdict.py")


@dataclass(frozen=True)
class Shown:
    """A chapter's result as a page shows it: the run, why it is not fresh (None if it is),
    and whether it is this build's run or a stored one (results/, RESULTS)."""

    run: Run | None
    why: str | None  # None | "missing" | "corrupt" | "code_changed" | "scale_changed"
    this_build: bool = False

    @property
    def pool(self) -> pooling.Pool | None:
        """The pool the run belongs to: None for a run of another experiment or scale."""
        return self.run.pool if self.run is not None else None

    @property
    def verdicts(self) -> list[Verdict]:
        """Pooled over the runs that count, when the run is of the current experiment; the
        run's own otherwise (a stale result, shown alone under its banner)."""
        if self.run is None or "unavailable" in self.run.doc:
            return []
        return self.pool.verdicts if self.pool is not None else self.run.verdicts


def built_from_stored() -> bool:
    """`make html REPRO=cached`: this build ran nothing, so a result left in the build
    directory by an earlier build is a stored run like any other, not "this build's"."""
    return os.environ.get("REPRO") == "cached"


@cache
def experiment_hash(name: str, scale: str, target: str = "container") -> str:
    return registry.get(name).experiment_hash(scale, target)


@cache
def watched(name: str) -> list[Path]:
    """What a page built from a chapter's results must be re-read after: each result file,
    and each folder that holds them (a folder's time changes when a run is added or removed,
    which no file's does), or the results folder where the chapter has none yet."""
    paths: list[Path] = []
    for d in (results.build_dir(), *results.stored_dirs()):
        folder = d / name
        if folder.is_dir():
            paths += [folder, *sorted(p for p in folder.rglob("*") if p.is_dir()),
                      *sorted(folder.rglob("*.json"))]
        elif d.is_dir():
            paths.append(d)
    return paths


@cache
def _files(name: str) -> list[tuple[Path, dict]]:
    return results.files(name)


@cache
def pooled(name: str, major: float, scale: str) -> pooling.Pool:
    return pooling.gather(registry.get(name), major, scale, found=_files(name))


@cache
def _runs(name: str) -> list[Run]:
    """Every result of the chapter; a run of its current experiment is its pool's object."""
    chapter = registry.get(name)
    found = []
    for _, doc in _files(name):
        pool = pooled(name, doc["major"], doc["scale"]) if doc["key"]["target"] == "container" else None
        same = [r for r in pool.runs if r.doc["provenance"]["started"] == doc["provenance"]["started"]] if pool else []
        found.append(same[0] if same else Run(chapter, doc))
    return sorted(found, key=lambda r: r.doc["provenance"]["started"])


def current(name: str, major: float, scale: str) -> Shown:
    """What a page shows: this build's result at the major and scale, fresh if it was
    measured by the current experiment; else the newest stored one, marked why."""
    try:
        doc = results.load(results.path_for(name, major, scale), name)
    except results.CorruptResult:
        return Shown(None, "corrupt")
    runs = [r for r in _runs(name) if r.major == major]
    if doc is not None:
        run = next(r for r in runs if r.doc["provenance"]["started"] == doc["provenance"]["started"])
    else:
        same_scale = [r for r in runs if r.doc["scale"] == scale]
        run = (same_scale or runs or [None])[-1]
    if run is None:
        return Shown(None, "missing")
    mine = doc is not None and not built_from_stored()
    if run.doc["key"]["experiment"] != experiment_hash(name, run.doc["scale"], run.doc["key"]["target"]):
        return Shown(run, "code_changed", mine)
    if run.doc["scale"] != scale:
        return Shown(run, "scale_changed", mine)
    return Shown(run, None, mine)


def majors(name: str, scale: str) -> dict[float, Shown]:
    """The newest result of the chapter on every major that has one (the matrix's row)."""
    found = sorted({r.major for r in _runs(name)})
    return {m: current(name, m, scale) for m in found}


@cache
def judge_hash(name: str) -> str:
    """What decides a verdict but not a measurement: the chapter's other files and the judge."""
    chapter = registry.get(name)
    files = [p for p in sorted(chapter.package.rglob("*.py")) + sorted(chapter.package.glob("*.toml"))
             if p.relative_to(chapter.package).parts[0] not in HASHED]
    return results.source_hash(files + [PACKAGE / f for f in JUDGE_CODE])


def statuses(run: Run) -> dict[str, str]:
    """Each finding's status on a run, from the disk cache when the judge has not changed."""
    name = run.chapter.name
    ident = hashlib.sha256(json.dumps([run.doc["key"], run.doc["provenance"]["started"],
                                       run.major, judge_hash(name)]).encode()).hexdigest()[:20]
    path = results.build_dir().parent / "verdicts" / name / f"{ident}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):  # missing, or half-written by a build that died: judge again
        pass
    found = {v.finding.id: v.status for v in run.verdicts}
    results.write_atomically(path, json.dumps(found))
    return found


def revised_after(run: Run, fid: str) -> str | None:
    """The date of the finding's latest revision if it came after the run started: the run
    is judged by a claim fixed after it, so it never counts for that claim."""
    since = claims.counted_since(run.chapter, fid)
    if since is not None and _time(since) > _time(run.doc["provenance"]["started"]):
        return since
    return None


def _time(iso: str) -> datetime:
    return datetime.fromisoformat(iso)

