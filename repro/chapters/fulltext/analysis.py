"""From the rounds to what findings and page use: insert throughput ratios, search
latencies summed over words and paired by round, and the mechanism data recorded before
and during the rounds (plans, hit counts, pending lists, replication lag)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ...stats import Rounds, median
from .conditions import (COLUMNS, IDLE, INDEXED, LOADED, NONE, PUBLISHER_INGEST, SINGLE, SUBSCRIBER, WORDS,
                         field, ingest, search)

SHORT = tuple(w for w in WORDS if len(w) < 3)  # no trigram: pg_trgm's weak spot
LONG = tuple(w for w in WORDS if len(w) >= 3)


def kinds(r: Rounds) -> list[str]:
    """The index kinds the run had (pg_bigm and PGroonga only where the image has them)."""
    return [k for k in r.raw.get("kinds", []) if k in INDEXED]


def _paired(r: Rounds, a: str, b: str, fields: Sequence[str]) -> float | None:
    """Median over rounds of the summed `fields` of condition `a` over those of `b`."""
    per_field = [r.pairs(a, b, f) for f in fields]
    pairs = [(sum(x for x, _ in row), sum(y for _, y in row)) for row in zip(*per_field)]
    return median([x / y for x, y in pairs if y])


def fields(columns: Sequence[str] = COLUMNS, words: Sequence[str] = WORDS) -> list[str]:
    return [field(c, w) for c in columns for w in words]


def latency_ratio(r: Rounds, a: str, b: str, columns: Sequence[str] = COLUMNS,
                  words: Sequence[str] = WORDS) -> float | None:
    """Search time of condition `a` over `b` (summed over the words and fields)."""
    return _paired(r, a, b, fields(columns, words))


def ingest_ratio(r: Rounds, a: str, b: str) -> float | None:
    return r.ratio(a, b, "tps")


def rise(r: Rounds, kind: str, where: str = SINGLE, columns: Sequence[str] = COLUMNS,
         words: Sequence[str] = WORDS) -> float | None:
    """How much a kind's searches slow under the background inserts (loaded over idle)."""
    return latency_ratio(r, search(kind, where, LOADED), search(kind, where, IDLE), columns, words)


def extreme(r: Rounds, of: Callable[[str], float | None], pick: Callable[..., float]) -> float | None:
    """The highest or lowest (`pick`) of a statistic over the run's index kinds: a check on it
    holds for every kind."""
    values = [of(k) for k in kinds(r)]
    return None if not values or None in values else pick(values)


def worst_ingest(r: Rounds) -> float | None:
    """The highest of the kinds' insert throughput on descriptions over no index's."""
    return extreme(r, lambda k: ingest_ratio(r, ingest(k, "description"), ingest(NONE)), max)


def worst_length_cost(r: Rounds) -> float | None:
    """The highest of the kinds' insert throughput on descriptions over that on titles."""
    return extreme(r, lambda k: ingest_ratio(r, ingest(k, "description"), ingest(k, "title")), max)


def speedup(r: Rounds, kind: str, load: str, words: Sequence[str] = LONG) -> float | None:
    """No index's search time over the kind's, on the single node."""
    return latency_ratio(r, search(NONE, SINGLE, load), search(kind, SINGLE, load), COLUMNS, words)


def least_speedup(r: Rounds, load: str) -> float | None:
    return extreme(r, lambda k: speedup(r, k, load), min)


def subscriber_over_single(r: Rounds, kind: str, load: str) -> float | None:
    return latency_ratio(r, search(kind, SUBSCRIBER, load), search(kind, SINGLE, load))


def worst_subscriber(r: Rounds, load: str) -> float | None:
    return extreme(r, lambda k: subscriber_over_single(r, k, load), max)


def pending(r: Rounds, kind: str) -> float | None:
    """Median rows in the GIN pending lists of the kind's searched table after a loaded run."""
    return median(r.values(search(kind, SINGLE, LOADED), "pending_tuples"))


def plan_uses_index(raw: dict[str, Any], kind: str, words: Sequence[str]) -> int | None:
    """How many of the kind's searches for `words` (both fields) have an index in their plan."""
    plans = raw.get("plans", {})
    keys = [f"{kind}/{c}:{w}" for c in COLUMNS for w in words]
    if not all(k in plans for k in keys):
        return None
    return sum("Index" in plans[k] for k in keys)


def hit_mismatches(raw: dict[str, Any]) -> int | None:
    """Searches (kind, field, word) whose count differs from the scan without an index."""
    hits = raw.get("hits", {})
    if not hits:
        return None
    return sum(n != hits[f"{NONE}/{key.split('/', 1)[1]}"] for key, n in hits.items())


def longest_lag(r: Rounds) -> float | None:
    """The longest replay lag (s) seen during the loaded searches on the subscriber; none
    when the server reported none (a NULL replay_lag is missing, not zero)."""
    def of(kind: str) -> float | None:
        lags = [v for v in r.values(search(kind, SUBSCRIBER, LOADED), "lag_max_s") if v is not None]
        return max(lags) if lags else None
    return extreme(r, of, max)


def apply_share(r: Rounds) -> float | None:
    """The subscriber's apply rate over the publisher's insert rate: the publisher's span
    from its first to its last insert over the span from that first insert until the
    subscriber applied the last (both by the servers' clocks). A subscriber that keeps up
    reads just under 1, by the last row's apply latency (0.3-1.2 ms in such rounds of
    2026-11-25). None for a run from before these spans were recorded: it timed the apply
    another way."""
    records = r.records(PUBLISHER_INGEST)
    if any("apply_s" not in x for x in records):
        return None
    return median([x["insert_s"] / x["apply_s"] for x in records])


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """Medians per condition and field, for the page's tables."""
    r = Rounds(raw)
    return {c: {k: median(r.values(c, k)) for k in r.records(c)[0] if k != "round"} for c in r.conditions()}
