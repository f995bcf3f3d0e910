"""The commands that judge stored results again (no Docker): check, matrix, compare, canary, noise."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from .. import majors, pooling, registry, results
from ..chapter import Run
from ..errors import ReproError
from ..text import Text
from ..verdict import CHANGED, NOT_APPLICABLE, STATUSES, Verdict
from ..verdict_words import STOPPED, badge_of, to_decide, verdict_dict
from .options import MAJOR_NAMES, Commands, add_majors, add_scale


@dataclass(frozen=True)
class Judged:
    """A stored run as `check` judges it, in text and in JSON alike."""

    verdicts: list[Verdict]  # what counts: pooled, or the run alone where no pool holds it
    own: list[Verdict]  # the run alone
    runs: int  # how many runs `verdicts` rests on

    @property
    def failed(self) -> int:
        """How many expected findings the verdicts contradict (`check` exits 1 on any)."""
        return sum(v.failed for v in self.verdicts)


def judged(run: Run) -> Judged:
    """The run pooled with every run of the current experiment on its major and scale
    (repro/pooling.py); a run of an older experiment, which no pool holds, alone; a run
    where the chapter does not apply, not applicable (it has no rounds to judge)."""
    doc = run.doc
    if "unavailable" in doc:
        none = pooling.Pool(run.chapter, run.major, doc["scale"], [], [], Text(**doc["unavailable"]))
        return Judged(none.verdicts, none.verdicts, 0)
    pool = pooling.gather(run.chapter, run.major, doc["scale"], doc["key"]["target"])
    if any(r.doc["provenance"]["started"] == doc["provenance"]["started"] for r in pool.runs):
        return Judged(pool.verdicts, run.verdicts, len(pool.runs))
    return Judged(run.verdicts, run.verdicts, 1)


def print_verdicts(doc: dict[str, Any]) -> int:
    """The run's chapter on its major: one line per finding with its verdict (judged), its
    values and intervals, this run's own verdict where it differs, and what would decide an
    undecided check; return how many expected findings the verdicts contradict."""
    chapter = registry.get(doc["chapter"])
    prov = doc["provenance"]
    version = prov["servers"][0]["version"].split(" on ")[0] if prov["servers"] else \
        f"PostgreSQL {majors.name(doc['major'])}"
    scale = chapter.scales.get(doc["scale"], {})
    other = ", ".join(f"{k} {v}" for k, v in doc.get("scale_params", {}).items() if scale.get(k) != v)
    print(f"{doc['chapter']}: scale {doc['scale']}{f' (with {other}: not the scale parameters)' if other else ''}, "
          f"{version}, run {prov['started']} in {prov['duration_s']:.0f} s")
    if "unavailable" in doc:
        print(f"  not applicable: {doc['unavailable']['en']}")
        return 0
    run = Run(chapter, doc)
    found = judged(run)
    own = {v.finding.id: v.status for v in found.own}
    width = max(len(s) for s in STATUSES)
    for v in found.verdicts:
        flag = "" if v.finding.expected else " (not expected to hold here)"
        status = v.status.upper() if v.status not in (CHANGED, NOT_APPLICABLE) else badge_of(v).en
        where = f", {v.runs} runs ({v.rounds} rounds)" if v.runs > 1 else ""
        alone = f"; this run alone: {own[v.finding.id]}" if v.runs > 1 and own[v.finding.id] != v.status else ""
        print(f"  {v.finding.id} {status:{width}} [{v.finding.kind}{where}{alone}] {v.finding.claim.en}{flag}")
        for c in v.checks:
            holds_if = c.check.threshold.text(c.check.measure).en
            print(f"     {c.check.measure.label.en}: {c.number().format('en')}  "
                  f"(holds if {holds_if}: {c.status})")
            if decide := to_decide(c):
                print(f"       to decide: {decide.en}")
        if v.reason:
            print(f"     why: {v.reason.en}")
    rounds = run.rounds
    counts = sorted({rounds.count(c) for c in rounds.conditions()})
    logs = [STOPPED[log["stopped"]].en for log in doc["raw"].get("rounds_log", [])]
    if counts:
        print(f"  rounds per condition in this run: {', '.join(map(str, counts))} ({'; '.join(logs)})")
    return found.failed


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


def _newest(name: str, scale: str, kind: str) -> list[dict[str, Any]]:
    """This build's newest run of a chapter against an existing server (`kind` dsn) or on
    local clusters (local)."""
    found = [results.load(p, name) for p in sorted(results.build_dir().glob(f"{name}/pg*-{scale}-{kind}-*.json"))]
    if not found:
        how = 'DSN="..."' if kind == "dsn" else "SERVER=local"
        raise ReproError(f"no run of {name} {'against an existing server' if kind == 'dsn' else 'on local clusters'} "
                         f"at {scale} scale yet; run `make repro-{name} {how}`")
    return [max(found, key=lambda d: d["provenance"]["started"])]


def add_check(sub: Commands) -> None:
    s = sub.add_parser("check", help="judge the stored result again; exit 1 if an expected finding is contradicted")
    s.add_argument("name")
    s.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    s.add_argument("--existing", action="store_true",
                   help="judge this build's newest run against an existing server (--dsn)")
    s.add_argument("--local", action="store_true",
                   help="judge this build's newest run on local clusters (--server local)")
    add_scale(s)
    add_majors(s)
    s.set_defaults(fn=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    chapter = registry.get(args.name)
    docs = _newest(args.name, args.scale, "dsn") if args.existing else \
        _newest(args.name, args.scale, "local") if args.local else \
        [_load(args.name, major, args.scale) for major in args.pg]
    if not args.json:
        failed = sum(print_verdicts(doc) for doc in docs)
        if failed:
            print(f"{failed} expected finding(s) contradicted", file=sys.stderr)
        return 1 if failed else 0
    out, failed = [], 0
    for doc in docs:
        found = judged(Run(chapter, doc))
        out.append({"chapter": chapter.name, "major": doc["major"], "scale": doc["scale"],
                    "started": doc["provenance"]["started"], "runs": found.runs,
                    "verdicts": [verdict_dict(v) for v in found.verdicts],
                    "this_run": [verdict_dict(v) for v in found.own]})
        failed += found.failed
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 1 if failed else 0


def add_matrix(sub: Commands) -> None:
    s = sub.add_parser("matrix", help="every finding's pooled verdict per major, from stored results")
    s.add_argument("name", nargs="?", help="one chapter (default: all)")
    add_majors(s, None, "only these majors")
    add_scale(s)
    s.add_argument("--json", action="store_true", help="one object per finding and major")
    s.set_defaults(fn=cmd_matrix)


def cmd_matrix(args: argparse.Namespace) -> int:
    """Every finding's pooled verdict on every major with a result, from stored results (no
    Docker): its kind, the runs and rounds it pools, the estimate and interval of its row's
    check (the same on every major: pooling.row_checks), with that check's size."""
    chosen = [registry.get(args.name)] if args.name else list(registry.chapters().values())
    rows, older = [], []
    for chapter in chosen:
        pools = pooling.every_major(chapter, args.scale)
        checks = pooling.row_checks(pools, majors.DEFAULT_MAJOR)  # one check a finding, as the site's matrix
        for major, pool in pools.items():
            if args.pg is None or major in args.pg:
                rows += [pooling.row(pool, v, checks.get(v.finding.id)) for v in pool.verdicts]
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


def add_compare(sub: Commands) -> None:
    s = sub.add_parser("compare", help="this machine's latest run beside the published runs")
    s.add_argument("name")
    s.add_argument("--pg", choices=MAJOR_NAMES, metavar="MAJOR",
                   help=f"the major, one of {', '.join(MAJOR_NAMES)} (default: that of this machine's newest result)")
    s.add_argument("--json", action="store_true", help="one object per finding")
    s.set_defaults(fn=cmd_compare)


def _shown(e: dict[str, Any]) -> str:
    """An estimate with its interval, as compare prints it."""
    if e["value"] is None:
        return "—"
    return f"{e['value']:.4g}" + (f" [{e['low']:.4g}, {e['high']:.4g}]" if e["low"] is not None
                                   and e["low"] != e["high"] else "")


def cmd_compare(args: argparse.Namespace) -> int:
    """This machine's latest run beside the published runs of the same major (repro/compare.py)."""
    from .. import compare
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
            d = c["difference"]
            diff = "" if d is None else (f"; {'ratio' if d['kind'] == 'ratio' else 'difference'} "
                                         f"{d['value']:.3g} [{d['low']:.3g}, {d['high']:.3g}]"
                                         f"{' (differ)' if d['differ'] else ''}")
            print(f"     {c['check']}: {_shown(c['this_machine'])} vs {_shown(c['published'])} {c['unit']}{diff}")
    print("  machines (this machine | published):")
    for key, label in compare.MACHINE:
        m = found["machines"][key]
        print(f"     {label}: {m['this_machine']} | {m['published']}")
    if found["settings_that_differ"]:
        print("  server settings that differ (this machine | published):")
        for role, differ in found["settings_that_differ"].items():
            print(f"     {role}:")
            for k, (a, b) in differ.items():
                print(f"        {k}: {a or '(default)'} | {b or '(default)'}")
    if found["recorded_that_differ"]:
        print("  how the runs ran, where it differs (this machine | published; the pool keeps such runs apart):")
        for k, (a, b) in found["recorded_that_differ"].items():
            print(f"     {k}: {a} | {b}")
    return 0


def add_canary(sub: Commands) -> None:
    s = sub.add_parser("canary", help="this build's runs beside every chapter's pool: exit 1 when more "
                                      "checks differ than chance allows")
    s.add_argument("--pg", choices=MAJOR_NAMES, metavar="MAJOR", default=majors.name(majors.DEFAULT_MAJOR),
                   help=f"the major, one of {', '.join(MAJOR_NAMES)} (default: {majors.name(majors.DEFAULT_MAJOR)})")
    s.set_defaults(fn=cmd_canary)


def cmd_canary(args: argparse.Namespace) -> int:
    """CI's canary (repro/canary.py): the differing checks, and exit 1 beyond chance."""
    from .. import canary
    found = canary.check(majors.parse(args.pg))
    for name, why in found.not_compared.items():
        print(f"not compared: {name}: {why}")
    for line in found.differing:
        print(f"differs: {line}")
    allowed = canary.allowed(found.checks)
    print(f"canary on PostgreSQL {args.pg}: {len(found.differing)} of {found.checks} checks differ from their "
          f"pools; chance allows {allowed}")
    if found.alarm:
        print(f"error: more checks differ than chance allows ({len(found.differing)} > {allowed}): "
              "a change moved the numbers above", file=sys.stderr)
        return 1
    return 0


def add_noise(sub: Commands) -> None:
    s = sub.add_parser("noise", help="each chapter's noise: spread, lag-1 correlation, spread between runs")
    s.add_argument("name", nargs="?", help="one chapter (default: all)")
    add_scale(s)
    s.set_defaults(fn=cmd_noise)


def cmd_noise(args: argparse.Namespace) -> int:
    """How noisy each chapter's rounds are, from its stored runs (repro/noise.py)."""
    from .. import noise
    from ..stats import BETWEEN_RUNS
    chosen = [args.name] if args.name else list(registry.chapters())
    print(f"{'chapter':14} {'series':>6} {'rounds':>6} {'spread':>7} {'lag-1':>6} {'rho':>5} {'pairs':>5} "
          f"{'machines':>20}")  # of the findings with 3 runs on two CPU models, the one nearest the floor
    for name in chosen:
        registry.get(name)
        found = noise.series(name, args.scale)
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
