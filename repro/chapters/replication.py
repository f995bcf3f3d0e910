"""Chapter: synchronous and asynchronous streaming replication with 1 to 3 standbys.

Publication 004 (PGECons WG1 2017 report, section 8, PostgreSQL 10.1): a master
and three slaves on KVM guests; pgbench with a one-row UPDATE script, 64
clients, scale 1000, 300 s, the mean of 3 runs; (A) 1-3 standbys, all
synchronous or all asynchronous; (B) 3 standbys, 0-3 of them synchronous.

Here a primary and three standbys run as containers on one private network.
The standbys are made once with pg_basebackup -R; a configuration "connects"
the standbys it needs (setting their primary_conninfo) and "disconnects" the
others (an empty primary_conninfo stops their WAL receiver), and names the
synchronous ones in synchronous_standby_names, both by reloading. So all
configurations run interleaved, round by round, without restarts.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from psycopg import sql

from ..chapter import (Chapter, Chart, Finding, Outcome, RunContext, Series, Table,
                       scaling_table)
from ..errors import ReproError
from ..lab import ContainerServer
from ..measure import median, paired_change, run_rounds, spread
from ..poller import Poller
from ..text import Number, Text
from ..wal import has_walinspect, last_commit_end, lsn

# -- the original publication (004, section 8) --------------------------------------

ORIGINAL_NONE_TPS = 9254.0
ORIGINAL_TPS = {  # Tables 8.8-8.10: TPS (the ratio to no replication is computed from these)
    "async1": 8495.9, "async2": 7786.9, "async3": 7205.3,
    "sync1": 4668.6, "sync2": 4014.4, "sync3": 3686.3,
    "sync1_async2": 4043.6, "sync2_async1": 3822.9,
}
ORIGINAL_SCALE = {"pgbench_scale": 1000, "clients": 64, "seconds": 300, "rounds": 3}

# -- the experiment ----------------------------------------------------------------------

STANDBYS = ("s1", "s2", "s3")
CONFIGS = {  # name -> (standbys connected, how many of them synchronous)
    "none": (0, 0),
    "async1": (1, 0), "async2": (2, 0), "async3": (3, 0),
    "sync1": (1, 1), "sync2": (2, 2), "sync3": (3, 3),
    "sync1_async2": (3, 1), "sync2_async1": (3, 2),
}
COMMON = {  # 004's Tables 8.5 and 8.6, scaled (see the page)
    "shared_buffers": "1GB", "max_wal_size": "8GB", "autovacuum": "off",
}
PRIMARY = {**COMMON, "wal_level": "replica", "synchronous_commit": "on",
           "wal_keep_size": "256MB",  # 004's wal_keep_segments = 16 (x 16 MB), renamed in 13
           "max_wal_senders": "10"}  # 004: 4; three pg_basebackup at once need two each
STANDBY = {**COMMON, "hot_standby": "on",
           "wal_retrieve_retry_interval": "100ms"}  # reconnect at once when connected again
UPDATE_SCRIPT = """\\set naccounts 100000 * :scale
\\set aid random(1, :naccounts)
UPDATE pgbench_accounts
  SET filler = repeat(md5(clock_timestamp()::text),2)
  WHERE aid = :aid;
"""
SCALES = {
    # pgbench_scale: pgbench -i -s; clients: pgbench -c; seconds: one run; rounds: repetitions
    # of every configuration, interleaved (004: 3 runs per pattern, averaged; here the median)
    "tiny": {"pgbench_scale": 10, "clients": 8, "seconds": 3, "rounds": 3},
    "default": {"pgbench_scale": 10, "clients": 8, "seconds": 5, "rounds": 5},
    "full": ORIGINAL_SCALE,
}
CATCH_UP_TIMEOUT_S = 120


class Topology:
    """A primary and its standbys; switches between configurations by reloading."""

    def __init__(self, primary: ContainerServer, standbys: dict[str, ContainerServer]):
        self.primary = primary
        self.standbys = standbys
        self.conninfo = {name: s.sql("SHOW primary_conninfo")[0][0] for name, s in standbys.items()}
        self.exact_commit = has_walinspect(primary)
        if self.exact_commit:
            primary.sql("CREATE EXTENSION pg_walinspect")
        primary.sql("CREATE EXTENSION pg_prewarm")

    def configure(self, connected: int, synchronous: int) -> None:
        """Connect the first `connected` standbys, the first `synchronous` of them synchronous."""
        names = STANDBYS[:synchronous]
        self._reload(self.primary, "synchronous_standby_names",
                     f"{synchronous} ({', '.join(names)})" if synchronous else "")
        for i, (name, standby) in enumerate(self.standbys.items()):
            self._reload(standby, "primary_conninfo", self.conninfo[name] if i < connected else "")
        self.wait_caught_up(STANDBYS[:connected], names)

    @staticmethod
    def _reload(server: ContainerServer, setting: str, value: str) -> None:
        if server.sql(f"SHOW {setting}")[0][0] != value:
            server.sql(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(setting),
                                                                  sql.Literal(value)))
            server.sql("SELECT pg_reload_conf()")

    def replication(self) -> dict[str, dict[str, Any]]:
        """pg_stat_replication on the primary, by application_name."""
        rows = self.primary.sql(
            "SELECT application_name, state, sync_state, write_lsn::text, flush_lsn::text, "
            "replay_lsn::text, extract(epoch FROM replay_lag) FROM pg_stat_replication")
        return {r[0]: {"state": r[1], "sync_state": r[2], "write": lsn(r[3]) if r[3] else 0,
                       "flush": lsn(r[4]) if r[4] else 0, "replay": lsn(r[5]) if r[5] else 0,
                       "replay_lag_s": float(r[6]) if r[6] is not None else None} for r in rows}

    def wait_caught_up(self, connected: tuple[str, ...], synchronous: tuple[str, ...]) -> None:
        """Until exactly `connected` stream, the synchronous ones are "sync", and every one
        has replayed the primary's current WAL: each run starts without a backlog."""
        deadline = time.monotonic() + CATCH_UP_TIMEOUT_S
        while True:
            target = lsn(self.primary.sql("SELECT pg_current_wal_lsn()::text")[0][0])
            seen = self.replication()
            if (set(seen) == set(connected)
                    and all(seen[n]["state"] == "streaming" and seen[n]["replay"] >= target
                            and (seen[n]["sync_state"] == "sync") == (n in synchronous)
                            for n in connected)):
                return
            if time.monotonic() > deadline:
                raise ReproError(f"standbys did not reach the configuration {connected} "
                                 f"(synchronous {synchronous}) within {CATCH_UP_TIMEOUT_S} s: {seen}")
            time.sleep(0.1)

    def checksums(self) -> dict[str, int]:
        """A checksum of pgbench_accounts on every server (standbys caught up first)."""
        query = "SELECT sum(hashtext(aid::text || filler))::bigint FROM pgbench_accounts"
        servers = {"primary": self.primary, **self.standbys}
        return {name: int(s.sql(query)[0][0]) for name, s in servers.items()}


class LagPoller(Poller):
    """How far behind each asynchronous standby's replay is, every 100 ms while pgbench runs.

    Only samples taken while pgbench's clients are connected count, so the last one is the
    lag at the end of the measured window (afterwards the standbys catch up within ms).
    """

    QUERY = ("SELECT application_name, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint, "
             "extract(epoch FROM replay_lag)::float8, "
             "(SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench') "
             "FROM pg_stat_replication WHERE sync_state = 'async'")

    def __init__(self, server: ContainerServer) -> None:
        super().__init__(server, self.QUERY, interval_s=0.1)
        self.last: dict[str, tuple[int, float | None]] = {}
        self.most: dict[str, int] = {}

    def take(self, rows: list[tuple]) -> None:
        for name, behind, lag_s, clients in rows:
            if clients and behind is not None:
                self.last[name] = (int(behind), lag_s)
                self.most[name] = max(self.most.get(name, 0), int(behind))


def _start(ctx: RunContext) -> Topology:
    p = ctx.params
    network = ctx.lab.network()
    primary = ctx.lab.server(PRIMARY, network=network, alias="primary")
    ctx.servers.append(("primary", primary))
    primary.pgbench_init(p["pgbench_scale"])
    ctx.progress.step("three standbys with pg_basebackup -R")
    with ThreadPoolExecutor(len(STANDBYS)) as pool:
        standbys = dict(zip(STANDBYS, pool.map(
            lambda name: ctx.lab.standby(primary, network, name, STANDBY), STANDBYS)))
    ctx.servers += [(f"standby {name}", s) for name, s in standbys.items()]
    return Topology(primary, standbys)


def _measure(topology: Topology, config: str, p: dict[str, Any]) -> Any:
    connected, synchronous = CONFIGS[config]

    def one() -> dict[str, dict[str, Any]]:
        topology.configure(connected, synchronous)
        primary = topology.primary
        # 004's preparation: VACUUM (vacuumdb -a -z), CHECKPOINT, pg_prewarm of the accounts
        primary.sql("VACUUM ANALYZE")
        primary.sql("CHECKPOINT")
        primary.sql("SELECT pg_prewarm('pgbench_accounts')")
        topology.wait_caught_up(STANDBYS[:connected], STANDBYS[:synchronous])
        with LagPoller(primary) as lag:
            r = primary.pgbench(["-n", "-c", str(p["clients"]), "-T", str(p["seconds"]),
                                 "-f", "/tmp/update.sql"], {"update.sql": UPDATE_SCRIPT})
        seen = topology.replication()  # first, before the standbys move on
        commit = last_commit_end(primary, topology.exact_commit)
        standbys = {name: {"sync_state": s["sync_state"],
                           "flush_margin": s["flush"] - commit}  # >= 0: has the last commit
                    for name, s in seen.items()}
        for name, (behind, lag_s) in lag.last.items():
            standbys[name] |= {"lag_end_bytes": behind, "lag_end_s": lag_s,
                               "lag_max_bytes": lag.most[name]}
        return {config: {"tps": r.tps, "latency_ms": r.latency_avg_ms, "standbys": standbys}}
    return one


def run(ctx: RunContext) -> dict[str, Any]:
    p = ctx.params
    ctx.progress.step(f"primary on a private network; pgbench -i -s {p['pgbench_scale']}")
    topology = _start(ctx)
    runs = {config: _measure(topology, config, p) for config in CONFIGS}
    measured = run_rounds(p["rounds"], runs, ctx.progress)
    ctx.progress.step("all standbys caught up; table checksums")
    topology.configure(len(STANDBYS), 0)
    checksums = topology.checksums()
    return {"raw": {"pgbench": measured, "checksums": checksums,
                    "exact_commit_lsn": topology.exact_commit},
            "summary": summarize(measured, checksums, topology.exact_commit)}


def steps(p: dict[str, Any]) -> int:
    return 3 + p["rounds"] * len(CONFIGS)


# -- summary ---------------------------------------------------------------------------


def summarize(measured: dict[str, list[dict]], checksums: dict[str, int], exact: bool
              ) -> dict[str, Any]:
    tps = {c: [m["tps"] for m in ms] for c, ms in measured.items()}
    conditions = {}
    for config, rows in measured.items():
        sync_margins = [s["flush_margin"] for r in rows for s in r["standbys"].values()
                        if s["sync_state"] == "sync"]
        async_end = [s["lag_end_bytes"] for r in rows for s in r["standbys"].values()
                     if "lag_end_bytes" in s]
        async_max = [s["lag_max_bytes"] for r in rows for s in r["standbys"].values()
                     if "lag_max_bytes" in s]
        conditions[config] = {
            "tps": median(tps[config]), "spread_pct": spread(tps[config]),
            "latency_ms": median([m["latency_ms"] for m in rows]),
            # each round's TPS against the same round's run without replication
            "ratio_pct": 100 + paired_change(tps[config], tps["none"]),
            "sync_runs": len(sync_margins), "sync_min_flush_margin": min(sync_margins, default=None),
            "sync_all_flushed": all(m >= 0 for m in sync_margins),
            "async_lag_end_median": median(async_end) if async_end else None,
            "async_lag_max": max(async_max, default=None),
        }
    return {"conditions": conditions, "checksums": checksums, "exact_commit_lsn": exact,
            "checksums_match": len(set(checksums.values())) == 1}


def original_ratio(config: str) -> float:
    return ORIGINAL_TPS[config] / ORIGINAL_NONE_TPS * 100


# -- findings ---------------------------------------------------------------------------------

# Thresholds, set from repeated default-scale runs (see the page and the issue note).
SYNC_ONE_MAX_PCT = 75.0  # one synchronous standby: at most this share of no-replication TPS
SYNC_VS_ASYNC = 0.85  # ... and at most this fraction of one asynchronous standby's TPS
ASYNC_FEW_PCT = 85.0  # "a few percent": one asynchronous standby keeps at least this share
STEP_TOLERANCE_PCT = 5.0  # a step "lowers TPS" unless it gains more than this (points of ratio)


def _ratio(s: dict, config: str) -> float:
    return s["conditions"][config]["ratio_pct"]


def _pct(value: float | None) -> Number:
    return Number(value, "%", 1)


def _measured(s: dict, *configs: str) -> list[tuple[Text, Number]]:
    return [(LABELS[c], _pct(_ratio(s, c))) for c in configs]


def f1(s: dict) -> Outcome:
    sync, async_ = _ratio(s, "sync1"), _ratio(s, "async1")
    return Outcome(sync <= SYNC_ONE_MAX_PCT and sync <= SYNC_VS_ASYNC * async_,
                   _measured(s, "sync1", "async1"),
                   Text(f"同期 1 台 ≤ {SYNC_ONE_MAX_PCT:g} %、かつ非同期 1 台の {SYNC_VS_ASYNC:g} 倍以下 "
                        f"(レプリケーションなしに対する TPS の比)",
                        f"one synchronous standby ≤ {SYNC_ONE_MAX_PCT:g} %, and ≤ {SYNC_VS_ASYNC:g} × one "
                        f"asynchronous standby (TPS as a share of no replication)"))


def _lowers(s: dict, configs: list[str]) -> bool:
    """Each configuration's TPS ratio below the previous one's (within the tolerance), and the
    last clearly below the first."""
    ratios = [_ratio(s, c) for c in configs]
    return (all(b < a + STEP_TOLERANCE_PCT for a, b in zip(ratios, ratios[1:]))
            and ratios[-1] < ratios[0] - STEP_TOLERANCE_PCT)


def f2(s: dict) -> Outcome:
    chains = [["none", "async1", "async2", "async3"], ["sync1", "sync2", "sync3"]]
    return Outcome(all(_lowers(s, chain) for chain in chains),
                   _measured(s, "async1", "async2", "async3", "sync1", "sync2", "sync3"),
                   Text(f"非同期 0→1→2→3 台、同期 1→2→3 台の各段で TPS の比が上がらず (許容 "
                        f"{STEP_TOLERANCE_PCT:g} ポイント)、最後は最初より {STEP_TOLERANCE_PCT:g} ポイント超低い",
                        f"along asynchronous 0→1→2→3 and synchronous 1→2→3 standbys no step raises the TPS "
                        f"ratio (tolerance {STEP_TOLERANCE_PCT:g} points), and the last is more than "
                        f"{STEP_TOLERANCE_PCT:g} points below the first"))


PATTERN_B = ["async3", "sync1_async2", "sync2_async1", "sync3"]


def _f3_misses(s: dict) -> list[Text]:
    """What broke F3 in this run, read from its own ratios (empty when F3 holds)."""
    ratios = {c: _ratio(s, c) for c in PATTERN_B}
    steps = list(zip(PATTERN_B, PATTERN_B[1:]))
    drops = {(a, b): ratios[a] - ratios[b] for a, b in steps}
    misses = [Text(f"{LABELS[a].ja} ({ratios[a]:.1f} %) から {LABELS[b].ja} ({ratios[b]:.1f} %) への上昇",
                   f"the ratio went up from {LABELS[a].en} ({ratios[a]:.1f} %) to {LABELS[b].en} "
                   f"({ratios[b]:.1f} %)")
              for a, b in steps if -drops[a, b] >= STEP_TOLERANCE_PCT]
    first = steps[0]
    misses += [Text(f"{LABELS[a].ja} → {LABELS[b].ja} の低下 ({drops[a, b]:.1f} ポイント) が最初の低下 "
                    f"({drops[first]:.1f} ポイント) 以上であること",
                    f"the drop {LABELS[a].en} → {LABELS[b].en}, {drops[a, b]:.1f} points, is not smaller "
                    f"than the first, {drops[first]:.1f} points")
               for a, b in steps[1:] if drops[a, b] >= drops[first]]
    if ratios[PATTERN_B[-1]] >= ratios[PATTERN_B[0]] - STEP_TOLERANCE_PCT:
        misses.append(Text(f"{LABELS[PATTERN_B[-1]].ja} が {LABELS[PATTERN_B[0]].ja} より "
                           f"{STEP_TOLERANCE_PCT:g} ポイント超低くはないこと",
                           f"{LABELS[PATTERN_B[-1]].en} is not more than {STEP_TOLERANCE_PCT:g} points "
                           f"below {LABELS[PATTERN_B[0]].en}"))
    return misses


def f3(s: dict) -> Outcome:
    misses = _f3_misses(s)
    reason = None
    if misses:
        reason = Text("この実行で外れた点: " + "、".join(m.ja for m in misses) + "。全サーバーが 2 コアを分け合う"
                      "この環境では混在構成が同期 3 台より遅くなることがあり、原因は突き止めていません。",
                      "In this run, " + "; ".join(m.en for m in misses) + ". With all servers sharing 2 "
                      "cores, mixed configurations were at times slower than 3 synchronous; the cause "
                      "was not established.")
    return Outcome(not misses, _measured(s, *PATTERN_B),
                   Text(f"3 台のうち同期を 0→1→2→3 台と増やす各段で TPS の比が上がらず (許容 "
                        f"{STEP_TOLERANCE_PCT:g} ポイント)、0→1 台の低下が他の段の低下より大きい",
                        f"turning 0→1→2→3 of the 3 standbys synchronous, no step raises the TPS ratio "
                        f"(tolerance {STEP_TOLERANCE_PCT:g} points), and the 0→1 drop is larger than "
                        f"any later one"), reason)


def f4(s: dict) -> Outcome:
    async_ = _ratio(s, "async1")
    holds = async_ >= ASYNC_FEW_PCT
    return Outcome(holds, _measured(s, "async1"),
                   Text(f"非同期 1 台 ≥ {ASYNC_FEW_PCT:g} % (原典 {original_ratio('async1'):.1f} %)",
                        f"one asynchronous standby ≥ {ASYNC_FEW_PCT:g} % (original "
                        f"{original_ratio('async1'):.1f} %)"),
                   None if holds else Text("このマシンではスタンバイの WAL の適用と walsender がプライマリと同じ 2 コアを"
                        "使うため、非同期でもプライマリの CPU を奪います。原典のスタンバイは別の仮想マシンでした。",
                        "On this machine the standbys' WAL replay and the walsenders use the same 2 cores "
                        "as the primary, so even asynchronous standbys take CPU from it; the original's "
                        "standbys were separate virtual machines."))


def f5(s: dict) -> Outcome:
    sync = {c: v for c, v in s["conditions"].items() if v["sync_runs"]}
    margin = min(v["sync_min_flush_margin"] for v in sync.values())
    holds = all(v["sync_all_flushed"] for v in sync.values()) and s["checksums_match"]
    return Outcome(holds, [
        (Text("同期スタンバイの flush 位置 − 最後のコミットの終わり (最小)",
              "synchronous standbys' flush position − end of the last commit (lowest)"),
         Number(margin, "B", 0)),
        (Text("検査した (実行 × 同期スタンバイ)", "checked (runs × synchronous standbys)"),
         Number(sum(v["sync_runs"] for v in sync.values()), "", 0)),
        (Text("pgbench_accounts のチェックサムが一致したサーバー", "servers whose pgbench_accounts checksum matches the primary's"),
         Number(sum(v == s["checksums"]["primary"] for v in s["checksums"].values()), "", 0))],
        Text("すべての同期の実行の終わりで、すべての同期スタンバイの flush 位置 ≥ 最後のコミットの終わり、"
             "かつ最後に 4 台のチェックサムが一致",
             "at the end of every synchronous run every synchronous standby's flush position ≥ the end "
             "of the last commit, and at the end the 4 servers' checksums match"))


FINDINGS = [
    Finding("F1", Text("同期レプリケーションは非同期よりはるかに高くつく: 1 台で TPS がおよそ半分になる",
                       "Synchronous replication costs far more than asynchronous: one standby roughly "
                       "halves TPS"), f1),
    Finding("F2", Text("スタンバイを 1 台足すごとに TPS は下がる (非同期でも)",
                       "Each added standby lowers TPS further, asynchronous ones too"), f2),
    Finding("F3", Text("3 台のうち同期にする台数を増やすたびに TPS は下がり、最初の 1 台で大きく落ちる",
                       "With three standbys, each one turned synchronous lowers TPS; the first causes "
                       "the big drop"), f3, expected=False),
    Finding("F4", Text("非同期スタンバイ 1 台のコストは数 % にとどまる",
                       "One asynchronous standby costs only a few percent"), f4, expected=False),
    Finding("F5", Text("同期スタンバイにはコミット済みのデータがすべてある",
                       "A synchronous standby has everything that was committed"), f5),
]

# -- what the page shows -------------------------------------------------------------------

LABELS = {
    "none": Text("レプリケーションなし", "no replication"),
    "async1": Text("非同期 1 台", "1 asynchronous"), "async2": Text("非同期 2 台", "2 asynchronous"),
    "async3": Text("非同期 3 台", "3 asynchronous"),
    "sync1": Text("同期 1 台", "1 synchronous"), "sync2": Text("同期 2 台", "2 synchronous"),
    "sync3": Text("同期 3 台", "3 synchronous"),
    "sync1_async2": Text("同期 1 + 非同期 2", "1 sync + 2 async"),
    "sync2_async1": Text("同期 2 + 非同期 1", "2 sync + 1 async"),
}
COL = {
    "config": Text("構成", "Configuration"),
    "orig_tps": Text("原典 TPS", "Original TPS"), "orig_ratio": Text("原典 比", "Original ratio"),
    "tps": Text("本ビルド TPS", "This build TPS"), "ratio": Text("本ビルド 比", "This build ratio"),
    "spread": Text("本ビルド ばらつき", "This build spread"),
}


def _tps_table(caption: Text, configs: list[str]):
    def build(s: dict) -> Table:
        rows = []
        for c in ["none", *configs]:
            ours = s["conditions"][c]
            original = ORIGINAL_NONE_TPS if c == "none" else ORIGINAL_TPS[c]
            rows.append([LABELS[c], Number(original, "", 1), _pct(original / ORIGINAL_NONE_TPS * 100),
                         Number(ours["tps"], "", 0), _pct(ours["ratio_pct"]), _pct(ours["spread_pct"])])
        return Table(caption, [COL[k] for k in ("config", "orig_tps", "orig_ratio", "tps", "ratio",
                                                "spread")], rows)
    return build


def consistency_table(s: dict) -> Table:
    rows = []
    for c, v in s["conditions"].items():
        if c == "none":
            continue
        end, most = v["async_lag_end_median"], v["async_lag_max"]
        rows.append([LABELS[c], Number(v["sync_runs"], "", 0),
                     Number(v["sync_min_flush_margin"], "B", 0),
                     (Text("はい", "yes") if v["sync_all_flushed"] else Text("いいえ", "no"))
                     if v["sync_runs"] else None,
                     Number(None if end is None else end / 1024, "kB", 1),
                     Number(None if most is None else most / 1024, "kB", 1)])
    return Table(Text("実行の終わりのスタンバイの位置", "Where the standbys were at the end of each run"),
                 [COL["config"], Text("同期スタンバイの検査数", "synchronous standbys checked"),
                  Text("flush − 最後のコミット (最小)", "flush − last commit (lowest)"),
                  Text("すべて flush 済み", "all flushed"),
                  Text("非同期: 区間の終わりの適用の遅れ (中央値)",
                       "asynchronous: replay behind at the window's end (median)"),
                  Text("非同期: 区間中の適用の遅れ (最大)", "asynchronous: replay behind during the window (max)")],
                 rows)


def checksum_table(s: dict) -> Table:
    primary = s["checksums"]["primary"]
    rows = [[name, str(value), Text("一致", "match") if value == primary else Text("不一致", "differs")]
            for name, value in s["checksums"].items()]
    return Table(Text("最後に全スタンバイを追いつかせた後の pgbench_accounts のチェックサム",
                      "pgbench_accounts checksums after all standbys caught up at the end"),
                 [Text("サーバー", "Server"), Text("チェックサム", "Checksum"),
                  Text("プライマリと", "Against the primary")], rows)


def _ratio_chart(title: Text, categories: list[Text], groups: list[tuple[Text, list[str]]]):
    def build(s: dict) -> Chart:
        series = []
        for name, configs in groups:
            series.append(Series(Text(f"{name.ja} (原典)", f"{name.en} (original)"),
                                 [original_ratio(c) for c in configs]))
            series.append(Series(Text(f"{name.ja} (本ビルド)", f"{name.en} (this build)"),
                                 [_ratio(s, c) for c in configs]))
        return Chart(title, categories, series,
                     Text("レプリケーションなしに対する TPS [%]", "TPS against no replication [%]"))
    return build


SCALE_ROWS = [
    ("pgbench_scale", Text("pgbench のスケールファクタ", "pgbench scale factor")),
    ("clients", Text("クライアント数", "clients")),
    ("seconds", Text("1 回の実行時間 [s]", "run length [s]")),
    ("rounds", Text("繰り返し (ラウンド)", "repetitions (rounds)")),
]


def numbers(s: dict) -> dict[str, Number]:
    c = s["conditions"]
    return {"none_tps": Number(c["none"]["tps"], "", 0),
            "original_none_tps": Number(ORIGINAL_NONE_TPS, "", 1),
            "sync1_ratio": _pct(c["sync1"]["ratio_pct"]), "async1_ratio": _pct(c["async1"]["ratio_pct"]),
            "async3_ratio": _pct(c["async3"]["ratio_pct"])}


CHAPTER = Chapter(
    name="replication",
    title=Text("同期・非同期ストリーミングレプリケーションとスタンバイの台数",
               "Synchronous and asynchronous streaming replication with 1 to 3 standbys"),
    source=Path(__file__),
    scales=SCALES,
    run=run,
    findings=FINDINGS,
    steps=steps,
    tables={"pattern_a_sync": _tps_table(Text("検証 A: 同期スタンバイの台数", "Pattern A: synchronous standbys"),
                                         ["sync1", "sync2", "sync3"]),
            "pattern_a_async": _tps_table(Text("検証 A: 非同期スタンバイの台数",
                                               "Pattern A: asynchronous standbys"),
                                          ["async1", "async2", "async3"]),
            "pattern_b": _tps_table(Text("検証 B: 3 台のうち同期の台数", "Pattern B: synchronous among 3 standbys"),
                                    PATTERN_B),
            "consistency": consistency_table, "checksums": checksum_table,
            "scaling": scaling_table(SCALE_ROWS, ORIGINAL_SCALE, SCALES)},
    charts={"pattern_a": _ratio_chart(
                Text("検証 A: スタンバイの台数と TPS", "Pattern A: standbys and TPS"),
                [Text(f"{n} 台", f"{n} standby" + ("s" if n > 1 else "")) for n in (1, 2, 3)],
                [(Text("同期", "synchronous"), ["sync1", "sync2", "sync3"]),
                 (Text("非同期", "asynchronous"), ["async1", "async2", "async3"])]),
            "pattern_b": _ratio_chart(
                Text("検証 B: 3 台のうち同期の台数と TPS", "Pattern B: synchronous among 3 standbys and TPS"),
                [LABELS[c] for c in PATTERN_B], [(Text("3 台", "3 standbys"), PATTERN_B)])},
    numbers=numbers,
)
