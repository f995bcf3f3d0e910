"""Parse pgbench's text output into typed values.

pgbench's summary changed between majors (13 prints two tps lines "including/
excluding connections establishing", 14+ prints "initial connection time" and
"without initial connection time"; 15+ adds failures); the parser accepts all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ReproError

_PROGRESS = re.compile(
    r"^progress: (?P<t>[\d.]+) s, (?P<tps>[\d.]+) tps, lat (?P<lat>[\d.]+) ms"
    r" stddev (?P<sd>[\d.]+|NaN)"
)
_TPS = re.compile(r"^tps = (?P<tps>[\d.]+) \((?P<kind>[^)]*)\)")
_STATEMENT = re.compile(r"^\s+(?P<ms>[\d.]+)(?:\s+(?P<fail>\d+))?\s+(?P<sql>\S.*)$")
_SCRIPT = re.compile(r"^SQL script (?P<n>\d+): (?P<name>.*)$")


@dataclass
class Progress:
    """One "-P" line: elapsed seconds, tps and latency over the last interval."""

    elapsed_s: float
    tps: float
    latency_ms: float
    stddev_ms: float | None


@dataclass
class Statement:
    """One line of "-r" per-statement latencies."""

    sql: str
    latency_ms: float
    failures: int | None = None


@dataclass
class PgbenchResult:
    """The summary of one pgbench run."""

    transactions: int
    latency_avg_ms: float
    tps: float
    clients: int | None = None
    threads: int | None = None
    failed: int | None = None
    latency_stddev_ms: float | None = None
    initial_connection_ms: float | None = None
    progress: list[Progress] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    scripts: dict[str, list[Statement]] = field(default_factory=dict)


def _value(line: str, key: str) -> str | None:
    """The text after a top-level "key: " line (script sections are indented)."""
    return line[len(key) + 1:] if line.startswith(key + " ") else None


def _number(text: str) -> float:
    return float(text.split()[0])


def parse(output: str) -> PgbenchResult:
    """Parse stdout+stderr of a pgbench run; one line (ReproError) if it has no summary: a
    run that completed no transaction (its -T ended before a client got the CPU), or one that
    failed (its last line)."""
    values: dict[str, float] = {}
    progress: list[Progress] = []
    statements: list[Statement] = []
    scripts: dict[str, list[Statement]] = {}
    current: list[Statement] = statements
    in_statements = False
    tps: float | None = None
    for line in output.splitlines():
        if m := _PROGRESS.match(line):
            sd = m["sd"]
            progress.append(Progress(float(m["t"]), float(m["tps"]), float(m["lat"]),
                                     None if sd == "NaN" else float(sd)))
            continue
        if m := _SCRIPT.match(line):
            current = scripts.setdefault(m["name"], [])
            in_statements = False
            continue
        if m := _TPS.match(line):
            # Keep the figure without connection time (13's "excluding", 14+'s "without").
            if tps is None or "excluding" in m["kind"] or "without" in m["kind"]:
                tps = float(m["tps"])
            continue
        if "statement latencies in milliseconds" in line:
            in_statements = True
            continue
        if in_statements:
            if m := _STATEMENT.match(line):
                current.append(Statement(m["sql"].strip(), float(m["ms"]),
                                         int(m["fail"]) if m["fail"] else None))
                continue
            in_statements = False
        if line.startswith(("latency average", "latency stddev", "initial connection time")):
            key, _, rest = line.partition(" = ")
            values[key] = _number(rest)
        elif v := _value(line, "number of transactions actually processed:"):
            values["processed"] = float(v.split("/")[0])
        elif v := _value(line, "number of failed transactions:"):
            values["failed"] = float(v.split()[0])
        elif v := _value(line, "number of clients:"):
            values["clients"] = float(v)
        elif v := _value(line, "number of threads:"):
            values["threads"] = float(v)
    if values.get("processed") == 0:
        raise ReproError("pgbench completed no transaction: its run ended before a client got the CPU; "
                         "measure on a quiet machine")
    if tps is None or "latency average" not in values or "processed" not in values:
        last = (output.strip().splitlines() or ["nothing"])[-1]
        raise ReproError(f"pgbench output has no summary (tps, latency average, transactions): {last}")

    def optional_int(key: str) -> int | None:
        return int(values[key]) if key in values else None

    return PgbenchResult(
        transactions=int(values["processed"]),
        latency_avg_ms=values["latency average"],
        tps=tps,
        clients=optional_int("clients"),
        threads=optional_int("threads"),
        failed=optional_int("failed"),
        latency_stddev_ms=values.get("latency stddev"),
        initial_connection_ms=values.get("initial connection time"),
        progress=progress,
        statements=statements,
        scripts=scripts,
    )
