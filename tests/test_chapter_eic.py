"""eic: every measured run was cold and had the plan it stands for; the parsers of strace's and
/proc/diskstats' output; the scaled cut-off; F3 and F5 on crafted rounds."""
from datetime import datetime

import pytest
from conftest import chapter_result

from repro.chapters.eic.analysis import from_device, mean_kb, per_block
from repro.chapters.eic.conditions import PARALLEL, SERIAL
from repro.chapters.eic.experiment import cutoff, summarize_plan
from repro.chapters.eic.findings import FINDINGS
from repro.lab.pagecache import parse_diskstats
from repro.lab.strace import parse
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_measured_run_was_cold_and_had_its_plan() -> None:
    doc, _ = chapter_result("eic")
    rounds = doc["raw"]["rounds"]
    assert set(rounds) == set(SERIAL) | set(PARALLEL)  # the default major runs parallel scans
    for condition, runs in rounds.items():
        for run in runs:
            assert run["heap_hit"] == 0 and run["heap_read"] > 0, condition  # nothing in shared_buffers
            assert from_device(run) > 0.9, condition  # nor in the page cache: the device read it
            assert run["requests"] > 0, condition
            assert run["parallel"] == condition.startswith("parallel"), condition
            if run["parallel"]:
                assert run["workers"] >= 1
    for condition, trace in doc["raw"]["trace"].items():
        assert trace["heap_hit"] == 0 and trace["heap_blocks"] > 0, condition
        assert trace["read_calls"] > 0, condition  # strace saw the scan's reads
        assert trace["tracer_died"] is False, condition


def test_a_trace_whose_tracer_died_gives_no_count() -> None:
    """Partial counts of a tracer gone before the scan ended are no value (not a low one)."""
    trace = {"willneed_calls": 3, "willneed_bytes": 3 * 8192, "read_calls": 5, "read_bytes": 5 * 8192,
             "heap_blocks": 100}
    assert per_block(trace, "read_calls") == 0.05 and mean_kb(trace, "read") == 8.0
    died = {**trace, "tracer_died": True}
    assert per_block(died, "read_calls") is None and mean_kb(died, "read") is None


def test_the_cutoff_keeps_the_originals_share_of_rows() -> None:
    assert cutoff(5_000_000) == datetime(2019, 2, 1)
    assert cutoff(500_000) == datetime(2019, 1, 4, 2, 24)  # 267,840 rows before it


PATH = "/var/lib/postgresql/data/base/16384/16390"


def test_strace_lines_are_counted_per_file() -> None:
    trace = "\n".join([
        f"123 fadvise64(45<{PATH}>, 871890944, 8192, POSIX_FADV_WILLNEED) = 0",
        f"fadvise64(45<{PATH}.1>, 0, 8192, POSIX_FADV_WILLNEED) = 0",
        f"pread64(45<{PATH}>, \"\"..., 8192, 871890944) = 8192",
        f"[pid   124] preadv(45<{PATH}>, [{{iov_base=\"\"..., iov_len=8192}}], 16, 0) = 131072",
        f"read(45<{PATH}>, \"\"..., 8192) = 8192",
        f"read(45<{PATH}>, \"\"..., 8192) = 0",  # end of file: no bytes, not a read
        "pread64(46</var/lib/postgresql/data/base/16384/2619>, \"\"..., 8192, 0) = 8192",  # another file
        f"fadvise64(45<{PATH}>, 0, 0, POSIX_FADV_DONTNEED) = 0",  # not WILLNEED
    ])
    calls = parse(trace, [PATH, f"{PATH}.1"])
    assert calls.willneed == [8192, 8192]
    assert calls.reads == [8192, 131072, 8192]
    assert calls.calls == {"fadvise64": 3, "pread64": 1, "preadv": 1, "read": 2}


def test_diskstats_counts_whole_devices_and_picks_the_busiest() -> None:
    line = "{major} {minor} {name} {reads} 0 {sectors} 0 0 0 0 0 0 0 0"
    before = parse_diskstats("\n".join([line.format(major=253, minor=0, name="vda", reads=100, sectors=1000),
                                        line.format(major=253, minor=1, name="vda1", reads=100, sectors=1000),
                                        line.format(major=7, minor=0, name="loop0", reads=5, sectors=50),
                                        line.format(major=259, minor=0, name="nvme0n1", reads=1, sectors=8)]))
    after = parse_diskstats("\n".join([line.format(major=253, minor=0, name="vda", reads=110, sectors=3048),
                                       line.format(major=253, minor=1, name="vda1", reads=110, sectors=3048),
                                       line.format(major=7, minor=0, name="loop0", reads=900, sectors=90000),
                                       line.format(major=259, minor=0, name="nvme0n1", reads=2, sectors=16)]))
    assert set(after.devices) == {"vda", "nvme0n1"}
    assert after.since(before) == ("vda", 10, 2048 * 512)
    assert before.since(before) is None


def test_the_plan_summary_finds_the_parallel_heap_scan() -> None:
    scan = {"Node Type": "Bitmap Heap Scan", "Parallel Aware": True, "Shared Read Blocks": 1010,
            "Shared Hit Blocks": 2, "Lossy Heap Blocks": 400, "Exact Heap Blocks": 0,
            "Plans": [{"Node Type": "Bitmap Index Scan", "Shared Read Blocks": 10, "Shared Hit Blocks": 2}]}
    plan = {"Execution Time": 99.0, "Plan": {"Node Type": "Aggregate", "Plans": [
        {"Node Type": "Gather", "Workers Launched": 2, "Plans": [{"Node Type": "Aggregate", "Plans": [scan]}]}]}}
    assert summarize_plan(plan) == {"time_ms": 99.0, "parallel": True, "workers": 2, "heap_read": 1000,
                                    "heap_hit": 0, "lossy": 400, "exact": 0}
    with pytest.raises(ValueError, match="no Bitmap Heap Scan"):
        summarize_plan({"Execution Time": 1.0, "Plan": {"Node Type": "Seq Scan"}})


def _judge(fid: str, times: dict[str, float], kb: dict[str, float]) -> str:
    noise = (1.0, 1.05, 0.95, 1.02, 0.98)
    rounds = {c: [{"round": i, "time_ms": times[c] * f, "request_kb": kb[c] * f} for i, f in enumerate(noise)]
              for c in times}
    return FINDING[fid].judge(Rounds({"rounds": rounds}), Environment(17, 2, frozenset(), {})).status


def test_f3_holds_only_when_eic_1_is_slower() -> None:
    kb = {"eic0": 2048, "eic1": 8}
    assert _judge("F3", {"eic0": 100, "eic1": 500}, kb) == REPRODUCED
    assert _judge("F3", {"eic0": 100, "eic1": 100}, kb) == CONTRADICTED


def test_f5_needs_readahead_and_no_slowdown_in_parallel() -> None:
    times, kb = {"parallel_eic0": 100, "parallel_eic1": 105}, {"parallel_eic0": 2048, "parallel_eic1": 1800}
    assert _judge("F5", times, kb) == REPRODUCED
    assert _judge("F5", times, {**kb, "parallel_eic1": 8}) == CONTRADICTED  # 8 kB requests: no readahead
    assert _judge("F5", {**times, "parallel_eic1": 400}, kb) == CONTRADICTED
