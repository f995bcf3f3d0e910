"""From the rounds to what findings and page use: pooled wait-event shares, medians.

Shares pool the samples of the rounds a view holds, so a view of one round gives that
round's own share, the value the intervals are computed over. Event names are made canonical across majors.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from ...stats import Rounds, median

CPU = "CPU"  # the key the lab (waits.event_key) gives a sample of a backend that was not waiting
MODES = ("normal", "unlogged", "async")
# Wait events that mean "waiting for the WAL to reach the disk". Their names changed:
# the LWLock was WALWriteLock up to 12 (renamed in 13); IO events are WALSync/WALWrite up to
# 16 and WalSync/WalWrite from 17. Keys are compared in lower case; values are the names shown.
CANONICAL = {"lwlock:walwritelock": "LWLock:WALWrite", "lwlock:walwrite": "LWLock:WALWrite",
             "io:walsync": "IO:WALSync", "io:walwrite": "IO:WALWrite"}
WAL_FLUSH = ("LWLock:WALWrite", "IO:WALSync", "IO:WALWrite")
CLIENT_READ, TRANSACTIONID = "Client:ClientRead", "Lock:transactionid"
METHODS = ("sampling", "activity")  # pg_wait_sampling, polling pg_stat_activity


def canonical(key: str) -> str:
    return CANONICAL.get(key.lower(), key)


def pooled(records: list[dict], method: str) -> Counter[str]:
    """One profile: the samples of the records added up, names made canonical (none where
    the image had no pg_wait_sampling)."""
    total: Counter[str] = Counter()
    for record in records:
        for key, count in (record[f"waits_{method}"] or {}).items():
            total[canonical(key)] += count
    return total


def waiting_shares(profile: Counter[str]) -> dict[str, float]:
    """Each wait event's share in % of the samples that waited (CPU samples left out,
    as the original's `WHERE event IS NOT NULL`)."""
    waiting = {k: v for k, v in profile.items() if k != CPU}
    total = sum(waiting.values())
    return {k: v / total * 100 for k, v in sorted(waiting.items())} if total else {}


def all_shares(profile: Counter[str]) -> dict[str, float]:
    """Each event's share of all samples, CPU included: of the backends' time, not their waits."""
    total = sum(profile.values())
    return {k: v / total * 100 for k, v in sorted(profile.items())} if total else {}


def events(event: str) -> tuple[str, ...]:
    return WAL_FLUSH if event == "WAL" else (event,)


def share(rounds: Rounds, condition: str, event: str, method: str = "sampling") -> float:
    """An event's (or "WAL": all WAL-flush events') share of waiting samples."""
    values = waiting_shares(pooled(rounds.records(condition), method))
    return sum(values.get(e, 0.0) for e in events(event))


def share_of_time(rounds: Rounds, condition: str, event: str, method: str) -> float | None:
    """An event's share of all samples; None where the method does not count samples of
    processes that are not waiting (pg_wait_sampling without sample_cpu)."""
    if method == "sampling" and not rounds.raw.get("sampling_counts_cpu"):
        return None
    values = all_shares(pooled(rounds.records(condition), method))
    return sum(values.get(e, 0.0) for e in events(event)) if values else None


def wal_sync_time_pct(rounds: Rounds, condition: str, seconds: float) -> float | None:
    """Time the server measured in WAL fsyncs, in % of the runs' length (14+)."""
    records = rounds.records(condition)
    timed = [r["wal_sync_ms"] for r in records if r.get("wal_sync_ms") is not None]
    if not records or len(timed) < len(records):
        return None
    return sum(timed) / (len(records) * seconds * 1000) * 100


def sampled(raw: dict[str, Any]) -> bool:
    """Whether pg_wait_sampling sampled (results before 2026-11-25 always did)."""
    return raw.get("wait_sampling", True)


def seconds_of(raw: dict[str, Any], condition: str) -> float:
    """How long the condition's runs lasted (the control runs can be longer)."""
    return raw["control_seconds"] if condition.startswith("control/") else raw["seconds"]


def ratio_to_time(rounds: Rounds, condition: str, method: str) -> float | None:
    """A method's IO:WALSync share of all samples over the share of time the server measured
    in WAL fsyncs, in the same runs."""
    sampled = share_of_time(rounds, condition, "IO:WALSync", method)
    timed = wal_sync_time_pct(rounds, condition, seconds_of(rounds.raw, condition))
    return sampled / timed if sampled is not None and timed else None


def placement_ratio(rounds: Rounds) -> float | None:
    """Per round, the IO:WALSync share of all samples that the poll on the workload's CPU saw
    over the share that the poll on its own CPU saw (the two run in the same round); the
    median over rounds, so that one disturbed round (a burst of steal time) does not decide."""
    same, own = rounds.records("control/same_cpu"), rounds.records("control/own_cpu")
    if len(same) != len(own):
        return None

    def walsync(record: dict) -> float:
        return all_shares(pooled([record], "activity")).get("IO:WALSync", 0.0)

    ratios = [walsync(s) / walsync(o) for s, o in zip(same, own) if walsync(o)]
    return median(ratios) if ratios else None


def cpu_others(record: dict[str, Any]) -> float:
    """The share of the machine's CPU time that processes outside the server's container used
    during one run (%): CPU taken from the idle time F8 reads."""
    return record["cpu"]["us"] + record["cpu"]["sy"] - record["cpu_container"]


def cpu_means(records: list[dict[str, Any]]) -> dict[str, float] | None:
    """The mean CPU split of the records (the mean, not the median, so that us + sy + wa +
    st + id stays 100 %); None where it was not read (an existing server's machine)."""
    if any(r["cpu"] is None for r in records):
        return None
    return {k: sum(r["cpu"][k] for r in records) / len(records) for k in records[0]["cpu"]}


def peak_tps(rounds: Rounds, mode: str, clients: list[int]) -> float:
    """The mode's highest median TPS over the client counts."""
    return max(median(rounds.values(f"{mode}/{c}", "tps")) for c in clients)


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """Per condition: medians of TPS and latency, mean CPU split, pooled shares (both methods,
    of waits and of all samples), the server's WAL fsync timing."""
    rounds = Rounds(raw)
    conditions = {}
    for condition in rounds.conditions():
        records = rounds.records(condition)
        profiles = {m: pooled(records, m) for m in METHODS}
        timed = [r["wal_sync_ms"] for r in records if r.get("wal_sync_ms") is not None]
        syncs = sum(r["wal_syncs"] for r in records if r.get("wal_syncs") is not None)
        cpu = cpu_means(records)
        conditions[condition] = {
            "tps": median([r["tps"] for r in records]),
            "latency_ms": median([r["latency_ms"] for r in records]),
            "cpu": cpu,
            "cpu_others": sum(cpu_others(r) for r in records) / len(records) if cpu else None,
            **{f"shares_{m}": waiting_shares(p) for m, p in profiles.items()},
            **{f"samples_{m}": sum(p.values()) for m, p in profiles.items()},
            "wal_sync_time_pct": wal_sync_time_pct(rounds, condition, seconds_of(raw, condition)),
            "wal_sync_mean_ms": sum(timed) / syncs if timed and syncs else None,
            "poll_ms": median([r["poll_ms"] for r in records]),
            "rounds": len(records),
        }
    fsync = raw["pg_test_fsync"] or []  # None: not run (an existing server's machine)
    one_write = [r for r in fsync if r["section"].endswith("one 8kB write")]
    return {"clients": params["clients"], "conditions": conditions, "fsync": fsync,
            "fdatasync_us": next((r["usecs"] for r in one_write if r["method"] == "fdatasync"), None)}
