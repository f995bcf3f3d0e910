"""Every run of a chapter's current experiment on one PostgreSQL major, pooled: the
verdicts that the pages, `repro check` and `repro matrix` show.

A finding's verdict on a major pools (stats.pool) every run of the experiment as it is now
on that major and scale, this build's and the stored ones (results/, RESULTS), that
started after the finding's latest revision (repro/claims.py). Runs of another version of
the experiment, and files that are not result documents, are left out and named. Runs
come from machines of one kind (results/ holds the project's own, a contributed run keeps
its machine's name and is pooled apart): the between-run spread of stats.pool covers other
days, noise levels and machines of that kind, where they differ by no more than it allows
(tests/test_pooling.py). A chapter whose values depend on the machine itself (its
MACHINE_BOUND says why) pools only the runs on one CPU model, per major: that of the newest
run there (on the site, this build's on the major it ran). Runs whose records of how they
ran disagree with the newest run's (`recorded`: the servers' containers, where the client
ran) do not pool either, and the page names the field that split them.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from . import claims, results, sizes
from .chapter import Chapter, Run
from .text import Text
from .majors import MAJORS, name as major_name
from .verdict import CHANGED, INCONCLUSIVE, NOT_APPLICABLE, CheckResult, Finding, Verdict
from .verdict_words import badge_of, to_decide


@dataclass(frozen=True)
class LeftOut:
    """A result file that a pool leaves out, and why."""

    path: Path
    why: Text


OTHER_VERSION = Text("実験の別の版の実行", "a run of another version of the experiment")
UNREADABLE = Text("結果の文書として読めないファイル", "not a readable result document")


def other_machine(model: str | None) -> Text:
    if model is None:
        return Text("CPU の型が記録されていない実行 (この章の値はマシンによって変わるため)",
                    "a run whose CPU model was not recorded: this chapter's values depend on the machine")
    return Text(f"別のマシン (CPU {model}) での実行 (この章の値はマシンによって変わるため)",
                f"a run on another machine (CPU {model}): this chapter's values depend on the machine")


def machine(doc: dict[str, Any]) -> str | None:
    """The CPU model a run was measured on (provenance.host)."""
    return doc["provenance"]["host"].get("cpu_model")


def role(server: dict[str, Any]) -> str:
    """A stored server's role, by its English label (how runs' servers are matched)."""
    return server["role"]["en"] if isinstance(server["role"], dict) else str(server["role"])


def recorded(doc: dict[str, Any]) -> dict[str, Any]:
    """What a run recorded of how it ran, field by field, for the pool's guard (the pyperf
    rule), each server's by its role: its container (shared memory, CPUs, capabilities) or its
    local cluster (CPUs), the settings it was started with at each start (which ones, and each
    one's values), the values reloads set (ALTER SYSTEM, per condition), the client programs
    run against it (where they connected, their session settings); and where the client
    programs ran beside an existing server."""
    fields: dict[str, Any] = {}
    for server in doc["provenance"]["servers"]:
        of = role(server)
        for name, value in (server.get("container") or server.get("cluster") or {}).items():
            fields[f"{name} of {of}"] = value
        if "starts" in server:
            values: dict[str, set[str]] = {}
            for start in server["starts"]:
                for name, value in start["settings"].items():
                    values.setdefault(name, set()).add(value)
            fields[f"settings at the starts of {of}"] = sorted(values)
            fields |= {f"{name} at the starts of {of}": sorted(v) for name, v in values.items()}
        if "reloads" in server:
            reloaded: dict[str, set[str]] = {}
            for reload in server["reloads"]:
                for name, value in reload["settings"].items():
                    reloaded.setdefault(name, set()).add(value)
            fields |= {f"{name} set by reloads of {of}": sorted(v) for name, v in reloaded.items()}
        if "client_runs" in server:
            fields[f"client programs of {of}"] = sorted(
                " ".join(filter(None, [c["program"], c["host"] and f"-h {c['host']}",
                                       c["session_settings"] and f"PGOPTIONS={c['session_settings']!r}"]))
                for c in server["client_runs"])
    if "client" in doc["provenance"]:
        fields["client programs"] = doc["provenance"]["client"].get("kind")
    return fields


def other_record(name: str, theirs: Any, newest: Any) -> Text:
    if isinstance(theirs, list) and isinstance(newest, list):  # say what differs, not the lists
        only, missing = [x for x in theirs if x not in newest][:3], [x for x in newest if x not in theirs][:3]
        theirs, newest = "; ".join(map(str, only)) or "-", "; ".join(map(str, missing)) or "-"
    return Text(f"最新の実行と記録が違う実行 (項目 {name}: {theirs}、最新は {newest})",
                f"a run whose recorded {name} differs from the newest run's ({theirs}, the newest {newest})")


def guarded(runs: list[tuple[Path, Run]]) -> tuple[list[tuple[Path, Run]], list[LeftOut]]:
    """The runs whose records agree with the newest run's, and the others left out with the
    first field that split them. Only a field that both runs recorded can split them: one
    that an older run did not record splits nothing, or recording a new field would start
    every pool again."""
    if not runs:
        return runs, []
    newest = recorded(max((r for _, r in runs), key=started).doc)
    kept, left_out = [], []
    for path, run in runs:
        mine = recorded(run.doc)
        split = next((k for k in sorted(mine) if k in newest and mine[k] != newest[k]), None)
        if split is None:
            kept.append((path, run))
        else:
            left_out.append(LeftOut(path, other_record(split, mine[split], newest[split])))
    return kept, left_out


def started(run: Run) -> datetime:
    return datetime.fromisoformat(run.doc["provenance"]["started"])


class Pool:
    """The runs that count for a chapter on one major and scale, newest last."""

    def __init__(self, chapter: Chapter, major: float, scale: str, runs: list[Run],
                 left_out: list[LeftOut], unavailable: Text | None = None):
        self.chapter, self.major, self.scale = chapter, major, scale
        self.runs = sorted(runs, key=started)
        self.left_out = left_out
        self.unavailable = unavailable  # the chapter cannot run here (no run, and why)
        for run in self.runs:
            run.pool = self

    def counted(self, fid: str) -> list[Run]:
        """The runs that count for a finding: those started after its latest revision."""
        since = claims.counted_since(self.chapter, fid)
        return [r for r in self.runs if since is None or started(r) > datetime.fromisoformat(since)]

    @cached_property
    def verdicts(self) -> list[Verdict]:
        """Each finding's verdict over the runs that count for it (none without a run)."""
        if not self.runs:
            return [Verdict(f, NOT_APPLICABLE, reason=self.unavailable) for f in self.chapter.findings] \
                if self.unavailable else []
        found = []
        for f in self.chapter.findings:
            runs = self.counted(f.id)
            if runs:
                found.append(f.judge_runs([(r.rounds, r.environment) for r in runs]))
            elif (scoped := f.judge(self.newest.rounds, self.newest.environment)).other_majors:
                found.append(scoped)  # scoped to other majors: which runs count changes nothing
            else:
                since = (claims.counted_since(self.chapter, f.id) or "")[:10]
                found.append(Verdict(f, INCONCLUSIVE, reason=Text(
                    f"{since} の改訂の後に始まった実行がまだありません。",
                    f"No run has started since the claim's revision of {since}.")))
        return found

    @cached_property
    def check_sizes(self) -> dict[str, list[sizes.Size]]:
        """Each finding's sizes beside the original's (repro/sizes.py), one per check, judged
        over the runs started after its size was registered; none for a finding without a
        registered size, or not applicable here."""
        declared, register, found = sizes.parse(self.chapter), claims.load(self.chapter), {}
        for v in self.verdicts:
            fid = v.finding.id
            since = claims.size_since(register, fid)
            if fid not in declared or since is None or v.status == NOT_APPLICABLE:
                continue
            runs = [r for r in self.counted(fid) if started(r) > datetime.fromisoformat(since)]
            judged = v.finding.judge_runs([(r.rounds, r.environment) for r in runs]) if runs else v
            found[fid] = sizes.each_check(declared[fid], judged, len(runs), v)
        return found

    def shown_check(self, v: Verdict) -> CheckResult | None:
        """The one check a finding is shown by, its value and its size together
        (sizes.shown_index)."""
        i = sizes.shown_index(v, self.check_sizes.get(v.finding.id, []))
        return v.checks[i] if i is not None else None

    @cached_property
    def sizes(self) -> dict[str, sizes.Size]:
        """Each finding's size: that of the check it is shown by."""
        return {v.finding.id: each[sizes.shown_index(v, each) or 0] for v in self.verdicts
                if (each := self.check_sizes.get(v.finding.id))}

    def verdict(self, fid: str) -> Verdict:
        return next(v for v in self.verdicts if v.finding.id == fid)

    @property
    def newest(self) -> Run | None:
        return self.runs[-1] if self.runs else None

    @property
    def rounds(self) -> int:
        return sum(len(r.rounds.ids) for r in self.runs)


def gather(chapter: Chapter, major: float, scale: str, target: str = "container",
           found: list[tuple[Path, dict[str, Any]]] | None = None, model: str | None = None) -> Pool:
    """The pool of a chapter on a major at a scale, from this build's and the stored results
    on one target (the project's containers, or one existing server); `found`: the chapter's
    result files, when the caller has read them already. A machine-bound chapter keeps the
    runs on one CPU model, `model` if given (compare's: that of the run it compares), else
    that of its newest run that recorded one, and names the others."""
    current = chapter.experiment_hash(scale, target)
    runs, left_out = [], []
    unavailable = None
    for path, doc in results.files(chapter.name) if found is None else found:
        if doc["major"] != major or doc["scale"] != scale or doc["key"]["target"] != target:
            continue
        if "unavailable" in doc:
            unavailable = Text(**doc["unavailable"])
            continue
        if doc["key"]["experiment"] != current:
            left_out.append(LeftOut(path, OTHER_VERSION))
        else:
            runs.append((path, Run(chapter, doc)))
    runs, split = guarded(runs)
    left_out += split
    if chapter.machine_bound and runs:
        known = [r for _, r in runs if machine(r.doc) is not None]
        model = model or (machine(max(known, key=started).doc) if known else None)
        left_out += [LeftOut(path, other_machine(machine(r.doc))) for path, r in runs if machine(r.doc) != model]
        runs = [(path, r) for path, r in runs if machine(r.doc) == model]
    left_out += [LeftOut(path, UNREADABLE) for path, _ in results.unreadable(chapter.name)
                 if path.name.startswith(f"pg{major:g}-{scale}")]
    return Pool(chapter, major, scale, [r for _, r in runs], left_out, None if runs else unavailable)


def every_major(chapter: Chapter, scale: str) -> dict[float, Pool]:
    """The chapter's pool on every major that has a result at the scale, by major."""
    found = results.files(chapter.name)
    measured = sorted({doc["major"] for _, doc in found
                       if doc["scale"] == scale and doc["key"]["target"] == "container"})
    return {m: gather(chapter, m, scale, found=found) for m in measured}


def row_checks(pools: dict[float, Pool], major: float) -> dict[str, int]:
    """The one check each finding's matrix row shows on every major (`repro matrix` and the
    site's matrix): the check the finding is shown by on `major`, the site's, or, for one with
    no result there, on the newest major that has one. The verdict may differ between majors;
    the check a row shows does not, so a value read along a row is one quantity."""
    chosen: dict[str, int] = {}
    for m in sorted(pools, key=lambda m: (m != major, -m)):
        for v in pools[m].verdicts:
            if v.finding.id not in chosen and (c := pools[m].shown_check(v)) is not None:
                chosen[v.finding.id] = v.checks.index(c)
    return chosen


def row_check(pool: Pool, v: Verdict, index: int | None) -> tuple[CheckResult | None, sizes.Size | None]:
    """The check a matrix row shows on this pool's major, and that check's size: the row's own
    (row_checks), else the one the finding is shown by here."""
    if index is None or index >= len(v.checks):
        return pool.shown_check(v), pool.sizes.get(v.finding.id)
    each = pool.check_sizes.get(v.finding.id) or []
    return v.checks[index], (each[index] if index < len(each) else None)


def row(pool: Pool, v: Verdict, index: int | None = None) -> dict[str, Any]:
    """One finding on one major, as `repro matrix --json` gives it: the pooled verdict, what it
    rests on and the estimate and interval of the row's check (row_checks), with its size."""
    c, size = row_check(pool, v, index)
    e = c.estimate if c is not None else None
    return {"chapter": pool.chapter.name, "finding": v.finding.id, "kind": v.finding.kind,
            "major": pool.major, "status": v.status, "badge": badge_of(v).en, "runs": v.runs,
            "rounds": v.rounds, "check": c.check.measure.label.en if c else None,
            "unit": c.check.measure.unit if c else None,
            "value": e.value if e else None, "low": e.low if e else None, "high": e.high if e else None,
            "holds_if": c.check.threshold.text(c.check.measure).en if c else None,
            "expected": v.finding.expected, **expected_since(pool.chapter, v.finding),
            "to_decide": (decide.en if c and (decide := to_decide(c)) else None),
            **(size.as_dict() if size is not None else dict.fromkeys(SIZE_FIELDS))}


SIZE_FIELDS = ("original", "size", "size_ratio", "size_low", "size_high")


def expected_since(chapter: Chapter, f: Finding) -> dict[str, Any]:
    """When the finding's expected flag took its value (a date), and whether that was before
    any run (None when the register does not say): a "not expected" after runs is a change of
    mind, not a prediction."""
    e = claims.expectation(claims.load(chapter), f.id, f.expected)
    return {"expected_since": e.since[:10] if e.since else None, "expected_before_runs": e.before_runs}


# a finding over the majors with a result (`across`): besides the statuses, decided both ways
# without a declared change, or decided on some majors and undecided on the others
DIFFERS, PARTLY = "differs", "partly decided"


def spans(by_major: dict[float, Verdict]) -> list[tuple[Verdict, list[float]]]:
    """Consecutive majors with the same badge, grouped, in major order: each group's first
    verdict and its majors."""
    groups: list[tuple[Verdict, list[float]]] = []
    for major in sorted(by_major):
        v = by_major[major]
        if groups and badge_of(groups[-1][0]) == badge_of(v):
            groups[-1][1].append(major)
        else:
            groups.append((v, [major]))
    return groups


def span_text(found: list[float], sep: str = ", ") -> str:
    """"9.6–13", "14", "16, 18": a run of consecutive majors (of majors.MAJORS) as a range;
    majors that are not consecutive are joined with `sep` ("、" in Japanese)."""
    order = list(MAJORS)
    if len(found) > 2 and [order.index(m) for m in found] == list(range(order.index(found[0]),
                                                                      order.index(found[-1]) + 1)):
        return f"{major_name(found[0])}–{major_name(found[-1])}"
    return sep.join(map(major_name, found))


def differs(by_major: dict[float, Verdict]) -> bool:
    """Whether a finding's verdict (its badge) is not the same on every major."""
    return len({badge_of(v) for v in by_major.values()}) > 1


def describe(by_major: dict[float, Verdict]) -> Text:
    """A finding across majors as a range: "reproduced on 9.6–13; changed in 14 on 14–18"."""
    parts = [(badge_of(v), ms) for v, ms in spans(by_major)]
    return Text("、".join(f"{span_text(ms, '、')} で「{b.ja}」" for b, ms in parts),
                "; ".join(f"{b.en} on {span_text(ms)}" for b, ms in parts))


def across(by_major: dict[float, Verdict]) -> str:
    """One word for the summary: reproduced or contradicted only if every major tested says
    so; changed if a major changed it (as declared); `DIFFERS` if majors decide it both ways
    otherwise; `PARTLY` if the decided majors agree and some are undecided; inconclusive
    if no major decides it; not applicable if none could test it."""
    tested = [v.status for v in by_major.values() if v.status != NOT_APPLICABLE]
    if not tested:
        return NOT_APPLICABLE
    if CHANGED in tested:
        return CHANGED
    decided = set(tested) - {INCONCLUSIVE}
    if len(decided) > 1:
        return DIFFERS
    if not decided:
        return INCONCLUSIVE
    return decided.pop() if INCONCLUSIVE not in tested else PARTLY
