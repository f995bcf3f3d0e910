"""python -m repro list | run NAME | check NAME | build | new NAME | clean"""
from __future__ import annotations

import argparse
import signal
import sys

from . import engine, registry, results, runner
from .chapter import NOT_REPRODUCED, SCALES
from .errors import ReproError
from .text import Number


def print_findings(doc: dict, findings: list[dict]) -> int:
    """Print one line per finding; return how many expected findings failed."""
    prov = doc["provenance"]
    version = prov["servers"][0]["version"].split(" on ")[0] if prov["servers"] else "?"
    print(f"{doc['chapter']}: scale {doc['scale']}, {version}, "
          f"run {prov['started']} in {prov['duration_s']:.0f} s")
    failed = 0
    for f in findings:
        measured = ", ".join(f"{m['label']['en']} {_fmt(m)}" for m in f["measured"])
        flag = "" if f["expected"] else " (not expected to hold here)"
        print(f"  {f['id']} {f['status'].upper():15} {f['claim']['en']}{flag}")
        print(f"     measured: {measured}; holds if: {f['condition']['en']}")
        if f.get("reason"):
            print(f"     why: {f['reason']['en']}")
        failed += f["expected"] and f["status"] == NOT_REPRODUCED
    return failed


def _fmt(measured: dict) -> str:
    return Number(**{k: v for k, v in measured.items() if k != "label"}).format("en")


def cmd_list(args: argparse.Namespace) -> int:
    for name, chapter in registry.chapters().items():
        try:
            doc = results.load(name)
        except results.CorruptResult:
            doc = None
        state = "no result"
        if doc:
            fresh = doc["key"]["module"] == runner.module_hash(chapter)
            state = f"result at {doc['scale']} scale" + ("" if fresh else " (stale: code changed)")
        print(f"{name:16} {chapter.title.en}  [{state}]")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    chapter = registry.get(args.name)
    doc, reused = runner.run(chapter, args.scale, args.pg, args.dsn, args.force)
    if reused:
        print(f"{chapter.name}: reusing the cached result (same code, scale and image); "
              f"--force runs it again")
    print(f"result: {results.path_for(chapter.name)}")
    print_findings(doc, doc["findings"])
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    chapter = registry.get(args.name)
    try:
        doc = results.load(chapter.name)
    except results.CorruptResult as exc:
        raise ReproError(f"the result file is corrupt ({exc}); run `python -m repro run "
                         f"{chapter.name}` to replace it") from exc
    if doc is None:
        raise ReproError(f"no result for {chapter.name} yet; run `python -m repro run {chapter.name}`")
    failed = print_findings(doc, chapter.evaluate(doc["summary"]))
    if failed:
        print(f"{failed} expected finding(s) did not hold", file=sys.stderr)
    return 1 if failed else 0


def cmd_build(args: argparse.Namespace) -> int:
    """Bring every chapter's result up to date (used by `make html`)."""
    for chapter in registry.chapters().values():
        doc, reused = runner.run(chapter, args.scale, args.pg)
        print(f"{chapter.name}: {'cached' if reused else 'ran'} "
              f"({doc['provenance']['duration_s']:.0f} s)")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    from . import scaffold
    for path in scaffold.create(args.name):
        print(f"created {path}")
    return 0


def cmd_clean(args: argparse.Namespace) -> int:
    from .lab import leftovers
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
    sub.add_parser("list", help="chapters and the state of their results").set_defaults(fn=cmd_list)
    for name, fn, text in (("run", cmd_run, "run a chapter (reusing a fresh cached result)"),
                           ("build", cmd_build, "bring every chapter's result up to date")):
        s = sub.add_parser(name, help=text)
        if name == "run":
            s.add_argument("name")
            s.add_argument("--dsn", help="run against an existing server (chapters that allow it)")
            s.add_argument("--force", action="store_true", help="run even if a fresh result exists")
        s.add_argument("--scale", default="default", help=f"one of {', '.join(SCALES)}")
        s.add_argument("--pg", type=int, default=engine.DEFAULT_MAJOR, metavar="MAJOR",
                       help=f"PostgreSQL major (default {engine.DEFAULT_MAJOR})")
        s.set_defaults(fn=fn)
    s = sub.add_parser("check", help="re-evaluate the findings of the last result")
    s.add_argument("name")
    s.set_defaults(fn=cmd_check)
    s = sub.add_parser("new", help="scaffold a new chapter (module, page, test, catalogue)")
    s.add_argument("name")
    s.set_defaults(fn=cmd_new)
    sub.add_parser("clean", help="remove containers/networks a killed run left").set_defaults(fn=cmd_clean)
    return p


def main(argv: list[str] | None = None) -> int:
    # Ctrl-C must clean up even when started in the background, where SIGINT is ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except ReproError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; every container of this run was removed", file=sys.stderr)
        return 130
