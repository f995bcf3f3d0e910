"""How often each finding is decided, and how, over repeated runs of a chapter: the count to
record before setting a threshold (and the test policy's "decided in 9 of 10 tiny runs").

    .venv/bin/python benchmarks/verdict_stability.py CHAPTER [N] [--scale tiny] [--pg 17] [--stress] [--out DIR]

Each run goes to its own results directory (run00, run01, ...) under DIR (by default one per
chapter, major and scale under _build/stability/); --stress keeps one core busy (stress-ng
--cpu 1) during the runs. Prints a table of verdicts per finding over every run in DIR,
earlier ones too (N 0 tallies them only).
"""
from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repro import registry, results  # noqa: E402
from repro.chapter import Run  # noqa: E402
from repro.cli.options import MAJOR_NAMES  # noqa: E402
from repro.scales import SCALES  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("chapter", choices=sorted(registry.chapters()), metavar="CHAPTER")
    p.add_argument("n", type=int, nargs="?", default=10, help="new runs to make (default 10; 0 tallies only)")
    p.add_argument("--scale", default="tiny", choices=SCALES, help="the scale (default: tiny)")
    p.add_argument("--pg", default="17", choices=MAJOR_NAMES, metavar="MAJOR",
                   help=f"the major, one of {', '.join(MAJOR_NAMES)} (default 17)")
    p.add_argument("--stress", action="store_true", help="keep one core busy during the runs (stress-ng)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the runs' directory (default: under _build/stability/)")
    args = p.parse_args()
    if args.n < 0:
        p.error("n takes a number of runs, 0 or more")
    chapter = registry.get(args.chapter)
    base = args.out or ROOT / "_build" / "stability" / f"{args.chapter}-pg{args.pg}-{args.scale}{'-stress' if args.stress else ''}"
    stress = subprocess.Popen(["stress-ng", "--cpu", "1", "--quiet"]) if args.stress else None
    try:
        for i in range(args.n):
            out = base / f"run{i:02d}"
            subprocess.run([sys.executable, "-m", "repro", "run", args.chapter, "--scale", args.scale,
                                "--pg", args.pg, "--force"], cwd=ROOT, check=True,
                           env={**os.environ, "REPRO_RESULTS": str(out)}, stdout=subprocess.DEVNULL)
    finally:
        if stress:
            stress.terminate()
            stress.wait()
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    runs = sorted(base.glob(f"run*/{args.chapter}/pg{args.pg}-{args.scale}.json"))
    for path in runs:
        run = Run(chapter, results.load(path, args.chapter))
        for v in run.verdicts:
            counts[v.finding.id][v.status] += 1
    print(f"{args.chapter}, PostgreSQL {args.pg}, {args.scale}, {len(runs)} runs"
          f"{', one core busy' if args.stress else ''}")
    for f in chapter.findings:
        c = counts[f.id]
        decided = c["reproduced"] + c["contradicted"]
        print(f"  {f.id}{'' if f.expected else ' (not expected)'}: decided {decided}/{len(runs)}; "
              + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
