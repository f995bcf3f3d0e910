"""What the page shows: the servers of the run and their semaphores, TPS against clients
(read and update, the major under test beside 9.6), the semaphore system calls strace
saw and whose lock they were for, the WALWrite waits, and the control (Debian's 15 source, built twice)."""
from __future__ import annotations

from functools import cache
from typing import Callable

from ...chapter import INTERVAL, Chart, Run, Series, Table
from ...site.scaling import MEASURED_S, ROUNDS, SHARED_BUFFERS, scaling_table
from ...text import Number, Text, clients
from ...verdict import Measure, tps_ratio
from .analysis import error_share, errors_per_call, lock_user_share, semaphore_syscalls, trace_of, wal_write_share
from .conditions import CONTROL, POSIX, READ, REFERENCE, SYSV, THIS, UPDATE, cond
from .findings import FINDINGS, SERVER_NAMES, SYSV_CALLS, WORKLOADS

CLIENTS = Text("クライアント数", "clients")
API = {True: Text("System V (semop)", "System V (semop)"), False: Text("名前なし POSIX (futex)", "unnamed POSIX (futex)")}


def _servers(run: Run) -> list[str]:
    return list(run.raw["versions"])


def _name(run: Run, server: str) -> Text:
    """A server's name with its version: "this major (17.12)", "9.6 (9.6.24)"."""
    name, version = SERVER_NAMES[server], run.raw["versions"][server].split()[0]
    return Text(f"{name.ja} ({version})", f"{name.en} ({version})") if server in (THIS, *CONTROL) else \
        Text(f"9.6 ({version})", f"9.6 ({version})")


@cache
def _ratio(condition: str, baseline: str) -> Measure:
    """TPS of one condition over another's at a client count of the table: the page's own
    (the findings compare at counts the run decides: its CPUs, its most clients)."""
    return tps_ratio(condition, baseline, Text(condition, condition))


def _images(run: Run) -> dict[str, dict]:
    """Each server's image: the run's own from its provenance, the others from what the
    experiment recorded as they started (in the same order as the servers)."""
    own = run.doc["provenance"]["servers"][0]["image"]
    return dict(zip(_servers(run), [own, *[s["image"] for s in run.raw.get("beside", [])]]))


def servers_table(run: Run) -> Table:
    images = _images(run)
    rows = []
    for server in _servers(run):
        sets = run.raw["semaphore_sets"][server]
        image = images.get(server) or {}
        rows.append([_name(run, server), API[sets["sets"] > 0], Number(sets["sets"], "", 0),
                     Number(sets["semaphores"], "", 0), f"{image.get('name', '—')} ({image.get('origin', '—')})"])
    return Table(Text("この実行のサーバー", "The servers of this run"),
                 [Text("サーバー", "Server"), Text("セマフォ", "Semaphores"), Text("System V セマフォセット", "System V semaphore sets"),
                  Text("そのセマフォ数", "their semaphores"), Text("イメージ (由来)", "image (origin)")],
                 rows,
                 Text("4 台は同じマシンで同時に動き、計測は 1 台ずつラウンドごとに順番を変えて行います。セマフォセットは各コンテナーの "
                      "IPC 名前空間で ipcs -s が数えたもので、max_connections = 500 (原典と同じ) から決まります。"
                      "イメージの由来ごとの中身 (pgbench のバージョンなど) は images/README.md にあります。",
                      "The servers run side by side on one machine; one is measured at a time, in an order rotated each round. "
                      "The semaphore sets are what ipcs -s counts in each container's IPC namespace; max_connections = 500 "
                      "(as in the original) sizes them. What each image origin carries (the pgbench version among others) is "
                      "in images/README.md."))


def _curve_rows(run: Run, workload: str) -> list[list]:
    cs = run.params["clients"]
    curves = run.summary["curves"][workload]
    rows = [[WORKLOADS[workload], _name(run, s), *[Number(curves[s][c], "", 0) for c in cs]] for s in curves]
    if REFERENCE in curves and THIS in curves:
        rows.append([WORKLOADS[workload], Text(f"このメジャー ÷ 9.6{INTERVAL.ja}", f"this major / 9.6{INTERVAL.en}"),
                     *[run.estimate(_ratio(cond(workload, THIS, c), cond(workload, REFERENCE, c))) for c in cs]])
    return rows


def curves_table(run: Run) -> Table:
    cs = run.params["clients"]
    return Table(Text("TPS とクライアント数: このメジャーと 9.6", "TPS against clients: this major and 9.6"),
                 [Text("ワークロード", "Workload"), Text("サーバー", "Server"), *[Text(f"{c} [tps]", f"{c} [tps]") for c in cs]],
                 _curve_rows(run, READ) + _curve_rows(run, UPDATE),
                 Text("列はクライアント数 (pgbench -c、スレッドはその半分)。TPS は各条件の中央値、"
                      "比は同じラウンド内の比の、全ラウンドでの幾何平均です。",
                      "Columns are client counts (pgbench -c, half as many threads). TPS is each condition's median, "
                      "a ratio the geometric mean over rounds of the ratio within a round."))


def calls_table(run: Run) -> Table:
    rows = []
    for server in _servers(run):
        made = run.raw["semaphore_calls"][server]
        if trace_of(run.raw, server) is None:
            n = sum(made["calls"].values())
            rows.append([_name(run, server), "—", "—", "—", "—",
                         Text(f"strace がバックエンドを追えなかったため (呼び出しは全部で {n} 回)、数に入れていません。",
                              f"strace did not follow the backends (it saw {n} call{'s' if n != 1 else ''} in all): "
                              f"not counted")])
            continue
        calls = ("futex",) if made["calls"].get("futex") else SYSV_CALLS
        failed = ", ".join(f"{k.split()[1]} {v}" for k, v in sorted(made["errors"].items()))
        others = sorted(((n, u) for u, n in made["lock_users"].items() if u != "XLogFlush"), reverse=True)[:1]
        rows.append([_name(run, server),
                     Number(semaphore_syscalls(run.raw, server, ("futex",)), "", 0),
                     Number(semaphore_syscalls(run.raw, server, SYSV_CALLS), "", 0),
                     f"{errors_per_call(run.raw, server, calls):.1f} % ({failed})" if failed else "0",
                     Number(lock_user_share(run.raw, server, "XLogFlush"), "%", 0),
                     ", ".join(f"{u} {n}" for n, u in others) or "—"])
    return Table(Text(f"strace: 更新系 {run.params['trace_clients']} クライアント {run.params['trace_s']} 秒のセマフォ呼び出し",
                      f"strace: semaphore calls of the update workload, {run.params['trace_clients']} clients for {run.params['trace_s']} s"),
                 [Text("サーバー", "Server"), Text("futex", "futex"), Text("semop/semtimedop", "semop/semtimedop"),
                  Text("失敗 (errno)", "failed (errno)"), Text("XLogFlush のロックのため", "for XLogFlush's lock"),
                  Text("次に多い関数", "next most frequent")],
                 rows,
                 Text("strace -f -k は負荷の接続より前にポストマスターにアタッチし、接続ごとに起動されたバックエンドを追います。"
                      "呼び出しは、スタックに PGSemaphoreLock か PGSemaphoreUnlock があるものを数えます。失敗の割合はそのシステムコールの呼び出しに対するものです。"
                      "「ロックを求めた関数」は、スタックで LWLock 層 (LWLockAcquire、LWLockAcquireOrWait、LWLockRelease など) "
                      "より上にある最初の関数で、「次に多い関数」は XLogFlush の次に多くロックを求めた関数です。"
                      "strace -k はスタックをたどる分だけ呼び出しを遅くするので、この計測の TPS は使いません。",
                      "strace -f -k attaches to the postmaster before the workload connects and follows each backend forked for "
                      "it. A call counts when PGSemaphoreLock or PGSemaphoreUnlock is on its stack. The share failed is of that "
                      "system call's calls. The function that asked for the lock is the first one on the stack above the LWLock "
                      "layer (LWLockAcquire, LWLockAcquireOrWait, LWLockRelease and the like); the next most frequent is the "
                      "function that asked for it most often after XLogFlush. strace -k slows each call by the unwinding, so this run's TPS is not used."))


def waits_table(run: Run) -> Table:
    samples = run.raw.get("wait_samples")
    rows = []
    for c in run.params["sample_clients"]:
        profile = (samples or {}).get(str(c), {})
        top = sorted(((n, e) for e, n in profile.items()), reverse=True)[:4]
        total = sum(profile.values())
        rows.append([clients(c), Number(wal_write_share(run.raw, c), "%", 0),
                     ", ".join(f"{e} {100.0 * n / total:.0f} %" for n, e in top) if total else "—"])
    return Table(Text("更新系の待機イベント (このメジャー)", "Wait events of the update workload (this major)"),
                 [Text("クライアント数", "Clients"), Text("WALWrite 待ち", "waiting on WALWrite"),
                  Text("多い順 (サンプルの割合)", "most frequent (share of samples)")],
                 rows,
                 Text("pg_stat_activity を 10 ms ごとに読み、pgbench のバックエンドの wait_event を数えました (待っていないものは CPU)。"
                      "9.6 は WAL 書き出しのロックを LWLockNamed:WALWriteLock と示します。",
                      "pg_stat_activity read every 10 ms, counting the wait_event of pgbench's backends (CPU when not waiting). "
                      "9.6 shows the WAL write lock as LWLockNamed:WALWriteLock."))


def _source(run: Run) -> str:
    """The control's Debian source package and version, as its images' label says."""
    return (run.raw.get("control_source") or "?").removesuffix(" (Debian source package)")


def control_table(run: Run) -> Table:
    cs = run.params["control_clients"]
    rows = [[_name(run, s), *[Number(run.summary["control"][s][c], "", 0) for c in cs]] for s in CONTROL]
    rows.append([Text(f"POSIX ÷ System V{INTERVAL.ja}", f"POSIX / System V{INTERVAL.en}"),
                 *[run.estimate(_ratio(cond(UPDATE, POSIX, c), cond(UPDATE, SYSV, c))) for c in cs]])
    return Table(Text(f"対照実験: {_source(run)} からの 2 つのビルド、更新系の TPS",
                      f"The control: two builds of {_source(run)}, update TPS"),
                 [Text("ビルド", "Build"), *[Text(f"{c} [tps]", f"{c} [tps]") for c in cs]],
                 rows,
                 Text("同じコンパイラー・同じ configure で、PREFERRED_SEMAPHORES (SYSV か既定の UNNAMED_POSIX) だけが違います。",
                      "Same compiler, same configure; only PREFERRED_SEMAPHORES differs (SYSV, or the default UNNAMED_POSIX)."))


def _curve_chart(workload: str) -> Callable[[Run], Chart]:
    def build(run: Run) -> Chart:
        cs = run.params["clients"]
        curves = run.summary["curves"][workload]
        return Chart(Text(f"{WORKLOADS[workload].ja}の TPS とクライアント数", f"{WORKLOADS[workload].en.capitalize()} TPS against clients"),
                     [Text(str(c), str(c)) for c in cs],
                     [Series(_name(run, s), [curves[s][c] for c in cs]) for s in curves],
                     Text("TPS", "TPS"), CLIENTS, kind="line")
    return build


def control_chart(run: Run) -> Chart:
    cs = run.params["control_clients"]
    return Chart(Text(f"対照実験: {_source(run)} の System V と POSIX のビルド、更新系 TPS",
                      f"The control: {_source(run)} built with System V and with POSIX, update TPS"),
                 [Text(str(c), str(c)) for c in cs],
                 [Series(_name(run, s), [run.summary["control"][s][c] for c in cs]) for s in CONTROL],
                 Text("TPS", "TPS"), CLIENTS)


def _judged(run: Run, fid: str, index: int = 0) -> Number:
    """What a finding's verdict shows for one of its checks: over the runs counted for it when
    the run is shown as part of a pool, else this run's own estimate; "—" where the finding
    is not judged on this major."""
    measure = next(f for f in FINDINGS if f.id == fid).checks[index].measure
    if run.pool is None:
        return run.estimate(measure)
    checks = run.pool.verdict(fid).checks
    return checks[index].number() if len(checks) > index else measure.number(None)


def numbers(run: Run) -> dict[str, Number]:
    sets = run.raw["semaphore_sets"]
    return {
        "sysv_sets": Number(sets[SYSV]["sets"], "", 0),
        "sysv_semaphores": Number(sets[SYSV]["semaphores"], "", 0),
        # from this run's one traced window (the calls table)
        "eagain": Number(error_share(run.raw, THIS, "futex", "EAGAIN"), "%", 0),
        "futex_failed": Number(errors_per_call(run.raw, THIS, ("futex",)), "%", 1),
        "xlogflush": Number(lock_user_share(run.raw, THIS, "XLogFlush"), "%", 0),
        # the same statistics as the verdicts give them (F6's and F7's first checks: this major)
        "futex_failed_judged": _judged(run, "F6"),
        "xlogflush_judged": _judged(run, "F7"),
    }


SCALE_ROWS = [("scale", Text("pgbench のスケールファクター (-F 80)", "pgbench scale factor (-F 80)")),
              ("shared_buffers", SHARED_BUFFERS),
              ("clients", Text("クライアント数 (曲線)", "clients (curves)")),
              ("control_clients", Text("クライアント数 (対照実験)", "clients (control)")),
              ("seconds", MEASURED_S),
              ("trace_clients", Text("strace のクライアント数", "strace: clients")),
              ("trace_s", Text("strace の時間 [s]", "strace: seconds")),
              ("rounds", ROUNDS)]
TABLES = {"servers": servers_table, "curves": curves_table, "calls": calls_table, "waits": waits_table,
          "control": control_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"read": _curve_chart(READ), "update": _curve_chart(UPDATE), "control": control_chart}
