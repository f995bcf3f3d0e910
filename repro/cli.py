"""python -m repro list | run NAME | check NAME | build | archive | register NAME | new NAME | readme | clean"""
from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any

from . import registry, results
from .chapter import SCALES, Run
from .errors import ChapterStopped, ReproError
from .verdict import CHANGED, NOT_APPLICABLE, STATUSES

DEFAULT_MAJOR = 17


def _majors(text: str) -> list[float]:
    from .lab.engine import parse_major
    return [parse_major(part) for part in text.split(",") if part.strip()]


def _major(m: float) -> str:
    return "9.6" if m == 9.6 else str(int(m))


def print_verdicts(doc: dict[str, Any]) -> int:
    """One line per finding with its values and intervals; return how many expected findings
    were contradicted."""
    chapter = registry.get(doc["chapter"])
    prov = doc["provenance"]
    version = prov["servers"][0]["version"].split(" on ")[0] if prov["servers"] else \
        f"PostgreSQL {_major(doc['major'])}"
    print(f"{doc['chapter']}: scale {doc['scale']}, {version}, "
          f"run {prov['started']} in {prov['duration_s']:.0f} s")
    if "unavailable" in doc:
        print(f"  not applicable: {doc['unavailable']['en']}")
        return 0
    run = Run(chapter, doc)
    width = max(len(s) for s in STATUSES)
    for v in run.verdicts:
        flag = "" if v.finding.expected else " (not expected to hold here)"
        status = v.status.upper() if v.status not in (CHANGED, NOT_APPLICABLE) else v.badge().en.upper()
        print(f"  {v.finding.id} {status:{width}} [{v.finding.kind}] {v.finding.claim.en}{flag}")
        for c in v.checks:
            holds_if = c.check.threshold.text(c.check.measure).en
            print(f"     {c.check.measure.label.en}: {c.number().format('en')}  "
                  f"(holds if {holds_if}: {c.status})")
        if v.reason:
            print(f"     why: {v.reason.en}")
    rounds = run.rounds
    counts = sorted({rounds.count(c) for c in rounds.conditions()})
    logs = [log["stopped"] for log in doc["raw"].get("rounds_log", [])]
    print(f"  rounds per condition: {', '.join(map(str, counts))} ({'; '.join(logs)})")
    return sum(v.failed for v in run.verdicts)


def _load(name: str, major: float, scale: str) -> dict[str, Any]:
    try:
        doc = results.load(results.path_for(name, major, scale), name)
    except results.CorruptResult as exc:
        raise ReproError(f"the result file is corrupt ({exc}); run `python -m repro run "
                         f"{name}` to replace it") from exc
    if doc is None:
        raise ReproError(f"no result for {name} on PostgreSQL {_major(major)} at {scale} scale "
                         f"yet; run `python -m repro run {name} --pg {_major(major)} --scale {scale}`")
    return doc


def cmd_list(args: argparse.Namespace) -> int:
    """Each chapter, and its newest result per major and scale with its run time."""
    from .site import store
    for name, chapter in registry.chapters().items():
        newest: dict[tuple, dict[str, Any]] = {}
        for doc in sorted(results.everything(name), key=lambda d: d["provenance"]["started"]):
            newest[(doc["major"], doc["scale"])] = doc
        found = [f"pg{_major(m)}-{s} {d['provenance']['duration_s']:.0f} s"
                 + ("" if d["key"]["experiment"] == store.experiment_hash(name, s) else " (stale)")
                 for (m, s), d in sorted(newest.items())]
        print(f"{name:16} {chapter.title.en}  [{', '.join(found) or 'no result'}]")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from .lab import runner
    chapter = registry.get(args.name)
    for major in _majors(args.pg):
        doc, reused = runner.run(chapter, args.scale, major, args.dsn, args.force, wait=args.wait)
        if reused:
            print(f"{chapter.name}: reusing the cached result (same experiment, scale and image); "
                  f"--force runs it again")
        print(f"result: {results.path_for(chapter.name, doc['major'], args.scale)}")
        print_verdicts(doc)
    return 0  # `check` judges; a run that finished is a success


def _scale(scale: str) -> str:
    if scale not in SCALES:
        raise ReproError(f"unknown scale {scale!r}; scales: {', '.join(SCALES)}")
    return scale


def cmd_check(args: argparse.Namespace) -> int:
    chapter = registry.get(args.name)
    _scale(args.scale)
    failed = 0
    if args.json:
        runs = [Run(chapter, _load(args.name, major, args.scale)) for major in _majors(args.pg)]
        print(json.dumps([{"chapter": chapter.name, "major": run.major, "scale": run.doc["scale"],
                           "started": run.doc["provenance"]["started"],
                           "verdicts": [v.as_dict() for v in run.verdicts]} for run in runs],
                         ensure_ascii=False, indent=1))
        failed = sum(v.failed for run in runs for v in run.verdicts)
        return 1 if failed else 0
    for major in _majors(args.pg):
        failed += print_verdicts(_load(args.name, major, args.scale))
    if failed:
        print(f"{failed} expected finding(s) contradicted", file=sys.stderr)
    return 1 if failed else 0


def cmd_build(args: argparse.Namespace) -> int:
    """Bring every chapter's result up to date (used by `make html`)."""
    from .lab import runner
    chosen = [registry.get(n) for n in args.only.split(",")] if args.only else \
        list(registry.chapters().values())
    todo = [(c, m) for m in _majors(args.pg) for c in chosen if not runner.is_cached(c, args.scale, m)]
    if todo:
        total = sum(runner.expected_s(c, args.scale) for c, _ in todo)
        print(f"{len(todo)} chapter run(s) to make at {args.scale} scale, about {total / 60:.0f} min "
              f"(from earlier runs' durations; a chapter stops once its findings are decided): "
              + ", ".join(f"{c.name} on {_major(m)}" for c, m in todo), flush=True)
    stopped: list[ChapterStopped] = []
    for major in _majors(args.pg):
        for chapter in chosen:
            try:
                doc, reused = runner.run(chapter, args.scale, major, wait=args.wait)
            except ChapterStopped as exc:  # one chapter's failure does not cost the others' runs
                print(f"{exc.detail()}error: {exc}", file=sys.stderr, flush=True)
                stopped.append(exc)
                continue
            print(f"{chapter.name} on PostgreSQL {_major(major)}: "
                  f"{'cached' if reused else 'ran'} ({doc['provenance']['duration_s']:.0f} s)")
    if stopped:
        print(f"error: {len(stopped)} run(s) stopped: " + "; ".join(map(str, stopped)), file=sys.stderr)
        return 1
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    """Keep this build's fresh results in the repository's history (results/)."""
    kept = 0
    for name in registry.chapters():
        chapter = registry.get(name)
        for path in sorted(results.build_dir().glob(f"{name}/pg*.json")):
            doc = results.load(path, name)
            if doc["key"]["experiment"] != chapter.experiment_hash(doc["scale"]):
                print(f"skipped {path.name} of {name}: measured by an older experiment")
                continue
            print(f"kept {results.archive(doc).relative_to(results.ROOT)}")
            kept += 1
    print(f"{kept} result(s) kept in results/")
    return 0


def cmd_register(args: argparse.Namespace) -> int:
    """Record a revision for each finding of the chapter whose claim, thresholds,
    requirements, kind or expected flag changed (repro/claims.py)."""
    from . import claims
    chapter = registry.get(args.name)
    changed = claims.register(chapter, args.why or "", why_ja=args.why_ja)
    print(f"{chapter.name}: " + (f"registered {', '.join(changed)}" if changed else "the register is current"))
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from . import scaffold
    for path in scaffold.create(args.name):
        print(f"created {path}")
    return 0


def cmd_names(args: argparse.Namespace) -> int:
    """The chapters' names as a JSON list (a CI matrix's axis)."""
    print(json.dumps(sorted(registry.chapters())))
    return 0


def cmd_readme(args: argparse.Namespace) -> int:
    from .readme import update_readme
    changed = update_readme(results.ROOT)
    print("README.md: chapter list updated" if changed else "README.md: chapter list is current")
    return 0


def cmd_clean(args: argparse.Namespace) -> int:
    """Remove what killed runs left; refuse while a run holds the engine (it owns its own)."""
    from .lab import engine
    from .lab.runlock import engine_lock
    from .lab.servers import leftovers
    with engine_lock("repro clean", refusal="its containers are its own: clean again once it "
                                            "has ended"):
        ids = leftovers()
        c = engine.client()
        for ident in ids:
            try:
                c.containers.get(ident).remove(force=True, v=True)
            except Exception:
                c.networks.get(ident).remove()
            print(f"removed {ident[:12]}")
    print(f"{len(ids)} leftover(s) removed")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m repro", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="chapters and their results").set_defaults(fn=cmd_list)
    for name, fn, text in (("run", cmd_run, "run a chapter (reusing a fresh cached result)"),
                           ("check", cmd_check, "judge the stored result again; exit 1 if an "
                                                "expected finding is contradicted"),
                           ("build", cmd_build, "bring every chapter's result up to date")):
        s = sub.add_parser(name, help=text)
        if name != "build":
            s.add_argument("name")
        if name == "check":
            s.add_argument("--json", action="store_true", help="print the verdicts as JSON")
        if name != "check":
            s.add_argument("--wait", action="store_true",
                           help="wait for a run going on this Docker engine instead of refusing")
        if name == "build":
            s.add_argument("--only", metavar="CHAPTERS", help="these chapters, comma-separated")
        if name == "run":
            s.add_argument("--dsn", help="run against an existing server (chapters that allow it)")
            s.add_argument("--force", action="store_true", help="run even if a fresh result exists")
        s.add_argument("--scale", default="default", help=f"one of {', '.join(SCALES)}")
        s.add_argument("--pg", default=str(DEFAULT_MAJOR), metavar="MAJORS",
                       help=f"PostgreSQL majors, comma-separated (default {DEFAULT_MAJOR})")
        s.set_defaults(fn=fn)
    sub.add_parser("archive", help="keep this build's results in results/ (the history)"
                   ).set_defaults(fn=cmd_archive)
    s = sub.add_parser("register", help="record revisions of a chapter's changed claims")
    s.add_argument("name")
    s.add_argument("--why", help="why the claims changed (required when some did)")
    s.add_argument("--why-ja", help="the same reason in Japanese, for the Japanese page")
    s.set_defaults(fn=cmd_register)
    s = sub.add_parser("new", help="scaffold a new chapter (package, page, catalogue, test)")
    s.add_argument("name")
    s.set_defaults(fn=cmd_new)
    sub.add_parser("readme", help="regenerate the README's chapter list").set_defaults(fn=cmd_readme)
    sub.add_parser("names", help="the chapters' names, as JSON").set_defaults(fn=cmd_names)
    sub.add_parser("clean", help="remove containers/networks a killed run left").set_defaults(fn=cmd_clean)
    return p


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C must clean up even when started in the background, where SIGINT is ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except ReproError as exc:
        print(f"{exc.detail()}error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; every container of this run was removed", file=sys.stderr)
        return 130
