"""The benchmarks import, show their usage, refuse bad input and tally without measuring
(tests/test_benchmarks_run.py measures: one container start, one tiny run)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repro import registry, results
from repro.results import ROOT


def test_verdict_stability_tallies_stored_runs(tmp_path: Path) -> None:
    """N 0 runs nothing: the table covers the runs already in --out, here one stored run."""
    stored = sorted(results.history().glob("auto_explain/pg17-default-*.json"))[-1]
    (tmp_path / "run00" / "auto_explain").mkdir(parents=True)
    shutil.copy(stored, tmp_path / "run00" / "auto_explain" / "pg17-default.json")
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "verdict_stability.py"), "auto_explain", "0",
                          "--scale", "default", "--pg", "17", "--out", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == "auto_explain, PostgreSQL 17, default, 1 runs"
    assert [line.split(":")[0].split()[0] for line in lines[1:]] == [f.id for f in registry.get("auto_explain").findings]
    assert all("decided 1/1" in line or "decided 0/1" in line for line in lines[1:])


@pytest.mark.parametrize("name, bad", [("start_to_ready.py", ["1", "8"]),
                                       ("verdict_stability.py", ["auto_explain", "0", "--pg", "8"])])
def test_benchmarks_show_their_usage_and_refuse_a_bad_major(name: str, bad: list[str]) -> None:
    """`--help` is the usage, and a major we build no image for argparse's one line (exit 2),
    before anything starts."""
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(ROOT / "benchmarks" / name), *args], capture_output=True, text=True)
    shown = run("--help")
    assert shown.returncode == 0 and shown.stdout.startswith(f"usage: {name}"), shown.stderr
    refused = run(*bad)
    line = refused.stderr.splitlines()[-1]
    assert refused.returncode == 2 and line.startswith(f"{name}: error: argument ") and " 8 " in line.replace("'", " "), \
        refused.stderr
