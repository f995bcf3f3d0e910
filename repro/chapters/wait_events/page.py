"""What the page shows: tables, charts and inline numbers, from a run."""
from __future__ import annotations

from collections.abc import Callable
from functools import cache

from ...chapter import Chart, Run, Series, Table
from ...site.scaling import PGBENCH_SCALE, ROUNDS, RUN_LENGTH, scaling_table
from ...stats import median
from ...text import Number, Text
from ...verdict import Measure
from .analysis import CLIENT_READ, CPU, MODES, TRANSACTIONID, WAL_FLUSH, sampled, share_of_time
from .findings import MODE_LABELS, OTHERS_MAX_PCT, ratio_measure

SHOWN_EVENTS = [CLIENT_READ, *WAL_FLUSH, TRANSACTIONID, "Lock:tuple"]
OTHER = Text("その他", "other")
CPU_FIELDS = {"us": Text("us (ユーザー)", "us (user)"), "sy": Text("sy (システム)", "sy (system)"),
              "wa": Text("wa (I/O 待ち)", "wa (I/O wait)"), "st": Text("st (スチール)", "st (steal)"),
              "id": Text("id (アイドル)", "id (idle)")}
COL = {"mode": Text("モード", "Mode"), "clients": Text("クライアント", "Clients"),
       "tps": Text("TPS [95% 信頼区間]", "TPS [95 % interval]"),
       "latency": Text("レイテンシ [ms]", "Latency [ms]")}
CLIENTS = Text("クライアント数", "clients")


def _pct(value: float | None) -> Number:
    return Number(value, "%", 1)


def _clients(run: Run) -> list[int]:
    return run.summary["clients"]


def _condition(run: Run, key: str) -> dict:
    return run.summary["conditions"][key]


def _cpu(v: dict, field: str) -> float | None:
    """A condition's mean CPU share, None where it was not read (an existing server)."""
    return v["cpu"][field] if v["cpu"] else None


@cache
def _tps_measure(key: str) -> Measure:
    """A condition's median TPS: the page's own (the findings compare peaks)."""
    return Measure(Text(key, key), lambda r: median(r.values(key, "tps")), "", 0, floor=0)


def _tps(run: Run, key: str) -> Number:
    """A condition's median TPS with its interval over rounds."""
    return run.estimate(_tps_measure(key))


def _per_mode_chart(title: Text, field: str, y_label: Text) -> Callable[[Run], Chart]:
    def build(run: Run) -> Chart:
        series = []
        for m in MODES:
            keys = [f"{m}/{c}" for c in _clients(run)]
            if field == "tps":
                numbers = [_tps(run, k) for k in keys]
                series.append(Series(MODE_LABELS[m], [n.value for n in numbers],
                                     [n.low for n in numbers], [n.high for n in numbers]))
            else:
                series.append(Series(MODE_LABELS[m], [_condition(run, k)[field] for k in keys]))
        return Chart(title, [Text(str(c), str(c)) for c in _clients(run)], series, y_label, CLIENTS,
                     kind="line")
    return build


def cpu_chart(run: Run) -> Chart:
    keys = [(m, c) for m in MODES for c in _clients(run)]
    series = [Series(label, [_cpu(_condition(run, f"{m}/{c}"), f) for m, c in keys])
              for f, label in CPU_FIELDS.items()]
    return Chart(Text("CPU 使用率 (/proc/stat、マシン全体)", "CPU utilisation (/proc/stat, whole machine)"),
                 [Text(f"{MODE_LABELS[m].ja} {c}", f"{MODE_LABELS[m].en} {c}") for m, c in keys],
                 series, Text("CPU 時間 [%]", "CPU time [%]"), kind="stacked")


def _waits_chart(mode: str) -> Callable[[Run], Chart]:
    """pg_wait_sampling's shares; pg_stat_activity's where the image has no pg_wait_sampling."""
    def build(run: Run) -> Chart:
        method = "sampling" if sampled(run.raw) else "activity"
        rows = [_condition(run, f"{mode}/{c}")[f"shares_{method}"] for c in _clients(run)]
        series = [Series(Text(e, e), [r.get(e, 0.0) for r in rows]) for e in SHOWN_EVENTS]
        series.append(Series(OTHER, [sum(v for k, v in r.items() if k not in SHOWN_EVENTS)
                                     for r in rows]))
        m = MODE_LABELS[mode]
        source = Text("pg_wait_sampling", "pg_wait_sampling") if method == "sampling" else \
            Text("pg_stat_activity、このイメージには pg_wait_sampling がないため",
                 "pg_stat_activity; this image has no pg_wait_sampling")
        return Chart(Text(f"{m.ja}: 待機イベントの割合 ({source.ja})",
                          f"{m.en}: wait-event shares ({source.en})"),
                     [Text(str(c), str(c)) for c in _clients(run)], series,
                     Text("待機サンプルに占める割合 [%]", "share of waiting samples [%]"), CLIENTS,
                     kind="stacked")
    return build


def throughput_table(run: Run) -> Table:
    rows = []
    for m in MODES:
        for c in _clients(run):
            v = _condition(run, f"{m}/{c}")
            rows.append([MODE_LABELS[m], Number(c, "", 0), _tps(run, f"{m}/{c}"),
                         Number(v["latency_ms"], "", 2),
                         *(Number(_cpu(v, f), "%", 0) for f in CPU_FIELDS)])
    return Table(Text("TPS と平均レイテンシ (ラウンドの中央値)、CPU 使用率 (平均)",
                      "TPS and latency average (medians over rounds), CPU (means)"),
                 [COL["mode"], COL["clients"], COL["tps"], COL["latency"],
                  *(Text(f, f) for f in CPU_FIELDS)], rows)


def _pair(a: Number, b: Number) -> Text:
    """Two values in one cell, "pg_wait_sampling / pg_stat_activity"."""
    return Text(f"{a.format('ja')} / {b.format('ja')}", f"{a.format('en')} / {b.format('en')}")


def methods_table(run: Run) -> Table:
    rows = []
    for m in MODES:
        for c in _clients(run):
            v = _condition(run, f"{m}/{c}")
            cells = [_pair(_pct(sum(v["shares_sampling"].get(e, 0.0) for e in events)
                                if sampled(run.raw) else None),
                           _pct(sum(v["shares_activity"].get(e, 0.0) for e in events)))
                     for events in (WAL_FLUSH, (CLIENT_READ,), (TRANSACTIONID,))]
            rows.append([MODE_LABELS[m], Number(c, "", 0), *cells,
                         _pair(Number(v["samples_sampling"] if sampled(run.raw) else None, "", 0),
                               Number(v["samples_activity"], "", 0))])
    return Table(Text("2 つのサンプリング方法の比較: 待機サンプルに占める割合 "
                      "(pg_wait_sampling / pg_stat_activity)",
                      "The two sampling methods compared: share of waiting samples "
                      "(pg_wait_sampling / pg_stat_activity)"),
                 [COL["mode"], COL["clients"], Text("WAL フラッシュ", "WAL flush"),
                  Text("ClientRead", "ClientRead"), Text("transactionid", "transactionid"),
                  Text("サンプル数", "Samples")], rows)


CONTROL_ROWS = {
    "normal/1": Text("通常モード 1 クライアント (CPU の指定なし)", "normal mode, 1 client (CPUs not set)"),
    "control/same_cpu": Text("対照: 読み取りのバックエンドが pgbench と同じ CPU",
                             "control: the poll's backend on pgbench's CPU"),
    "control/own_cpu": Text("対照: 読み取りのバックエンドが別の CPU", "control: the poll's backend on the other CPU"),
}


def controls_table(run: Run) -> Table:
    rows = []
    for key, label in CONTROL_ROWS.items():
        if not run.rounds.has(key):
            continue
        v = _condition(run, key)
        shares = [_pct(share_of_time(run.rounds, key, e, m)) for e in ("IO:WALSync", CLIENT_READ, CPU)
                  for m in ("sampling", "activity")]
        ratio = run.estimate(ratio_measure(key, "activity", Text(key, key)))  # F6's own is cut when disturbed
        rows.append([label, _tps(run, key), _pct(v["wal_sync_time_pct"]), *shares, ratio,
                     Number(v["wal_sync_mean_ms"], "ms", 3), Number(v["poll_ms"], "ms", 2)])
    methods = (Text("pg_wait_sampling", "pg_wait_sampling"), Text("pg_stat_activity", "pg_stat_activity"))
    return Table(Text("1 クライアント: バックエンドの時間の内訳 (全サンプルに対する割合) と、"
                      "サーバーが測った WAL fsync の時間",
                      "1 client: where the backend's time went (share of all samples), and the time "
                      "the server measured in WAL fsyncs"),
                 [Text("実行", "Runs"), COL["tps"],
                  Text("WAL fsync の時間 (サーバーの計測)", "time in WAL fsync (server's timing)"),
                  *(Text(f"{e} ({m.ja})", f"{e} ({m.en})") for e in ("IO:WALSync", "ClientRead", "CPU")
                    for m in methods),
                  Text("読み取りの IO:WALSync ÷ 計測した時間", "poll's IO:WALSync / timed share"),
                  Text("fsync 1 回の平均", "mean fsync"), Text("読み取りの往復 (中央値)", "poll round trip (median)")],
                 rows, Text("— は、その方法では待っていないサンプルを数えない (pg_wait_sampling の古い版) "
                            "か、サーバーが時間を測らない (PostgreSQL 13) ことを表します。",
                            "— means the method does not count samples of processes that are not "
                            "waiting (older pg_wait_sampling), or the server does not time WAL "
                            "fsyncs (PostgreSQL 13).")).transposed()


def fsync_table(run: Run) -> Table:
    rows = [[Text(r["section"], r["section"]), r["method"], Number(r["ops_per_s"], "", 0),
             Number(r["usecs"], "", 0)] for r in run.summary["fsync"]]
    return Table(Text("pg_test_fsync (データディレクトリと同じストレージ)",
                      "pg_test_fsync (on the data directory's storage)"),
                 [Text("テスト", "Test"), Text("方式", "Method"), Text("ops/s", "ops/s"),
                  Text("µs/op", "µs/op")], rows)


SCALE_ROWS = [
    ("pgbench_scale", PGBENCH_SCALE),
    ("clients", Text("クライアント数 (= スレッド数)", "clients (= threads)")),
    ("seconds", RUN_LENGTH),
    ("rounds", ROUNDS),
]


def _peak(run: Run, mode: str) -> int:
    return max(_clients(run), key=lambda c: _condition(run, f"{mode}/{c}")["tps"])


def _gap(v: dict, events: tuple[str, ...]) -> float:
    """The two methods' shares of some events, apart (points)."""
    return abs(sum(v["shares_sampling"].get(e, 0.0) for e in events)
               - sum(v["shares_activity"].get(e, 0.0) for e in events))


def numbers(run: Run) -> dict[str, Number]:
    out: dict[str, Number] = {"fdatasync_us": Number(run.summary["fdatasync_us"], "µs", 0)}
    for mode in MODES:
        peak = _peak(run, mode)
        out[f"{mode}.peak_tps"] = _tps(run, f"{mode}/{peak}")
        out[f"{mode}.peak_clients"] = Number(peak, "", 0)
    hi = _clients(run)[-1]
    normal_hi = _condition(run, f"normal/{hi}")["shares_sampling"]
    out["normal.wal_max_clients"] = _pct(sum(normal_hi.get(e, 0.0) for e in WAL_FLUSH)
                                         if sampled(run.raw) else None)
    out["normal.idle_peak"] = _pct(_cpu(_condition(run, f"normal/{_peak(run, 'normal')}"), "id"))
    out["max_clients"] = Number(hi, "", 0)
    n = run.raw["engine_cpus"]  # None: an existing server's CPU count is not known
    gaps = [_gap(_condition(run, f"{m}/{c}"), events) for m in MODES for c in _clients(run)
            if n is not None and c > n and sampled(run.raw)
            for events in (WAL_FLUSH, (CLIENT_READ,), (TRANSACTIONID,))]
    out["methods.max_gap"] = Number(max(gaps, default=None), "pt", 1)
    one = _condition(run, "normal/1")
    out["one.wal_sync_time"] = _pct(one["wal_sync_time_pct"])
    for method in ("sampling", "activity"):
        out[f"one.walsync_{method}"] = _pct(share_of_time(run.rounds, "normal/1", "IO:WALSync", method))
        out[f"one.clientread_{method}"] = _pct(share_of_time(run.rounds, "normal/1", CLIENT_READ, method))
    at_cpus = run.summary["conditions"].get(f"normal/{n}")
    out["cpus"] = Number(n, "", 0)
    out["normal.tps_1"] = _tps(run, "normal/1")
    out["normal.tps_cpus"] = _tps(run, f"normal/{n}") if at_cpus else Number(None)
    for mode in MODES:
        v = run.summary["conditions"].get(f"{mode}/{n}")
        out[f"{mode}.idle_cpus"] = _pct(v["cpu"]["id"] if v else None)
    others = [v["cpu_others"] for m in MODES if (v := run.summary["conditions"].get(f"{m}/{n}"))]
    out["others_cpus"] = _pct(max(others, default=None))
    out["others_max"] = Number(OTHERS_MAX_PCT, "%", 0)
    own = run.summary["conditions"].get("control/own_cpu")
    out["control.tps"] = _tps(run, "control/own_cpu") if own else Number(None)  # as in the table
    out["one.fsync_ms"] = Number(one["wal_sync_mean_ms"], "ms", 3)
    out["one.poll_ms"] = Number(one["poll_ms"], "ms", 2)
    return out


TABLES = {"throughput": throughput_table, "methods": methods_table, "fsync": fsync_table,
          "controls": controls_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"tps": _per_mode_chart(Text("TPS とクライアント数", "TPS against clients"), "tps",
                                 Text("TPS", "TPS")),
          "latency": _per_mode_chart(Text("平均レイテンシとクライアント数", "Latency against clients"),
                                     "latency_ms", Text("平均レイテンシ [ms]", "latency average [ms]")),
          "cpu": cpu_chart,
          **{f"waits_{m}": _waits_chart(m) for m in MODES}}
