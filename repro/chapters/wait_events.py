"""Chapter: wait events expose the WAL bottleneck.

Publication 003 (ぱと隊長日誌, PostgreSQL 14.5, pg_wait_sampling): pgbench's
TPC-B-like workload at 1..24 clients in three modes (normal, --unlogged-tables,
synchronous_commit = off), with vmstat and a pg_wait_sampling profile per run.

Here one server holds two copies of pgbench's tables: logged ones in `public`
and unlogged ones in the schema `unlogged` (pgbench finds them through its
search_path). The modes differ only in session settings, so every mode and
client count runs on the same server, interleaved round by round. Each run
samples wait events twice, with pg_wait_sampling and by polling
pg_stat_activity, and reads the machine's CPU counters before and after.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..chapter import (Chapter, Chart, Finding, Outcome, RunContext, Series, Table,
                       scaling_table)
from ..lab import Server
from ..measure import median, run_rounds
from ..pgtools import parse_test_fsync
from ..text import Number, Text
from ..waits import (CPU, ActivitySampler, cpu_split, cpu_times, reset_wait_sampling, shares,
                     wait_sampling_profile)

# -- the original publication (003) ------------------------------------------------

SETTINGS = {  # 003's postgresql.conf changes, verbatim
    "shared_buffers": "2GB", "effective_cache_size": "6GB", "maintenance_work_mem": "512MB",
    "checkpoint_completion_target": "0.9", "wal_buffers": "16MB",
    "default_statistics_target": "100", "random_page_cost": "1.1",
    "effective_io_concurrency": "200", "work_mem": "10485kB", "min_wal_size": "2GB",
    "max_wal_size": "8GB", "max_worker_processes": "4", "max_parallel_workers_per_gather": "2",
    "max_parallel_workers": "4", "max_parallel_maintenance_workers": "2", "autovacuum": "off",
    "shared_preload_libraries": "pg_wait_sampling",
}
ORIGINAL_SCALE = {"pgbench_scale": 32, "clients": list(range(1, 25)), "seconds": 180, "rounds": 1}

# -- the experiment --------------------------------------------------------------------

MODES = {  # mode -> (schema of its tables, session settings)
    "normal": ("public", {}),
    "unlogged": ("unlogged", {"search_path": "unlogged"}),
    "async": ("public", {"synchronous_commit": "off"}),
}
SCALES = {
    # clients: pgbench -c (and -j, one thread per client as in 003); seconds: one run;
    # rounds: repetitions of every mode x clients, interleaved; fsync_s: pg_test_fsync -s
    "tiny": {"pgbench_scale": 16, "clients": [1, 4, 16], "seconds": 2, "rounds": 3, "fsync_s": 1},
    "default": {"pgbench_scale": 16, "clients": [1, 2, 4, 8, 16], "seconds": 4, "rounds": 3,
                "fsync_s": 2},
    "full": {**ORIGINAL_SCALE, "fsync_s": 5},
}
FSYNC_FILE = "/var/lib/postgresql/data/pg_test_fsync.tmp"  # the WAL's own storage


def _prepare(server: Server, scale: int) -> None:
    server.sql("CREATE EXTENSION pg_wait_sampling")
    server.pgbench_init(scale)
    server.sql("CREATE SCHEMA unlogged")
    server.pgbench_init(scale, "--unlogged-tables", options={"search_path": "unlogged"})
    for schema, options in MODES.values():  # warm-up: caches and the WAL files
        server.pgbench(["-n", "-c", "4", "-j", "4", "-T", "1"], options=options)


def _vacuum(server: Server, schema: str) -> None:
    """What pgbench does before a run (unless -n), but outside the measured window."""
    server.sql(f"VACUUM {schema}.pgbench_branches, {schema}.pgbench_tellers")
    server.sql(f"TRUNCATE {schema}.pgbench_history")


def _measure(server: Server, mode: str, clients: int, seconds: int) -> Any:
    schema, options = MODES[mode]

    def one() -> dict[str, dict[str, Any]]:
        _vacuum(server, schema)
        reset_wait_sampling(server)
        cpu_before = cpu_times(server)
        with ActivitySampler(server) as sampler:
            r = server.pgbench(["-n", "-c", str(clients), "-j", str(clients), "-T", str(seconds)],
                               options=options)
        cpu_after = cpu_times(server)
        return {f"{mode}/{clients}": {
            "tps": r.tps, "latency_ms": r.latency_avg_ms, "cpu": cpu_split(cpu_before, cpu_after),
            "waits_sampling": dict(wait_sampling_profile(server, sampler.pids)),
            "waits_activity": dict(sampler.profile), "backends": len(sampler.pids),
            "polls": sampler.polls}}
    return one


def run(ctx: RunContext) -> dict[str, Any]:
    p = ctx.params
    ctx.progress.step(f"server with pg_wait_sampling; pgbench -i -s {p['pgbench_scale']}, "
                      f"logged and unlogged")
    server = ctx.server("TPC-B, pg_wait_sampling", SETTINGS)
    _prepare(server, p["pgbench_scale"])
    ctx.progress.step("pg_test_fsync")
    fsync_output = server.run(["pg_test_fsync", "-s", str(p["fsync_s"]), "-f", FSYNC_FILE])
    runs = {f"{mode} · {c} clients": _measure(server, mode, c, p["seconds"])
            for mode in MODES for c in p["clients"]}
    measured = run_rounds(p["rounds"], runs, ctx.progress)
    fsync = parse_test_fsync(fsync_output)
    return {"raw": {"pgbench": measured, "pg_test_fsync": fsync},
            "summary": summarize(measured, fsync, p["clients"])}


def steps(p: dict[str, Any]) -> int:
    return 2 + p["rounds"] * len(MODES) * len(p["clients"])


# -- summary -----------------------------------------------------------------------------

# Wait events that mean "waiting for the WAL to reach the disk". Their names changed:
# the LWLock was WALWriteLock up to 13; IO events are WALSync/WALWrite up to 16 and
# WalSync/WalWrite from 17. Keys are compared in lower case; values are the names shown.
CANONICAL = {"lwlock:walwritelock": "LWLock:WALWrite", "lwlock:walwrite": "LWLock:WALWrite",
             "io:walsync": "IO:WALSync", "io:walwrite": "IO:WALWrite"}
WAL_FLUSH = ("LWLock:WALWrite", "IO:WALSync", "IO:WALWrite")
CLIENT_READ, TRANSACTIONID = "Client:ClientRead", "Lock:transactionid"


def canonical(key: str) -> str:
    return CANONICAL.get(key.lower(), key)


def _pooled(rows: list[dict], field: str) -> dict[str, int]:
    """One profile per condition: the samples of all rounds added up, names made canonical."""
    total: Counter[str] = Counter()
    for row in rows:
        for key, count in row[field].items():
            total[canonical(key)] += count
    return dict(total)


def summarize(measured: dict[str, list[dict]], fsync: list[dict], clients: list[int]
              ) -> dict[str, Any]:
    conditions = {}
    for condition, rows in measured.items():
        sampling, activity = _pooled(rows, "waits_sampling"), _pooled(rows, "waits_activity")
        all_samples = sum(sampling.values())
        conditions[condition] = {
            "tps": median([r["tps"] for r in rows]),
            "latency_ms": median([r["latency_ms"] for r in rows]),
            "tps_runs": [r["tps"] for r in rows],
            # the mean, not the median, so that us + sy + wa + st + id stays 100 %
            "cpu": {k: sum(r["cpu"][k] for r in rows) / len(rows) for k in rows[0]["cpu"]},
            "shares_sampling": shares(sampling), "shares_activity": shares(activity),
            "samples_sampling": all_samples, "samples_activity": sum(activity.values()),
            "cpu_samples_pct": sampling.get(CPU, 0) / all_samples * 100 if all_samples else None,
        }
    one_write = [r for r in fsync if r["section"].endswith("one 8kB write")]
    return {"clients": clients, "conditions": conditions, "fsync": fsync,
            "fdatasync_us": next((r["usecs"] for r in one_write if r["method"] == "fdatasync"),
                                 None)}


# -- findings -----------------------------------------------------------------------------

# Thresholds, set from repeated default-scale runs (see the page and the issue note).
# normal mode: WAL-flush waits at least this share at every client count. Over 11 runs (6 default,
# 5 tiny) the lowest share was 21-24 % with pg_wait_sampling and 9.5-24 % polling pg_stat_activity
# (always at 1 client; F5 judges F1 on those shares too); unlogged and async stayed <= 0.04 %.
WAL_LARGE_PCT = 5.0
WALWRITE_MAX_PCT = 10.0  # ... and LWLock:WALWrite at least this at the most clients
WAL_GONE_PCT = 2.0  # unlogged / async: WAL-flush waits below this everywhere
PEAK_RATIO = 1.3  # unlogged / async peak TPS at least this times normal's peak
CPU_LIMIT_IDLE_PCT = 10.0  # "at the CPU limit": idle below this at some client count
XID_MAX_PCT = 5.0  # Lock:transactionid at least this share at the most clients


def _share(s: dict, mode: str, clients: int, event: str, method: str = "sampling") -> float:
    values = s["conditions"][f"{mode}/{clients}"][f"shares_{method}"]
    return sum(values.get(e, 0.0) for e in (WAL_FLUSH if event == "WAL" else (event,)))


def _points(s: dict) -> tuple[int, int, int]:
    """The fewest, a middle and the most clients: where "grows with clients" is judged."""
    c = s["clients"]
    return c[0], c[len(c) // 2], c[-1]


def _pct(value: float) -> Number:
    return Number(value, "%", 1)


def _at(mode: str, clients: int) -> Text:
    m = MODE_LABELS[mode]
    return Text(f"{m.ja}、{clients} クライアント", f"{m.en}, {clients} clients")


def _grows(values: list[float]) -> bool:
    return all(a < b for a, b in zip(values, values[1:]))


def f1(s: dict, method: str = "sampling") -> Outcome:
    lo, mid, hi = _points(s)
    wal = {c: _share(s, "normal", c, "WAL", method) for c in s["clients"]}
    walwrite = [_share(s, "normal", c, "LWLock:WALWrite", method) for c in (lo, mid, hi)]
    holds = (min(wal.values()) >= WAL_LARGE_PCT and _grows(walwrite)
             and walwrite[-1] >= WALWRITE_MAX_PCT)
    smallest = min(wal, key=wal.get)
    measured = [(Text(f"WAL フラッシュ待ちの最小 ({smallest} クライアント)",
                      f"WAL-flush waits, lowest ({smallest} clients)"), _pct(wal[smallest]))]
    measured += [(Text(f"LWLock:WALWrite、{c} クライアント", f"LWLock:WALWrite, {c} clients"),
                  _pct(v)) for c, v in zip((lo, mid, hi), walwrite)]
    return Outcome(holds, measured, Text(
        f"通常モード: WAL フラッシュ待ちが全クライアント数で ≥ {WAL_LARGE_PCT:g} %、"
        f"LWLock:WALWrite が {lo} → {mid} → {hi} クライアントで増え、最後は ≥ {WALWRITE_MAX_PCT:g} %",
        f"normal mode: WAL-flush waits ≥ {WAL_LARGE_PCT:g} % at every client count; "
        f"LWLock:WALWrite grows from {lo} to {mid} to {hi} clients, ending ≥ {WALWRITE_MAX_PCT:g} %"))


def f2(s: dict, method: str = "sampling") -> Outcome:
    holds, measured = True, []
    for mode in ("unlogged", "async"):
        wal = max(_share(s, mode, c, "WAL", method) for c in s["clients"])
        lowest_read = min(s["clients"], key=lambda c: _share(s, mode, c, CLIENT_READ, method))
        for c in s["clients"]:
            values = s["conditions"][f"{mode}/{c}"][f"shares_{method}"]
            holds &= bool(values) and max(values, key=values.get) == CLIENT_READ
        holds &= wal < WAL_GONE_PCT
        m = MODE_LABELS[mode]
        measured += [(Text(f"{m.ja}: WAL フラッシュ待ちの最大", f"{m.en}: WAL-flush waits, highest"),
                      _pct(wal)),
                     (Text(f"{m.ja}: ClientRead の最小 ({lowest_read} クライアント)",
                           f"{m.en}: ClientRead, lowest ({lowest_read} clients)"),
                      _pct(_share(s, mode, lowest_read, CLIENT_READ, method)))]
    return Outcome(holds, measured, Text(
        f"unlogged と非同期コミット: WAL フラッシュ待ちが全クライアント数で < {WAL_GONE_PCT:g} %、"
        f"最も多い待機イベントが全クライアント数で Client:ClientRead",
        f"unlogged and asynchronous commit: WAL-flush waits < {WAL_GONE_PCT:g} % at every client "
        f"count, and Client:ClientRead the largest wait event at every client count"))


def _peak(s: dict, mode: str) -> int:
    return max(s["clients"], key=lambda c: s["conditions"][f"{mode}/{c}"]["tps"])


def f3(s: dict) -> Outcome:
    normal = s["conditions"][f"normal/{_peak(s, 'normal')}"]["tps"]
    holds, measured = True, []
    for mode in ("unlogged", "async"):
        ratio = s["conditions"][f"{mode}/{_peak(s, mode)}"]["tps"] / normal
        idle = min(s["conditions"][f"{mode}/{c}"]["cpu"]["id"] for c in s["clients"])
        holds &= ratio >= PEAK_RATIO and idle < CPU_LIMIT_IDLE_PCT
        m = MODE_LABELS[mode]
        measured += [(Text(f"{m.ja}: 最大 TPS / 通常モードの最大 TPS", f"{m.en}: peak TPS / normal peak TPS"),
                      Number(ratio, "×", 2)),
                     (Text(f"{m.ja}: CPU アイドルの最小", f"{m.en}: CPU idle, lowest"), _pct(idle))]
    return Outcome(holds, measured, Text(
        f"unlogged と非同期コミットの最大 TPS が通常モードの最大の ≥ {PEAK_RATIO:g} 倍、"
        f"CPU アイドルがいずれかのクライアント数で < {CPU_LIMIT_IDLE_PCT:g} % (CPU の限界に達する)",
        f"the peak TPS of unlogged and of asynchronous commit ≥ {PEAK_RATIO:g} × normal's peak, "
        f"and their CPU idle < {CPU_LIMIT_IDLE_PCT:g} % at some client count (the CPU limit)"))


def f4(s: dict, method: str = "sampling") -> Outcome:
    lo, mid, hi = _points(s)
    holds, measured = True, []
    for mode in MODES:
        values = [_share(s, mode, c, TRANSACTIONID, method) for c in (lo, mid, hi)]
        holds &= _grows(values) and values[-1] >= XID_MAX_PCT
        measured += [(_at(mode, c), _pct(v)) for c, v in zip((lo, mid, hi), values)]
    return Outcome(holds, measured, Text(
        f"3 モードとも Lock:transactionid が {lo} → {mid} → {hi} クライアントで増え、"
        f"{hi} クライアントで ≥ {XID_MAX_PCT:g} %",
        f"in all three modes Lock:transactionid grows from {lo} to {mid} to {hi} clients and "
        f"reaches ≥ {XID_MAX_PCT:g} % at {hi}"))


def method_gaps(s: dict) -> dict[str, float]:
    """Per mode and client count: the largest gap between the two methods' shares (points),
    over the events the findings use."""
    return {f"{mode}/{c}": max(abs(_share(s, mode, c, e) - _share(s, mode, c, e, "activity"))
                               for e in ("WAL", CLIENT_READ, TRANSACTIONID))
            for mode in MODES for c in s["clients"]}


def f5(s: dict) -> Outcome:
    gaps = method_gaps(s)
    same_top = all(
        max(v["shares_sampling"], key=v["shares_sampling"].get)
        == max(v["shares_activity"], key=v["shares_activity"].get)
        for v in s["conditions"].values() if v["shares_sampling"] and v["shares_activity"])
    same_findings = {f.__name__.upper(): f(s, "activity").holds for f in (f1, f2, f4)}
    worst = max(gaps, key=gaps.get)
    mode, clients = worst.split("/")
    measured = [(Text(f"{name} (pg_stat_activity の割合で判定)", f"{name} (judged on pg_stat_activity's shares)"),
                 Number(1 if holds else 0, "", 0)) for name, holds in same_findings.items()]
    measured += [(Text(f"割合の最大の差 ({_at(mode, int(clients)).ja})",
                       f"largest gap between shares ({_at(mode, int(clients)).en})"),
                  Number(gaps[worst], "pt", 1)),
                 (Text("割合の差の中央値", "median gap between shares"),
                  Number(median(list(gaps.values())), "pt", 1))]
    return Outcome(same_top and all(same_findings.values()), measured, Text(
        "pg_stat_activity のサンプルの割合でも F1・F2・F4 が成り立ち (1 = 成立)、全条件で最多の待機イベントが"
        "pg_wait_sampling と一致",
        "F1, F2 and F4 also hold on pg_stat_activity's shares (1 = holds), and in every condition both "
        "methods name the same largest wait event"))


FINDINGS = [
    Finding("F1", Text("通常モードでは WAL フラッシュ待ちが待機の大きな割合を占め、LWLock:WALWrite は"
                       "クライアント数とともに増える",
                       "In normal mode, waits for WAL flushes take a large share of the waits, and "
                       "LWLock:WALWrite grows with the clients"), f1),
    Finding("F2", Text("unlogged テーブルと非同期コミットでは WAL 待ちがほぼ消え、Client:ClientRead が"
                       "大半を占める",
                       "With unlogged tables and with asynchronous commit the WAL waits all but vanish "
                       "and Client:ClientRead dominates"), f2),
    Finding("F3", Text("unlogged と非同期コミットの TPS は CPU の限界まで伸び、通常モードより高くなる",
                       "Unlogged and asynchronous-commit TPS grows up to the CPU limit, above normal "
                       "mode's"), f3),
    Finding("F4", Text("どのモードでも Lock:transactionid (pgbench_branches の行ロック待ち) は"
                       "クライアント数とともに増える",
                       "In every mode Lock:transactionid (row locks on pgbench_branches) grows with "
                       "the clients"), f4),
    Finding("F5", Text("pg_stat_activity を短い間隔で読むだけでも、pg_wait_sampling と同じ結論が得られる",
                       "Polling pg_stat_activity at a short interval leads to the same conclusions as "
                       "pg_wait_sampling"), f5),
]

# -- what the page shows ----------------------------------------------------------------

MODE_LABELS = {
    "normal": Text("通常", "normal"),
    "unlogged": Text("unlogged", "unlogged"),
    "async": Text("非同期コミット", "asynchronous commit"),
}
SHOWN_EVENTS = [CLIENT_READ, *WAL_FLUSH, TRANSACTIONID, "Lock:tuple"]
OTHER = Text("その他", "other")
CPU_FIELDS = {"us": Text("us (ユーザー)", "us (user)"), "sy": Text("sy (システム)", "sy (system)"),
              "wa": Text("wa (I/O 待ち)", "wa (I/O wait)"), "st": Text("st (スチール)", "st (steal)"),
              "id": Text("id (アイドル)", "id (idle)")}


def _clients(s: dict) -> list[Text]:
    return [Text(str(c), str(c)) for c in s["clients"]]


def _per_mode_chart(title: Text, field: str, y_label: Text):
    def build(s: dict) -> Chart:
        series = [Series(MODE_LABELS[m], [s["conditions"][f"{m}/{c}"][field] for c in s["clients"]])
                  for m in MODES]
        return Chart(title, _clients(s), series, y_label, Text("クライアント数", "clients"), kind="line")
    return build


def cpu_chart(s: dict) -> Chart:
    keys = [(m, c) for m in MODES for c in s["clients"]]
    series = [Series(label, [s["conditions"][f"{m}/{c}"]["cpu"][f] for m, c in keys])
              for f, label in CPU_FIELDS.items()]
    return Chart(Text("CPU 使用率 (/proc/stat、マシン全体)", "CPU utilisation (/proc/stat, whole machine)"),
                 [Text(f"{MODE_LABELS[m].ja} {c}", f"{MODE_LABELS[m].en} {c}") for m, c in keys],
                 series, Text("CPU 時間 [%]", "CPU time [%]"), kind="stacked")


def _waits_chart(mode: str):
    def build(s: dict) -> Chart:
        rows = [s["conditions"][f"{mode}/{c}"]["shares_sampling"] for c in s["clients"]]
        series = [Series(Text(e, e), [r.get(e, 0.0) for r in rows]) for e in SHOWN_EVENTS]
        series.append(Series(OTHER, [sum(v for k, v in r.items() if k not in SHOWN_EVENTS)
                                     for r in rows]))
        m = MODE_LABELS[mode]
        return Chart(Text(f"{m.ja}: 待機イベントの割合 (pg_wait_sampling)",
                          f"{m.en}: wait-event shares (pg_wait_sampling)"),
                     _clients(s), series, Text("待機サンプルに占める割合 [%]", "share of waiting samples [%]"),
                     Text("クライアント数", "clients"), kind="stacked")
    return build


COL = {
    "mode": Text("モード", "Mode"), "clients": Text("クライアント", "Clients"),
    "tps": Text("TPS", "TPS"), "latency": Text("レイテンシ [ms]", "Latency [ms]"),
}


def throughput_table(s: dict) -> Table:
    rows = []
    for m in MODES:
        for c in s["clients"]:
            v = s["conditions"][f"{m}/{c}"]
            rows.append([MODE_LABELS[m], Number(c, "", 0), Number(v["tps"], "", 0),
                         Number(v["latency_ms"], "", 2),
                         *(Number(v["cpu"][f], "%", 0) for f in CPU_FIELDS)])
    return Table(Text("TPS と平均レイテンシ (中央値)、CPU 使用率 (平均)",
                      "TPS and latency average (medians), CPU (means)"),
                 [COL["mode"], COL["clients"], COL["tps"], COL["latency"],
                  *(Text(f, f) for f in CPU_FIELDS)], rows)


def _pair(a: Number, b: Number) -> Text:
    """Two values in one cell, "pg_wait_sampling / pg_stat_activity"."""
    return Text(f"{a.format('ja')} / {b.format('ja')}", f"{a.format('en')} / {b.format('en')}")


def methods_table(s: dict) -> Table:
    rows = []
    for m in MODES:
        for c in s["clients"]:
            v = s["conditions"][f"{m}/{c}"]
            rows.append([MODE_LABELS[m], Number(c, "", 0),
                         *(_pair(_pct(_share(s, m, c, e)), _pct(_share(s, m, c, e, "activity")))
                           for e in ("WAL", CLIENT_READ, TRANSACTIONID)),
                         _pair(Number(v["samples_sampling"], "", 0), Number(v["samples_activity"], "", 0))])
    return Table(Text("2 つのサンプリング方法の比較: 待機サンプルに占める割合 "
                      "(pg_wait_sampling / pg_stat_activity)",
                      "The two sampling methods compared: share of waiting samples "
                      "(pg_wait_sampling / pg_stat_activity)"),
                 [COL["mode"], COL["clients"], Text("WAL フラッシュ", "WAL flush"),
                  Text("ClientRead", "ClientRead"), Text("transactionid", "transactionid"),
                  Text("サンプル数", "Samples")], rows)


def fsync_table(s: dict) -> Table:
    rows = [[Text(r["section"], r["section"]), r["method"], Number(r["ops_per_s"], "", 0),
             Number(r["usecs"], "", 0)] for r in s["fsync"]]
    return Table(Text("pg_test_fsync (データディレクトリと同じストレージ)",
                      "pg_test_fsync (on the data directory's storage)"),
                 [Text("テスト", "Test"), Text("方式", "Method"), Text("ops/s", "ops/s"),
                  Text("µs/op", "µs/op")], rows)


SCALE_ROWS = [
    ("pgbench_scale", Text("pgbench のスケールファクタ", "pgbench scale factor")),
    ("clients", Text("クライアント数 (= スレッド数)", "clients (= threads)")),
    ("seconds", Text("1 回の実行時間 [s]", "run length [s]")),
    ("rounds", Text("繰り返し (ラウンド)", "repetitions (rounds)")),
]


def numbers(s: dict) -> dict[str, Number]:
    c = s["conditions"]
    out: dict[str, Number] = {"fdatasync_us": Number(s["fdatasync_us"], "µs", 0)}
    for mode in MODES:
        peak = _peak(s, mode)
        out[f"{mode}.peak_tps"] = Number(c[f"{mode}/{peak}"]["tps"], "", 0)
        out[f"{mode}.peak_clients"] = Number(peak, "", 0)
    hi = s["clients"][-1]
    out["normal.wal_max_clients"] = _pct(_share(s, "normal", hi, "WAL"))
    out["normal.idle_peak"] = _pct(c[f"normal/{_peak(s, 'normal')}"]["cpu"]["id"])
    out["max_clients"] = Number(hi, "", 0)
    out["methods.max_gap"] = Number(max(method_gaps(s).values()), "pt", 1)
    return out


CHAPTER = Chapter(
    name="wait_events",
    title=Text("待機イベントで WAL のボトルネックを見つける", "Wait events expose the WAL bottleneck"),
    source=Path(__file__),
    scales=SCALES,
    run=run,
    findings=FINDINGS,
    steps=steps,
    tables={"throughput": throughput_table, "methods": methods_table, "fsync": fsync_table,
            "scaling": scaling_table(SCALE_ROWS, ORIGINAL_SCALE, SCALES)},
    charts={"tps": _per_mode_chart(Text("TPS とクライアント数", "TPS against clients"), "tps",
                                   Text("TPS", "TPS")),
            "latency": _per_mode_chart(Text("平均レイテンシとクライアント数", "Latency against clients"),
                                       "latency_ms", Text("平均レイテンシ [ms]", "latency average [ms]")),
            "cpu": cpu_chart,
            **{f"waits_{m}": _waits_chart(m) for m in MODES}},
    numbers=numbers,
)
