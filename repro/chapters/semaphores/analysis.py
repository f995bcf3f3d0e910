"""From the rounds and the traces to what findings and page use: TPS medians per server
and client count, ratios paired by round, the semaphore calls strace saw, and the share
of sampled backends waiting on the WAL write lock."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median
from .conditions import CONTROL, READ, UPDATE, cond

# 13 renamed WALWriteLock; 9.6 typed the named LWLocks LWLockNamed (10 made it LWLock)
WAL_WRITE_EVENTS = ("LWLock:WALWrite", "LWLock:WALWriteLock", "LWLockNamed:WALWriteLock")


def measured_clients(r: Rounds, workload: str, server: str) -> list[int]:
    """The client counts the run measured `workload` at on `server`."""
    prefix = cond(workload, server, 0)[:-1]
    return sorted(int(c[len(prefix):]) for c in r.conditions() if c.startswith(prefix))


MIN_TRACED_CALLS = 10  # the postmaster alone makes one or two; traced backends, hundreds


def trace_of(raw: dict[str, Any], server: str) -> dict[str, Any] | None:
    """The server's trace, or None when it caught almost nothing or its tracer died before the
    workload ended. At the traced client count the update workload's backends sleep on
    LWLocks hundreds of times (every trace of every server so far); a trace of fewer calls
    than MIN_TRACED_CALLS, of any kind, did not follow the backends, and its zero counts are
    no evidence either way; nor are a dead tracer's partial counts."""
    traced = raw.get("semaphore_calls", {}).get(server)
    if traced is None or traced.get("tracer_died") or sum(traced["calls"].values()) < MIN_TRACED_CALLS:
        return None
    return traced


def semaphore_sets_of(raw: dict[str, Any], server: str) -> int | None:
    """System V semaphore sets the server had (ipcs -s)."""
    sets = raw.get("semaphore_sets", {}).get(server)
    return None if sets is None else sets["sets"]


def semaphore_syscalls(raw: dict[str, Any], server: str, calls: tuple[str, ...]) -> int | None:
    """How many of `calls` PGSemaphoreLock/Unlock made in the server's trace."""
    traced = trace_of(raw, server)
    return None if traced is None else sum(traced["via_semaphore"].get(c, 0) for c in calls)


def error_share(raw: dict[str, Any], server: str, call: str, errno: str) -> float | None:
    """Of the failed `call`s in the server's trace, the share that failed with `errno` (%)."""
    errors = (trace_of(raw, server) or {}).get("errors", {})
    failed = {k.split()[1]: n for k, n in errors.items() if k.split()[0] == call}
    return 100.0 * failed.get(errno, 0) / sum(failed.values()) if failed else None


def errors_per_call(raw: dict[str, Any], server: str, calls: tuple[str, ...]) -> float | None:
    """Failed calls per call of `calls` in the server's trace (%)."""
    traced = trace_of(raw, server)
    if traced is None:
        return None
    made = sum(traced["calls"].get(c, 0) for c in calls)
    failed = sum(n for k, n in traced["errors"].items() if k.split()[0] in calls)
    return 100.0 * failed / made if made else None


def lock_user_share(raw: dict[str, Any], server: str, user: str) -> float | None:
    """Of the semaphore calls with a readable stack, the share whose lock was asked for by
    `user` (the first function above the LWLock layer), in %."""
    users = (trace_of(raw, server) or {}).get("lock_users", {})
    named = {u: n for u, n in users.items() if u != "?"}
    return 100.0 * named.get(user, 0) / sum(named.values()) if named else None


def wal_write_share(raw: dict[str, Any], clients: int) -> float | None:
    """Of the sampled backends of the update script at `clients`, the share waiting on the
    WAL write lock (%)."""
    profile = raw.get("wait_samples", {}).get(str(clients))  # JSON keys are strings
    if not profile:
        return None
    return 100.0 * sum(profile.get(e, 0) for e in WAL_WRITE_EVENTS) / sum(profile.values())


def wal_write_growth(raw: dict[str, Any]) -> float | None:
    """The WALWrite share at the most sampled clients over the share at the fewest."""
    sampled = sorted(int(c) for c in raw.get("wait_samples", {}))
    if len(sampled) < 2:
        return None
    low, high = wal_write_share(raw, sampled[0]), wal_write_share(raw, sampled[-1])
    return high / low if low and high is not None else None


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)

    def tps(workload: str, server: str, clients: list[int]) -> dict[int, float | None]:
        return {c: median(r.values(cond(workload, server, c), "tps")) if r.has(cond(workload, server, c)) else None
                for c in clients}

    servers = list(raw.get("versions", {}))
    curves = [s for s in servers if s not in CONTROL]
    return {
        "curves": {w: {s: tps(w, s, params["clients"]) for s in curves} for w in (READ, UPDATE)},
        "control": {s: tps(UPDATE, s, params["control_clients"]) for s in CONTROL if s in servers},
        "wal_write": {c: wal_write_share(raw, c) for c in params["sample_clients"]},
    }
