"""What the page shows: pg_test_fsync per method beside 004's Table 5.3, read TPS at
64MB and a shared_buffers that holds the table, update TPS per wal_sync_method, what
Linux says to the Windows-only method, and each Windows-only claim of 004 §5 with the
finding that measures its Linux side."""
from __future__ import annotations

from ...chapter import INTERVAL, Chart, Run, Series, Table
from ...site.scaling import MEASURED_S, ROUNDS, scaling_table
from ...text import Number, Text
from .conditions import BUFFERS, METHODS, ONE_WRITE, SB_UPDATE_CLIENTS, SMALL_BUFFERS, TWO_WRITES, WINDOWS_ONLY_METHOD
from .findings import buffered_update_ratio, buffers_ratio, fsync_measure, method_ratio

CLIENTS = Text("クライアント数", "clients")
NOT_HERE = Text("ここでは該当しません: Windows が要ります", "Not applicable here: needs Windows")
N_A = Text("該当なし (Linux にはない)", "n/a (not on Linux)")
DIRECT_WAL_UNTIL = 16  # before 16, open_* used O_DIRECT when wal_level = minimal (commit d4e71df6d7)


def _size(run: Run, size: str) -> str:
    return SMALL_BUFFERS if size == "small" else run.params["large_buffers"]


def fsync_table(run: Run) -> Table:
    original = run.chapter.original["fsync_one_write"]
    ours = run.summary["fsync"]
    rows = []
    for m in ("open_datasync", "fdatasync", "fsync", WINDOWS_ONLY_METHOD, "open_sync"):
        row = [m, Number(original[m], "", 0) if m in original else "n/a",
               Number(original[m] / original["fsync"], "×", 2) if m in original else None]
        if m not in METHODS:
            rows.append(row + [N_A, None, None, N_A, None])
            continue

        def ratio(section: str, baseline: str) -> Number | None:
            return run.estimate(fsync_measure(section, m, baseline)) if m != baseline else None
        rows.append(row + [Number(ours[ONE_WRITE][m], "", 0), ratio(ONE_WRITE, "fsync"), ratio(ONE_WRITE, "fdatasync"),
                           Number(ours[TWO_WRITES][m], "", 0), ratio(TWO_WRITES, "fdatasync")])
    return Table(Text("pg_test_fsync: 原典の表 5.3 (Windows) と本ビルド (Linux)", "pg_test_fsync: the original's Table 5.3 (Windows) and this build (Linux)"),
                 [Text("wal_sync_method", "wal_sync_method"), Text("原典 8kB 1 回 [ops/s]", "Original one 8kB write [ops/s]"),
                  Text("原典 ÷ fsync", "Original / fsync"),
                  Text("本ビルド 8kB 1 回 [ops/s]", "This build one 8kB write [ops/s]"),
                  Text(f"1 回 ÷ fsync{INTERVAL.ja}", f"one write / fsync{INTERVAL.en}"),
                  Text(f"1 回 ÷ fdatasync{INTERVAL.ja}", f"one write / fdatasync{INTERVAL.en}"),
                  Text("本ビルド 8kB 2 回 [ops/s]", "This build two 8kB writes [ops/s]"),
                  Text(f"2 回 ÷ fdatasync{INTERVAL.ja}", f"two writes / fdatasync{INTERVAL.en}")],
                 rows,
                 Text("ops/s は pg_test_fsync の実行ごとの値の中央値、比は実行ごとの比の幾何平均です。原典の比は fsync に対するもので (原典に fdatasync の値はありません)、"
                      "本ビルドは fsync と Linux の既定の fdatasync の両方に対する比を示します。原典は Windows Server 2016 の内蔵ディスクで、"
                      "本ビルドは wal_sync_method を測るサーバーのデータディレクトリ上のファイルで測りました。",
                      "ops/s is the median over pg_test_fsync runs, a ratio the geometric mean of each run's ratio. The original's ratio is "
                      "over fsync (it has no fdatasync figure); this build's are over fsync and over fdatasync, Linux's default. The original ran on "
                      "Windows Server 2016's internal disk, this build on a file in the wal_sync_method server's data directory."))


def read_table(run: Run) -> Table:
    probes = run.raw["buffer_sources"]["small"]["transactions"]
    rows = [[_size(run, size), Number(run.summary["read_share"][size], "%", 0),
             *[Number(run.summary["read"][size][c], "", 0) for c in run.params["read_clients"]]]
            for size in BUFFERS]
    rows.append([Text(f"{SMALL_BUFFERS} ÷ 大{INTERVAL.ja}", f"{SMALL_BUFFERS} / large{INTERVAL.en}"), None,
                 *[run.estimate(buffers_ratio(c)) for c in run.params["read_clients"]]])
    return Table(Text("参照系の TPS: shared_buffers ごと", "Read TPS by shared_buffers"),
                 [Text("shared_buffers", "shared_buffers"),
                  Text("共有バッファーになかったブロック", "blocks not in shared_buffers"),
                  *[Text(f"{c} クライアント [tps]", f"{c} client{'s' if c > 1 else ''} [tps]")
                    for c in run.params["read_clients"]]],
                 rows,
                 Text(f"TPS は各条件の中央値、比は各ラウンドの比の幾何平均です。テーブルの大きさは {run.raw['table_mb']:.0f} MB です。"
                      f"共有バッファーになかったブロックは、再起動と pg_prewarm (テーブルとインデックス) の直後に参照系のトランザクション {probes} 件を "
                      "EXPLAIN (ANALYZE, BUFFERS) して数えた割合です。",
                      f"TPS is each condition's median, a ratio the geometric mean of each round's ratio. The table is "
                      f"{run.raw['table_mb']:.0f} MB. Blocks not in shared_buffers: the share counted by EXPLAIN (ANALYZE, BUFFERS) "
                      f"of {probes} read transactions right after the restart and pg_prewarm (table and index)."))


def sb_update_table(run: Run) -> Table:
    c = SB_UPDATE_CLIENTS
    return Table(Text(f"更新系の TPS: shared_buffers ごと、{c} クライアント (原典にない計測)",
                      f"Update TPS by shared_buffers, {c} clients (beyond the original)"),
                 [Text("shared_buffers", "shared_buffers"), Text("TPS", "TPS")],
                 [*[[_size(run, size), Number(run.summary["sb_update"][size], "", 0)] for size in BUFFERS],
                  [Text(f"{SMALL_BUFFERS} ÷ 大{INTERVAL.ja}", f"{SMALL_BUFFERS} / large{INTERVAL.en}"),
                   run.estimate(buffered_update_ratio(c))]],
                 Text("参照系と同じ shared_buffers のサーバー・同じテーブル (wal_sync_method は既定の fdatasync) で、参照系の直後に実行します。",
                      "On the shared_buffers server and its table (wal_sync_method at its default, fdatasync), right after the reads."))


def update_table(run: Run) -> Table:
    clients = run.params["update_clients"]
    rows = [[m, *[Number(run.summary["update"][m][c], "", 0) for c in clients],
             *[run.estimate(method_ratio(m, c)) if m != "fdatasync" else None
               for c in clients]] for m in METHODS]
    return Table(Text("更新系の TPS: wal_sync_method ごと", "Update TPS by wal_sync_method"),
                 [Text("wal_sync_method", "wal_sync_method"),
                  *[Text(f"{c} クライアント [tps]", f"{c} client{'s' if c > 1 else ''} [tps]") for c in clients],
                  *[Text(f"{c} クライアント ÷ fdatasync{INTERVAL.ja}", f"{c} client{'s' if c > 1 else ''} / fdatasync{INTERVAL.en}")
                    for c in clients]],
                 rows,
                 Text("TPS は各条件の中央値、比は同じラウンドの fdatasync (Linux の既定) に対する比の、ラウンドにわたる幾何平均です。",
                      "TPS is each condition's median; a ratio is the geometric mean over rounds of the method's TPS over "
                      "fdatasync's (Linux's default) in the same round."))


def linux_table(run: Run) -> Table:
    storage = run.raw["storage"]
    answer = run.raw["fsync_writethrough"]
    direct = run.major < DIRECT_WAL_UNTIL and run.raw["wal_level"] == "minimal"
    rows = [[Text("wal_sync_method の既定値", "wal_sync_method's default"), run.raw["default_method"]],
            [Text("wal_level", "wal_level"), run.raw["wal_level"]],
            [Text("open_datasync・open_sync の WAL に O_DIRECT", "O_DIRECT on the WAL with open_datasync and open_sync"),
             Text("はい", "yes") if direct else Text("いいえ", "no")],
            [Text(f"ALTER SYSTEM SET wal_sync_method = {WINDOWS_ONLY_METHOD}", f"ALTER SYSTEM SET wal_sync_method = {WINDOWS_ONLY_METHOD}"),
             answer["message"] or Text("受理された (エラーなし)", "accepted")],
            [Text("データディレクトリのファイルシステム", "file system of the data directory"), storage[0]],
            [Text("カーネル", "kernel"), storage[1]],
            [Text("pg_test_fsync", "pg_test_fsync"), run.raw["pg_test_fsync_version"]],
            [Text("ブロックデバイスの書き込みキャッシュ", "block devices' write cache"),
             ", ".join(line for line in storage[2:] if line and not line.startswith(("loop", "zram")))]]
    return Table(Text("Linux 側で確かめたこと", "What the Linux side says"),
                 [Text("項目", "Item"), Text("本ビルド", "This build")], rows,
                 Text("書き込みキャッシュは /sys/block/*/queue/write_cache の値です。write back は、ディスクが揮発性のキャッシュを持つと申告し、"
                      "カーネルが fsync などでキャッシュのフラッシュを発行することを意味します。",
                      "The write cache is /sys/block/*/queue/write_cache. \"write back\" means the disk reports a volatile cache, "
                      "so the kernel issues cache flushes on fsync and the like."))


WINDOWS_CLAIMS = [  # 004 §5's Windows results, each with the finding that measures its Linux side
    (Text("参照系: Windows と Linux の傾向と水準", "Read: Windows against Linux, trend and level"),
     Text("同等。CPU が 100% 近くになるまで伸び、その後は横ばい", "The same: grows until the CPUs are near 100 %, then flat"), "F1"),
    (Text("更新系: Windows と Linux", "Update: Windows against Linux"),
     Text("ピーク付近から Windows が低く、ピークを超えると Windows のほうが大きく低下。CPU 使用率は低めで、著者は I/O ボトルネックと推測",
          "Windows below Linux near the peak and falling further past it; CPU use stayed moderate, an I/O bottleneck by the authors' inference"), "—"),
    (Text("Windows の shared_buffers 64MB と約 40GB", "Windows: shared_buffers 64MB against about 40GB"),
     Text("ほぼ同じ。接続数が多いと 64MB がわずかに上", "Nearly the same; at many connections 64MB slightly ahead"), "F2"),
    (Text("Windows の pg_test_fsync (8kB 1 回書き込み)", "Windows: pg_test_fsync, one 8kB write"),
     Text("open_datasync 105,161 ops/s、fsync 5,406、fsync_writethrough 5,289", "open_datasync 105,161 ops/s, fsync 5,406, fsync_writethrough 5,289"), "F4"),
    (Text("Windows の wal_sync_method と更新系 TPS", "Windows: wal_sync_method and update TPS"),
     Text("open_datasync が最も高い (fsync_writethrough、fsync と比べて)", "open_datasync highest (against fsync_writethrough and fsync)"), "F5, F6"),
]


def windows_table(run: Run) -> Table:
    return Table(Text("原典の Windows の結果と、その Linux 側", "The original's Windows results and their Linux side"),
                 [Text("原典の主張", "Original's claim"), Text("原典の結果", "Original's result"),
                  Text("Windows での再現", "Reproduced on Windows"), Text("Linux 側の知見", "Linux-side finding")],
                 [[claim, result, NOT_HERE, findings] for claim, result, findings in WINDOWS_CLAIMS])


def read_chart(run: Run) -> Chart:
    clients = run.params["read_clients"]
    return Chart(Text("参照系の TPS: shared_buffers ごと", "Read TPS by shared_buffers"),
                 [Text(str(c), str(c)) for c in clients],
                 [Series(Text(_size(run, s), _size(run, s)), [run.summary["read"][s][c] for c in clients]) for s in BUFFERS],
                 Text("TPS", "TPS"), CLIENTS, kind="line")


def update_chart(run: Run) -> Chart:
    return Chart(Text("更新系の TPS: wal_sync_method ごと", "Update TPS by wal_sync_method"),
                 [Text(m, m) for m in METHODS],
                 [Series(Text(f"{c} クライアント", f"{c} client{'s' if c > 1 else ''}"),
                         [run.summary["update"][m][c] for m in METHODS]) for c in run.params["update_clients"]],
                 Text("TPS", "TPS"))


def fsync_chart(run: Run) -> Chart:
    original = run.chapter.original["fsync_one_write"]
    methods = ["open_datasync", "fdatasync", "fsync", "open_sync"]
    return Chart(Text("pg_test_fsync: 8kB 1 回書き込み", "pg_test_fsync: one 8kB write"),
                 [Text(m, m) for m in methods],
                 [Series(Text("原典 (Windows)", "original (Windows)"), [original.get(m) for m in methods]),
                  Series(Text("本ビルド (Linux)", "this build (Linux)"), [run.summary["fsync"][ONE_WRITE][m] for m in methods])],
                 Text("ops/s", "ops/s"))


def numbers(run: Run) -> dict[str, Number]:
    return {
        "small_c1": run.estimate(buffers_ratio(1)),
        "table_mb": Number(run.raw["table_mb"], "MB", 0),
        "sb_update": run.estimate(buffered_update_ratio(SB_UPDATE_CLIENTS)),
        "open_datasync_one": run.estimate(fsync_measure(ONE_WRITE, "open_datasync", "fdatasync")),
        "open_datasync_two": run.estimate(fsync_measure(TWO_WRITES, "open_datasync", "fdatasync")),
        "open_datasync_c1": run.estimate(method_ratio("open_datasync", 1)),
        "open_datasync_c8": run.estimate(method_ratio("open_datasync", 8)),
    }


SCALE_ROWS = [("read_scale", Text("参照系の pgbench スケールファクター", "read: pgbench scale factor")),
              ("update_scale", Text("更新系の pgbench スケールファクター", "update: pgbench scale factor")),
              ("large_buffers", Text("大きいほうの shared_buffers", "the large shared_buffers")),
              ("read_clients", Text("参照系のクライアント数", "read clients")),
              ("update_clients", Text("更新系のクライアント数", "update clients")),
              ("seconds", MEASURED_S),
              ("rounds", ROUNDS)]
TABLES = {"windows": windows_table, "fsync": fsync_table, "read": read_table, "sb_update": sb_update_table,
          "update": update_table,
          "linux": linux_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"read": read_chart, "update": update_chart, "fsync": fsync_chart}
