"""python -m repro list | run NAME | check NAME | matrix | compare NAME | noise | build | archive | register NAME | new NAME | readme | clean"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
from typing import Any

from . import majors, pooling, registry, results, scales
from .chapter import Run
from .errors import ChapterStopped, ReproError
from .verdict import CHANGED, NOT_APPLICABLE, STATUSES, STOPPED

def print_verdicts(doc: dict[str, Any]) -> int:
    """The run's chapter on its major: one line per finding with its pooled verdict (this run
    and the stored runs that count for it), its values and intervals, this run's own verdict
    where it differs, and what would decide an undecided check; return how many expected
    findings the pooled verdicts contradict."""
    chapter = registry.get(doc["chapter"])
    prov = doc["provenance"]
    version = prov["servers"][0]["version"].split(" on ")[0] if prov["servers"] else \
        f"PostgreSQL {majors.name(doc['major'])}"
    print(f"{doc['chapter']}: scale {doc['scale']}, {version}, "
          f"run {prov['started']} in {prov['duration_s']:.0f} s")
    if "unavailable" in doc:
        print(f"  not applicable: {doc['unavailable']['en']}")
        return 0
    run = Run(chapter, doc)
    pool = pooling.gather(chapter, doc["major"], doc["scale"], doc["key"]["target"])
    pooled = pool.verdicts if any(r.doc["provenance"]["started"] == prov["started"] for r in pool.runs) \
        else run.verdicts  # a run of an older experiment: judged alone
    own = {v.finding.id: v.status for v in run.verdicts}
    width = max(len(s) for s in STATUSES)
    for v in pooled:
        flag = "" if v.finding.expected else " (not expected to hold here)"
        status = v.status.upper() if v.status not in (CHANGED, NOT_APPLICABLE) else v.badge().en
        where = f", {v.runs} runs ({v.rounds} rounds)" if v.runs > 1 else ""
        alone = f"; this run alone: {own[v.finding.id]}" if v.runs > 1 and own[v.finding.id] != v.status else ""
        print(f"  {v.finding.id} {status:{width}} [{v.finding.kind}{where}{alone}] {v.finding.claim.en}{flag}")
        for c in v.checks:
            holds_if = c.check.threshold.text(c.check.measure).en
            print(f"     {c.check.measure.label.en}: {c.number().format('en')}  "
                  f"(holds if {holds_if}: {c.status})")
            if c.to_decide():
                print(f"       to decide: {c.to_decide().en}")
        if v.reason:
            print(f"     why: {v.reason.en}")
    rounds = run.rounds
    counts = sorted({rounds.count(c) for c in rounds.conditions()})
    logs = [STOPPED[log["stopped"]].en for log in doc["raw"].get("rounds_log", [])]
    if counts:
        print(f"  rounds per condition in this run: {', '.join(map(str, counts))} ({'; '.join(logs)})")
    return sum(v.failed for v in pooled)


def _load(name: str, major: float, scale: str) -> dict[str, Any]:
    try:
        doc = results.load(results.path_for(name, major, scale), name)
    except results.CorruptResult as exc:
        raise ReproError(f"the result file is corrupt ({exc}); run `python -m repro run "
                         f"{name}` to replace it") from exc
    if doc is None:
        raise ReproError(f"no result for {name} on PostgreSQL {majors.name(major)} at {scale} scale "
                         f"yet; run `python -m repro run {name} --pg {majors.name(major)} --scale {scale}`")
    return doc


def cmd_list(args: argparse.Namespace) -> int:
    """Each chapter with its experiment key at the default scale, and its newest result per
    major and scale with its run time."""
    for name, chapter in registry.chapters().items():
        newest: dict[tuple, dict[str, Any]] = {}
        for doc in sorted(results.everything(name), key=lambda d: d["provenance"]["started"]):
            newest[(doc["major"], doc["scale"])] = doc
        found = [f"pg{majors.name(m)}-{s} {d['provenance']['duration_s']:.0f} s"
                 + ("" if d["key"]["experiment"] == chapter.experiment_hash(s, d["key"]["target"]) else " (stale)")
                 for (m, s), d in sorted(newest.items())]
        print(f"{name:16} {chapter.experiment_hash('default')}  {chapter.title.en}  "
              f"[{', '.join(found) or 'no result'}]")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from .lab import runner
    chapter = registry.get(args.name)
    for major in majors.parse_list(args.pg):
        doc, reused = runner.run(chapter, args.scale, major, args.dsn, args.force, wait=args.wait,
                                 server_cpus=args.server_cpus, client=args.client)
        if reused:
            print(f"{chapter.name}: reusing the cached result (same experiment, scale and image); "
                  f"--force runs it again")
        print(f"result: {results.path_for(chapter.name, doc['major'], args.scale, doc['key']['target'])}")
        print_verdicts(doc)
    return 0  # `check` judges; a run that finished is a success


def _existing(name: str, scale: str) -> list[dict[str, Any]]:
    """This build's newest run of a chapter against an existing server (--dsn)."""
    found = [results.load(p, name) for p in sorted(results.build_dir().glob(f"{name}/pg*-{scale}-dsn-*.json"))]
    if not found:
        raise ReproError(f"no run of {name} against an existing server at {scale} scale yet; run "
                         f"`make repro-{name} DSN=\"...\"`")
    return [max(found, key=lambda d: d["provenance"]["started"])]


def cmd_check(args: argparse.Namespace) -> int:
    chapter = registry.get(args.name)
    scales.check(args.scale)
    docs = _existing(args.name, args.scale) if args.existing else \
        [_load(args.name, major, args.scale) for major in majors.parse_list(args.pg)]
    failed = 0
    if args.json:
        out = []
        for doc in docs:
            run = Run(chapter, doc)
            pool = pooling.gather(chapter, run.major, args.scale, run.doc["key"]["target"])
            out.append({"chapter": chapter.name, "major": run.major, "scale": run.doc["scale"],
                        "started": run.doc["provenance"]["started"], "runs": len(pool.runs),
                        "verdicts": [v.as_dict() for v in pool.verdicts],
                        "this_run": [v.as_dict() for v in run.verdicts]})
            failed += sum(v.failed for v in pool.verdicts)
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 1 if failed else 0
    for doc in docs:
        failed += print_verdicts(doc)
    if failed:
        print(f"{failed} expected finding(s) contradicted", file=sys.stderr)
    return 1 if failed else 0


def cmd_matrix(args: argparse.Namespace) -> int:
    """Every finding's pooled verdict on every major with a result, from stored results (no
    Docker): its kind, the runs and rounds it pools, the estimate and interval of the check it
    is shown by, with that check's size."""
    chosen = [registry.get(args.name)] if args.name else list(registry.chapters().values())
    wanted = majors.parse_list(args.pg) if args.pg else None
    scale = scales.check(args.scale)
    rows, older = [], []
    for chapter in chosen:
        for major, pool in pooling.every_major(chapter, scale).items():
            if wanted is None or major in wanted:
                rows += [pooling.row(pool, v) for v in pool.verdicts]
                if not pool.runs and pool.left_out:  # the pages show such a run alone, marked (!)
                    older.append(f"{chapter.name} on {majors.name(major)}")
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    for r in rows:
        value = "" if r["value"] is None else f"{r['value']:.4g}"
        interval = "" if r["low"] is None or r["low"] == r["high"] else f" [{r['low']:.4g}, {r['high']:.4g}]"
        print(f"{r['chapter']:14} {r['finding']:4} {majors.name(r['major']):>4}  {r['badge']:28} "
              f"{r['kind']:10} {r['runs']} runs, {r['rounds']:3} rounds  {value}{interval} {r['unit'] or ''}")
    if older:
        print(f"not pooled, only runs of another version of the experiment: {', '.join(older)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """This machine's latest run beside the published runs of the same major (repro/compare.py)."""
    from . import compare
    found = compare.compare(registry.get(args.name), majors.parse(args.pg) if args.pg else None)
    if args.json:
        print(json.dumps(found, ensure_ascii=False, indent=1))
        return 0
    print(f"{found['chapter']} on PostgreSQL {majors.name(found['major'])} at {found['scale']} scale: "
          f"this machine's run of {found['this_machine_run']} beside {len(found['published_runs'])} "
          f"published run(s)")
    for f in found["findings"]:
        mark = "same verdict" if f["same_verdict"] else "DIFFERENT VERDICT"
        runs = f"{f['published_runs']} run" + ("" if f["published_runs"] == 1 else "s")
        print(f"  {f['finding']} [{f['kind']}] this machine: {f['this_machine']}; published: {f['published']} "
              f"({runs}) — {mark}{'; values differ' if f['differ'] else ''}")
        for c in f["checks"]:
            def shown(e: dict[str, Any]) -> str:
                if e["value"] is None:
                    return "—"
                return f"{e['value']:.4g}" + (f" [{e['low']:.4g}, {e['high']:.4g}]" if e["low"] is not None
                                               and e["low"] != e["high"] else "")
            d = c["difference"]
            diff = "" if d is None else (f"; {'ratio' if d['kind'] == 'ratio' else 'difference'} "
                                         f"{d['value']:.3g} [{d['low']:.3g}, {d['high']:.3g}]"
                                         f"{' (differ)' if d['differ'] else ''}")
            print(f"     {c['check']}: {shown(c['this_machine'])} vs {shown(c['published'])} {c['unit']}{diff}")
    print("  machines (this machine | published):")
    for key, label in compare.MACHINE:
        m = found["machines"][key]
        print(f"     {label}: {m['this_machine']} | {m['published']}")
    if found["settings_that_differ"]:
        print("  server settings that differ (this machine | published):")
        for k, (a, b) in found["settings_that_differ"].items():
            print(f"     {k}: {a or '(default)'} | {b or '(default)'}")
    return 0


def cmd_noise(args: argparse.Namespace) -> int:
    """How noisy each chapter's rounds are, from its stored runs (repro/noise.py)."""
    from . import noise
    from .stats import BETWEEN_RUNS
    chosen = [args.name] if args.name else list(registry.chapters())
    print(f"{'chapter':14} {'series':>6} {'rounds':>6} {'spread':>7} {'lag-1':>6} {'rho':>5} {'pairs':>5} "
          f"{'machines':>20}")  # of the findings with 3 runs on two CPU models, the one nearest the floor
    for name in chosen:
        registry.get(name)
        found = noise.series(name, scales.check(args.scale))
        rho, n = noise.between_runs(found)
        spread, lag = noise.spread(found), noise.lag1(found)
        rounds = sorted(len(s.values) for s in found)
        machines = noise.judged(noise.between_machines(found))
        widest = max(machines, key=lambda f: machines[f].rho, default=None)
        apart = (f"{widest} {machines[widest].rho:.1f} of {BETWEEN_RUNS}" if widest else "—")
        print(f"{name:14} {len(found):6} {rounds[len(rounds) // 2] if rounds else 0:6} "
              f"{'—' if spread is None else f'{spread:.3f}':>7} {'—' if lag is None else f'{lag:+.2f}':>6} "
              f"{'—' if rho is None else f'{rho:.1f}':>5} {n:5} {apart:>20}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    """Bring every chapter's result up to date (used by `make html`); with --runs N, make N
    new runs of each on each major and keep every one in results/ (the stored history that
    the verdicts pool), one run at a time."""
    from .lab import runner
    chosen = [registry.get(n) for n in args.only.split(",")] if args.only else \
        list(registry.chapters().values())
    if args.runs < 0:
        raise ReproError("--runs takes a number of runs, 1 or more")
    todo = [(c, m) for m in majors.parse_list(args.pg) for c in chosen
            for _ in range(args.runs or (0 if runner.is_cached(c, args.scale, m) else 1))]
    if todo:
        total = sum(runner.expected_s(c, args.scale) for c, _ in todo)
        print(f"{len(todo)} chapter run(s) to make at {args.scale} scale, about {total / 60:.0f} min "
              f"(from earlier runs' durations; a chapter stops once its findings are decided): "
              + ", ".join(f"{c.name} on {majors.name(m)}" for c, m in todo), flush=True)
    stopped: list[ChapterStopped] = []
    for i in range(max(args.runs, 1)):
        for major in majors.parse_list(args.pg):
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
                print(f"skipped {path.name} of {name}: a run against an existing server is kept with --machine NAME")
                continue
            print(f"kept {results.archive(doc, args.machine).relative_to(results.ROOT)}")
            kept += 1
    print(f"{kept} result(s) kept in results/")
    return 0


def cmd_register(args: argparse.Namespace) -> int:
    """Record a revision for each finding of the chapter whose claim, thresholds,
    requirements, kind or expected flag changed (repro/claims.py)."""
    from . import claims
    chapter = registry.get(args.name)
    changed = claims.register(chapter, args.why or "", why_ja=args.why_ja)
    sized = claims.register_sizes(chapter, args.why or "")
    print(f"{chapter.name}: " + (f"registered {', '.join(changed)}" if changed else "the register is current")
          + (f"; the original's size of {', '.join(sized)}" if sized else ""))
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


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one line naming the problem and exit 2 (`-h` shows the usage)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {self.prog}: {message} (-h shows the usage)\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m repro", description=__doc__)
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
            s.add_argument("--existing", action="store_true",
                           help="judge this build's newest run against an existing server (--dsn)")
        if name != "check":
            s.add_argument("--wait", action="store_true",
                           help="wait for a run going on this Docker engine instead of refusing")
        if name == "build":
            s.add_argument("--only", metavar="CHAPTERS", help="these chapters, comma-separated")
            s.add_argument("--runs", type=int, default=0, metavar="N",
                           help="make N new runs of each (rotating chapters and majors) and keep each in results/")
        if name == "run":
            s.add_argument("--dsn", help="run against an existing server (README: what each chapter judges there)")
            s.add_argument("--server-cpus", type=int, metavar="N",
                           help="with --dsn: the server's CPU count, which the run cannot see "
                                "(findings that compare with it are judged only when it is given)")
            s.add_argument("--client", choices=("docker", "local"),
                           help="with --dsn: run pgbench and psql in a helper container, or this machine's "
                                "(PG_BINDIR or PATH; the default when no Docker engine answers)")
            s.add_argument("--force", action="store_true", help="run even if a fresh result exists")
        s.add_argument("--scale", default="default", help=f"one of {', '.join(scales.SCALES)}")
        s.add_argument("--pg", default=str(majors.DEFAULT_MAJOR), metavar="MAJORS",
                       help=f"PostgreSQL majors, comma-separated (default {majors.DEFAULT_MAJOR})")
        s.set_defaults(fn=fn)
    s = sub.add_parser("archive", help="keep this build's results in results/ (the history)")
    s.add_argument("--machine", help="keep them as a contributed run of this machine (results/NAME/MACHINE/)")
    s.set_defaults(fn=cmd_archive)
    s = sub.add_parser("matrix", help="every finding's pooled verdict per major, from stored results")
    s.add_argument("name", nargs="?", help="one chapter (default: all)")
    s.add_argument("--pg", metavar="MAJORS", help="only these majors, comma-separated")
    s.add_argument("--scale", default="default", help=f"one of {', '.join(scales.SCALES)}")
    s.add_argument("--json", action="store_true", help="one object per finding and major")
    s.set_defaults(fn=cmd_matrix)
    s = sub.add_parser("compare", help="this machine's latest run beside the published runs")
    s.add_argument("name")
    s.add_argument("--pg", metavar="MAJOR", help="the major (default: that of this machine's newest result)")
    s.add_argument("--json", action="store_true", help="one object per finding")
    s.set_defaults(fn=cmd_compare)
    s = sub.add_parser("noise", help="each chapter's noise: spread, lag-1 correlation, spread between runs")
    s.add_argument("name", nargs="?", help="one chapter (default: all)")
    s.add_argument("--scale", default="default", help=f"one of {', '.join(scales.SCALES)}")
    s.set_defaults(fn=cmd_noise)
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
