"""The benchmarks with their smallest arguments, measuring (tests/conftest.py MEASURING): one
container start, one tiny run of the quickest chapter (partitions: 18 s in CI; auto_explain took
88 s of CI's time for the same proof)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from repro.results import ROOT


def benchmark(name: str, *args: str) -> str:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / name), *args],
                          capture_output=True, text=True, check=True).stdout


def test_start_to_ready_times_one_start() -> None:
    out = benchmark("start_to_ready.py", "1", "17")
    assert re.fullmatch(r"PostgreSQL 17: median \d+\.\d\d s over 1 starts \(min .*, max .*\)\n", out), out


def test_verdict_stability_runs_a_chapter_once(tmp_path: Path) -> None:
    out = benchmark("verdict_stability.py", "partitions", "1", "--scale", "tiny", "--pg", "17",
                    "--out", str(tmp_path))
    assert out.startswith("partitions, PostgreSQL 17, tiny, 1 runs\n"), out
