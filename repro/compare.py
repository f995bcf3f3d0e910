"""This machine's latest run of a chapter beside the published runs of it on the same major:
`python -m repro compare NAME [--pg N] [--json]`.

Published means the stored results (results/ and RESULTS) of the project's machines, pooled
as the pages pool them (repro/pooling.py). For each finding: both verdicts, and for each
check both estimates with their 95 % intervals and the interval of their ratio (for ratios
and changes, on the log scale) or difference (the rest), Welch's t over the two intervals'
standard errors: they differ when it excludes 1 (or 0). Then the two machines side by side,
and the server settings that differ.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from . import majors, pooling, results
from .chapter import Chapter, Run
from .errors import ReproError
from .stats import CONFIDENCE, Estimate
from .verdict import CheckResult, Verdict
from .verdict_words import badge_of


def latest_here(chapter: Chapter, major: float | None) -> dict[str, Any]:
    """The newest result of this build (this machine's), on `major` if given."""
    mine = [doc for path, doc in results.files(chapter.name)
            if path.is_relative_to(results.build_dir()) and (major is None or doc["major"] == major)]
    if not mine:
        where = f" on PostgreSQL {majors.name(major)}" if major is not None else ""
        raise ReproError(f"no result of {chapter.name}{where} on this machine yet: run `make repro-{chapter.name}`"
                         f"{'' if major is None else f' PG={majors.name(major)}'} (or with DSN=...)")
    return max(mine, key=lambda d: d["provenance"]["started"])


def published(chapter: Chapter, doc: dict[str, Any]) -> pooling.Pool:
    """The stored runs of the chapter's current experiment on the run's major and scale, but
    the run itself (kept with `repro archive`, it would be compared with itself); one clear
    error when there are none, or only runs of another experiment or scale."""
    stored = [(p, d) for p, d in results.files(chapter.name, build=False)  # not this run, if kept
              if d["provenance"]["started"] != doc["provenance"]["started"]]
    pool = pooling.gather(chapter, doc["major"], doc["scale"], found=stored, model=pooling.machine(doc))
    where = f"{chapter.name} on PostgreSQL {majors.name(doc['major'])}"
    if doc["key"]["experiment"] != chapter.experiment_hash(doc["scale"], doc["key"]["target"]):
        raise ReproError(f"this machine's result of {where} was measured by another version of the "
                         f"experiment ({doc['key']['experiment']}, now {chapter.experiment_hash(doc['scale'], doc['key']['target'])}): "
                         f"run it again to compare")
    if not pool.runs:
        other = sorted({f"{d['scale']} scale" if d["scale"] != doc["scale"] else f"experiment {d['key']['experiment']}"
                        for _, d in stored if d["major"] == doc["major"] and "unavailable" not in d})
        if other:
            raise ReproError(f"the published runs of {where} differ from this machine's in what they ran "
                             f"({', '.join(other)}; this machine: {doc['scale']} scale, experiment "
                             f"{doc['key']['experiment']})")
        raise ReproError(f"no published result of {where} at {doc['scale']} scale")
    return pool


def difference(mine: Estimate, theirs: Estimate) -> dict[str, Any] | None:
    """The ratio (log-scale measures) or difference of two estimates, with its 95 % interval
    (Welch: each interval's standard error, Satterthwaite's degrees of freedom)."""
    if mine.half is None or theirs.half is None or mine.center is None or theirs.center is None:
        return None
    se = [e.half / scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, e.df) if e.half else 0.0 for e in (mine, theirs)]
    dfs = [e.df for e in (mine, theirs)]
    total = se[0] ** 2 + se[1] ** 2
    denominator = sum(s ** 4 / d for s, d in zip(se, dfs) if s > 0 and np.isfinite(d))
    df = total ** 2 / denominator if denominator > 0 else float("inf")
    d = mine.center - theirs.center
    half = float(scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, df)) * float(np.sqrt(total))
    ratio = mine.scale != "linear" and theirs.scale == mine.scale
    value, low, high = (float(np.exp(x)) if ratio else x for x in (d, d - half, d + half))
    none = 1.0 if ratio else 0.0
    return {"kind": "ratio" if ratio else "difference", "value": value, "low": low, "high": high,
            "differ": not low <= none <= high}


def _estimate(c: CheckResult) -> dict[str, Any]:
    e = c.estimate
    return {"value": e.value, "low": e.low, "high": e.high, "status": c.status}


def findings(mine: list[Verdict], theirs: list[Verdict]) -> list[dict[str, Any]]:
    """One object per finding: both verdicts, and per check both estimates and their
    difference."""
    out = []
    for v, p in zip(mine, theirs):
        checks = []
        for a, b in zip(v.checks, p.checks):
            checks.append({"check": a.check.measure.label.en, "unit": a.check.measure.unit,
                           "holds_if": a.check.threshold.text(a.check.measure).en,
                           "this_machine": _estimate(a), "published": _estimate(b),
                           "difference": difference(a.estimate, b.estimate)})
        out.append({"finding": v.finding.id, "kind": v.finding.kind, "claim": v.finding.claim.en,
                    "this_machine": badge_of(v).en, "published": badge_of(p).en,
                    "published_runs": p.runs, "published_rounds": p.rounds,
                    "same_verdict": v.status == p.status,
                    "differ": any(c["difference"] and c["difference"]["differ"] for c in checks),
                    "checks": checks})
    return out


MACHINE = (("cpu", "CPU"), ("memory", "memory [GiB]"), ("storage", "storage driver"), ("kernel", "kernel"),
           ("server", "server"), ("target", "target"))


def machine(doc: dict[str, Any]) -> dict[str, str]:
    prov, host = doc["provenance"], doc["provenance"]["host"]
    servers = prov["servers"]
    cpus = host.get("engine_cpus") or host.get("client_cpus")  # the client's own, with no engine
    cpu = f"{cpus} × {host['cpu_model']}" if host.get("cpu_model") else f"{cpus} CPUs (model not recorded)"
    if doc["key"]["target"].startswith("dsn:"):  # the host is where pgbench ran; the server's own are declared
        cpu = f"server: {prov.get('server_cpus_declared') or 'not declared'} (--server-cpus); pgbench's host: {cpu}"
    return {"cpu": cpu,
            "memory": str(host.get("memory_gib")), "storage": str(host.get("storage_driver")),
            "kernel": f"{host.get('kernel')}, {host.get('os')}",
            "server": "; ".join(sorted({s["version"].split(" on ")[0] + (f" ({s['image']['name']})" if s["image"] else "")
                                        for s in servers})) or "—",
            "target": prov["target"]}


def _differ(a: dict[str, str], b: dict[str, str]) -> dict[str, tuple[str | None, str | None]]:
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def settings_that_differ(mine: dict[str, Any], theirs: dict[str, Any]
                         ) -> dict[str, dict[str, tuple[str | None, str | None]]]:
    """Per server, the settings (not at their default) that differ between the two runs.
    Servers are matched by their role, never by their order (a run starts its servers side
    by side). A run with one server whose role the other lacks (an existing server's, which
    plays one role of the chapter's) is set beside the other's server most like it, and the
    label names both roles."""
    a = {pooling.role(s): s["settings"] for s in mine["provenance"]["servers"]}
    b = {pooling.role(s): s["settings"] for s in theirs["provenance"]["servers"]}
    shared = sorted(set(a) & set(b))
    if not shared and len(a) == 1 and b:
        (role, settings), = a.items()
        closest = min(b, key=lambda r: (len(_differ(settings, b[r])), r))
        pairs = [(f"{role} | {closest}", settings, b[closest])]
    else:
        pairs = [(role, a[role], b[role]) for role in shared]
    return {label: differ for label, x, y in pairs if (differ := _differ(x, y))}


def recorded_that_differ(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """What both runs recorded of how they ran (pooling.recorded: each server's container, its
    settings at each start and at each reload, its client programs) and differs: what the
    pool's guard would keep the two runs apart by. A field only one of them recorded is not
    a difference, as for the guard."""
    a, b = pooling.recorded(mine), pooling.recorded(theirs)
    return {k: (a[k], b[k]) for k in sorted(set(a) & set(b)) if a[k] != b[k]}


def compare(chapter: Chapter, major: float | None) -> dict[str, Any]:
    doc = latest_here(chapter, major)
    if "unavailable" in doc:
        raise ReproError(f"this machine's run of {chapter.name} could not run: {doc['unavailable']['en']}")
    pool = published(chapter, doc)
    newest = pool.runs[-1].doc
    return {"chapter": chapter.name, "major": doc["major"], "scale": doc["scale"],
            "this_machine_run": doc["provenance"]["started"],
            "published_runs": [r.doc["provenance"]["started"] for r in pool.runs],
            "findings": findings(Run(chapter, doc).verdicts, pool.verdicts),
            "machines": {k: {"this_machine": machine(doc)[k], "published": machine(newest)[k]} for k, _ in MACHINE},
            "settings_that_differ": settings_that_differ(doc, newest),
            "recorded_that_differ": recorded_that_differ(doc, newest)}
