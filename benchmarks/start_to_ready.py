"""Container start-to-ready time (budget: under 2 s), median of N starts per major.

    .venv/bin/python benchmarks/start_to_ready.py [N] [MAJOR ...]

It holds the engine's run lock while it starts containers, as a chapter's run does: a start
timed beside a measuring run would spoil both.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from repro import majors  # noqa: E402
from repro.errors import ReproError  # noqa: E402
from repro.lab.runlock import engine_lock  # noqa: E402
from repro.lab.servers import Lab  # noqa: E402


def _starts(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"takes a number of starts, 1 or more, not {text!r}")
    return int(text)


def _major(text: str) -> float:
    try:
        return majors.parse(text)
    except ReproError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("n", type=_starts, nargs="?", default=10, help="starts per major (default 10)")
    p.add_argument("majors", type=_major, nargs="*", metavar="MAJOR",
                   help=f"PostgreSQL majors (default {majors.name(majors.DEFAULT_MAJOR)})")
    p.add_argument("--wait", action="store_true", help="wait for a run going on this Docker engine instead of refusing")
    args = p.parse_args(argv)
    try:
        with engine_lock("benchmarks/start_to_ready.py", wait=args.wait):
            for major in args.majors or [majors.DEFAULT_MAJOR]:
                times = []
                with Lab(major) as lab:
                    lab._image()  # resolve the image first: the budget is for the container
                    for _ in range(args.n):
                        t0 = time.monotonic()
                        server = lab.server("start")
                        server.sql("SELECT 1")
                        times.append(time.monotonic() - t0)
                        lab.close()
                print(f"PostgreSQL {majors.name(major)}: median {statistics.median(times):.2f} s over {args.n} "
                      f"starts (min {min(times):.2f}, max {max(times):.2f})")
    except ReproError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
