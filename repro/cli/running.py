"""The commands that run chapters or keep their results: run, build, archive, clean."""
from __future__ import annotations

import argparse
import os
import re
import sys

from .. import majors, registry, results
from ..errors import ChapterStopped, ReproError
from .judging import print_verdicts
from .options import Commands, add_majors, add_scale


def _wait(p: argparse.ArgumentParser) -> None:
    p.add_argument("--wait", action="store_true", help="wait for a run going on this Docker engine instead of refusing")


def add_run(sub: Commands) -> None:
    s = sub.add_parser("run", help="run a chapter (reusing a fresh cached result)")
    s.add_argument("name")
    _wait(s)
    s.add_argument("--dsn", help="run against an existing server (README: what each chapter judges there)")
    s.add_argument("--server-cpus", type=int, metavar="N",
                   help="with --dsn: the server's CPU count, which the run cannot see "
                        "(findings that compare with it are judged only when it is given)")
    s.add_argument("--client", choices=("docker", "local"),
                   help="with --dsn: run pgbench and psql in a helper container, or this machine's "
                        "(PG_BINDIR or PATH; the default when no Docker engine answers)")
    s.add_argument("--server", choices=("container", "local"), default="container",
                   help="where the run's servers run: containers of the Docker engine, or clusters "
                        "of this machine's PostgreSQL binaries (PG_BINDIR_<major>, PG_BINDIR, Debian's, "
                        "make binaries')")
    s.add_argument("--force", action="store_true", help="run even if a fresh result exists")
    s.add_argument("--one-round", action="store_true",
                   help="one round, no more (a chapter's fixed repetitions, such as windows_linux's fsync "
                        "test, stay), on the chapter's smaller data where it names one (scales.toml's "
                        "[one_round]): a quick check that the chapter runs here, under a key of its own "
                        "(it never answers for, or pools with, the scale's runs)")
    add_scale(s)
    add_majors(s)
    s.set_defaults(fn=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from ..lab import runner
    chapter = registry.get(args.name)
    for major in args.pg:
        doc, reused = runner.run(chapter, args.scale, major, args.dsn, args.force, wait=args.wait,
                                 server_cpus=args.server_cpus, client=args.client, server=args.server,
                                 one_round=args.one_round)
        if reused:
            print(f"{chapter.name}: reusing the cached result (same experiment, scale and image); "
                  f"--force runs it again")
        print(f"result: {results.path_for(chapter.name, doc['major'], args.scale, doc['key']['target'])}")
        print_verdicts(doc)
    return 0  # `check` judges; a run that finished is a success


def add_build(sub: Commands) -> None:
    s = sub.add_parser("build", help="bring every chapter's result up to date")
    _wait(s)
    s.add_argument("--only", metavar="CHAPTERS", help="these chapters, comma-separated")
    s.add_argument("--runs", type=int, default=0, metavar="N",
                   help="make N new runs of each (rotating chapters and majors) and keep each in results/")
    add_scale(s)
    add_majors(s)
    s.set_defaults(fn=cmd_build)


def cmd_build(args: argparse.Namespace) -> int:
    """Bring every chapter's result up to date (used by `make html`); with --runs N, make N
    new runs of each on each major and keep every one in results/ (the stored history that
    the verdicts pool), one run at a time."""
    from ..lab import runner
    chosen = [registry.get(n) for n in args.only.split(",")] if args.only else \
        list(registry.chapters().values())
    if args.runs < 0:
        raise ReproError("--runs takes a number of runs, 1 or more")
    todo = [(c, m) for m in args.pg for c in chosen
            for _ in range(args.runs or (0 if runner.is_cached(c, args.scale, m) else 1))]
    if todo:
        total = sum(runner.expected_s(c, args.scale) for c, _ in todo)
        print(f"{len(todo)} chapter run(s) to make at {args.scale} scale, about {total / 60:.0f} min "
              f"(from earlier runs' durations; a chapter stops once its findings are decided): "
              + ", ".join(f"{c.name} on {majors.name(m)}" for c, m in todo), flush=True)
    stopped: list[ChapterStopped] = []
    for i in range(max(args.runs, 1)):
        for major in args.pg:
            for chapter in chosen:
                try:
                    doc, reused = runner.run(chapter, args.scale, major, force=args.runs > 0, wait=args.wait)
                except ChapterStopped as exc:  # one chapter's failure does not cost the others' runs
                    print(f"{exc.detail()}error: {exc}", file=sys.stderr, flush=True)
                    stopped.append(exc)
                    continue
                kept = f"; kept {results.archive(doc).relative_to(results.ROOT)}" if args.runs else ""
                _stage(f"run {chapter.name} on {majors.name(major)}{' (cached)' if reused else ''}",
                       0 if reused else doc["provenance"]["duration_s"])
                print(f"{chapter.name} on PostgreSQL {majors.name(major)}: "
                      f"{'cached' if reused else 'ran'} ({doc['provenance']['duration_s']:.0f} s){kept}", flush=True)
    if stopped:
        print(f"error: {len(stopped)} run(s) stopped: " + "; ".join(map(str, stopped)), file=sys.stderr)
        return 1
    return 0


def _stage(name: str, seconds: float) -> None:
    """A chapter run's time in the build's stages file (scripts/stage.sh), when there is one."""
    if path := os.environ.get("REPRO_STAGES"):
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{name}\t{int(seconds)}\t0\n")


MACHINE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")


def add_archive(sub: Commands) -> None:
    s = sub.add_parser("archive", help="keep this build's results in results/ (the history)")
    s.add_argument("--machine", help="keep them as a contributed run of this machine (results/NAME/MACHINE/)")
    s.set_defaults(fn=cmd_archive)


def cmd_archive(args: argparse.Namespace) -> int:
    """Keep this build's fresh results in the repository's history (results/): the project's
    machine's, or with --machine a contributed run under results/NAME/MACHINE/ (a run against
    an existing server only so)."""
    if args.machine is not None and not MACHINE_NAME.fullmatch(args.machine):
        raise ReproError(f"--machine takes a short name of lowercase letters, digits and dashes, "
                         f"not {args.machine!r}")
    kept = 0
    for name in registry.chapters():
        chapter = registry.get(name)
        for path in sorted(results.build_dir().glob(f"{name}/pg*.json")):
            doc = results.load(path, name)
            if doc["key"]["experiment"] != chapter.experiment_hash(doc["scale"], doc["key"]["target"]):
                print(f"skipped {path.name} of {name}: measured by an older experiment")
                continue
            if doc["key"]["target"] != "container" and args.machine is None:
                print(f"skipped {path.name} of {name}: a run against an existing server or on local clusters "
                      f"is kept with --machine NAME")
                continue
            print(f"kept {results.archive(doc, args.machine).relative_to(results.ROOT)}")
            kept += 1
    print(f"{kept} result(s) kept in results/")
    return 0


def add_clean(sub: Commands) -> None:
    sub.add_parser("clean", help="remove the containers, networks and local clusters a killed run left"
                   ).set_defaults(fn=cmd_clean)


def cmd_clean(args: argparse.Namespace) -> int:
    """Remove what killed runs left; refuse while a run holds the engine (it owns its own).
    Local clusters first, which need no engine: those whose run's pid runs no more."""
    from ..lab import local_cleanup
    from ..lab.harness import images
    from ..lab.runlock import engine_lock
    from ..lab.harness.containers import leftovers
    for directory in local_cleanup.clean():
        print(f"stopped and removed the local clusters of {directory}")
    try:
        images.client()
    except ReproError:
        print("no Docker engine answers: no containers to remove")
        return 0
    with engine_lock("repro clean", refusal="its containers are its own: clean again once it "
                                            "has ended"):
        ids = leftovers()
        c = images.client()
        for ident in ids:
            try:
                c.containers.get(ident).remove(force=True, v=True)
            except Exception:
                c.networks.get(ident).remove()
            print(f"removed {ident[:12]}")
    print(f"{len(ids)} leftover(s) removed")
    return 0
